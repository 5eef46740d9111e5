import {
  UNLIMITED_RPM,
  WINDOW_MS,
  effectiveRate,
  type BudgetConfig,
  type LimiterOptions,
} from '../../budget/index.js';

/**
 * BullMQ Worker `limiter` for the part queue: at most the configured effective rate of job starts
 * per 60 s, global across all workers of the queue. It is the coarse upper bound; the budget's gate
 * (aligned to the server's window, following X-RateLimit-Limit down) is the exact one. It must be
 * set: without `limiter.max` BullMQ ignores the queue-wide holds (`queue.rateLimit`) the gate uses.
 */
export function limiterFor(config: Pick<BudgetConfig, 'requestsPerMinute' | 'share'>): LimiterOptions {
  // With `auto` the key's limit is learned at run time and the gate enforces it exactly; BullMQ's
  // limiter, fixed when the worker starts, only has to be set (queue-wide holds need it).
  if (config.requestsPerMinute === 'auto') return { max: UNLIMITED_RPM, duration: WINDOW_MS };
  return { max: effectiveRate(config), duration: WINDOW_MS };
}

export interface ConcurrencyInput {
  config: Pick<BudgetConfig, 'requestsPerMinute' | 'share'>;
  /** Typical (p90) duration of one part job: request, streaming the body, writing the part. */
  jobDurationMs: number;
  /** Worker processes sharing the queue. @defaultValue 1 */
  workers?: number;
  /** Factor over the bare minimum, so the window's allowance is sent in its first half. @defaultValue 2 */
  headroom?: number;
}

/**
 * Per-worker concurrency high enough that the limiter, not the workers, sets the pace:
 * rate/60 s × job duration jobs must be in flight to sustain the rate (Little's law), times a
 * headroom, spread over the worker processes; at least 1.
 */
export function concurrencyFor(input: ConcurrencyInput): number {
  const workers = Math.max(1, input.workers ?? 1);
  const headroom = input.headroom ?? 2;
  const inFlight = (effectiveRate(input.config) * Math.max(1, input.jobDurationMs)) / WINDOW_MS;
  return Math.max(1, Math.ceil((inFlight * headroom) / workers));
}
