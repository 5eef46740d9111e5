/**
 * Retry delays of part jobs: exponential, capped, spread around the nominal delay by the jitter,
 * and never shorter than a Retry-After the server sent with a 5xx. Registered on the Worker as
 * BullMQ's custom strategy. The spread is symmetric ("equal jitter" around the delay): retries of
 * many parts that failed together land across [d·(1−j), d·(1+j)] instead of all before d, so a
 * burst of failures does not come back as a burst, and the attempts of a part last as long as the
 * nominal schedule on average. (Only shortening delays, as before, made five attempts end 15–30 s
 * after the first.) API outages are not retried at all: the queue holds (src/pipeline/record/outage.ts).
 */
import type { BackoffStrategy } from 'bullmq';

/** The `backoff.type` part jobs carry; BullMQ hands it to the worker's custom strategy. */
export const BACKOFF_TYPE = 'fx-exponential-jitter';

export interface BackoffSettings {
  /** Delay before the first retry. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** Half-width (0..1) of the spread around each delay: j = 0.5 puts it in [0.5 d, 1.5 d]. */
  jitter: number;
}

/** Delay before retry number `attemptsMade` (1 = first retry). */
export function retryDelayMs(
  s: BackoffSettings,
  attemptsMade: number,
  retryAfterMs?: number,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(s.maxDelayMs, s.baseDelayMs * 2 ** Math.max(0, attemptsMade - 1));
  const delay = Math.round(ceiling * (1 + s.jitter * (2 * random() - 1)));
  return Math.max(delay, Math.min(retryAfterMs ?? 0, s.maxDelayMs));
}

export function backoffStrategy(s: BackoffSettings, random: () => number = Math.random): BackoffStrategy {
  return (attemptsMade, _type, err) => {
    const retryAfter = (err as { rateLimit?: { retryAfterMs?: number } } | undefined)?.rateLimit
      ?.retryAfterMs;
    return retryDelayMs(s, attemptsMade, retryAfter, random);
  };
}
