/**
 * Retry delays of part jobs: exponential with jitter, capped, and never shorter than a
 * Retry-After the server sent with a 5xx. Registered on the Worker as BullMQ's custom strategy.
 */
import type { BackoffStrategy } from 'bullmq';

/** The `backoff.type` part jobs carry; BullMQ hands it to the worker's custom strategy. */
export const BACKOFF_TYPE = 'fx-exponential-jitter';

export interface BackoffSettings {
  /** Delay before the first retry. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** Share (0..1) of each delay that is randomised, so retries of many parts spread out. */
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
  const delay = Math.round(ceiling * (1 - s.jitter * random()));
  return Math.max(delay, Math.min(retryAfterMs ?? 0, s.maxDelayMs));
}

export function backoffStrategy(s: BackoffSettings, random: () => number = Math.random): BackoffStrategy {
  return (attemptsMade, _type, err) => {
    const retryAfter = (err as { rateLimit?: { retryAfterMs?: number } } | undefined)?.rateLimit
      ?.retryAfterMs;
    return retryDelayMs(s, attemptsMade, retryAfter, random);
  };
}
