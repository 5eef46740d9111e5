/**
 * Reads that keep "absent" apart from "could not read". Absent (ENOENT, NoSuchKey, 404) is an
 * answer and passes through at once; any other failure that may pass (a reset, a 5xx, an I/O
 * error) is retried a bounded number of times, and if it persists the read fails with a retryable
 * StorageError that names what was read and keeps the cause. Errors that cannot pass by waiting
 * (an invalid manifest, bad input) are thrown unchanged on the first attempt.
 */
import { coerceError, isRetryable, StorageError } from '../../errors.js';

export interface ReadRetryOptions {
  /** Attempts in all, the first included. @defaultValue 3 */
  attempts?: number;
  /** Wait before each retry in ms; the last one repeats. @defaultValue [250, 1000] */
  delaysMs?: readonly number[];
  /** How to wait; tests inject one that returns at once. @defaultValue a timer */
  sleep?: (ms: number) => Promise<void>;
}

const DEFAULT_ATTEMPTS = 3;
const DEFAULT_DELAYS_MS = [250, 1000] as const;

const timerSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether an error says the thing read does not exist (as opposed to: it could not be read). */
export function isAbsent(err: unknown): boolean {
  if (err instanceof StorageError) return err.code === 'STORAGE_NOT_FOUND';
  const e = err as { code?: unknown; name?: unknown; $metadata?: { httpStatusCode?: number } };
  return (
    e.code === 'ENOENT' ||
    e.code === 'ENOTDIR' ||
    e.name === 'NoSuchKey' ||
    e.name === 'NotFound' ||
    e.$metadata?.httpStatusCode === 404
  );
}

/**
 * Runs `read` until it succeeds, reports absence, or fails in a way waiting cannot fix; a failure
 * that persists through every attempt becomes `STORAGE_UNAVAILABLE` naming `what`, with its cause.
 */
export async function retryRead<T>(
  what: string,
  read: () => Promise<T>,
  opts: ReadRetryOptions = {},
): Promise<T> {
  const attempts = Math.max(1, opts.attempts ?? DEFAULT_ATTEMPTS);
  const delays = opts.delaysMs ?? DEFAULT_DELAYS_MS;
  const sleep = opts.sleep ?? timerSleep;
  for (let attempt = 1; ; attempt++) {
    try {
      return await read();
    } catch (err: unknown) {
      if (isAbsent(err) || !isRetryable(err)) throw err;
      if (attempt >= attempts)
        throw new StorageError(
          'STORAGE_UNAVAILABLE',
          `could not read ${what} (${attempts} attempts): ${coerceError(err).message}`,
          true,
          { cause: err },
        );
      await sleep(delays[Math.min(attempt - 1, delays.length - 1)] ?? 0);
    }
  }
}
