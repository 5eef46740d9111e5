/**
 * The `--rate-limit`, `--daily-quota` and `--monthly-quota` overrides. One meaning everywhere:
 * `undefined` = as in the keys file, `null` = no limit (no X-RateLimit-* headers for a rate limit,
 * never a 429 for it), a whole number ≥ 0 = that limit (0 refuses every request, as in the file).
 * Anything else (NaN, '', -3, 1.5, 'abc') is refused with a message naming the option, never read
 * as a limit: an empty string once slipped through and limited every key to nothing.
 */
import { EmulatorConfigError } from '../errors.js';

/** Overrides of the keys file, applied to every key (and every account for quotas). */
export interface LimitOverrides {
  /** Per-minute limit of every key; null = none. undefined = as in the keys file. */
  rateLimitPerMinute?: number | null;
  /** Daily quota of every account and key; null = none. undefined = as in the keys file. */
  dailyQuota?: number | null;
  /** Monthly quota of every account and key; null = none. undefined = as in the keys file. */
  monthlyQuota?: number | null;
}

function isLimit(v: unknown): v is number | null | undefined {
  return v === undefined || v === null || (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0);
}

/** Throws a EmulatorConfigError naming the first override that is not undefined, null or a whole number ≥ 0. */
export function checkLimitOverrides(o: LimitOverrides): void {
  for (const name of ['rateLimitPerMinute', 'dailyQuota', 'monthlyQuota'] as const) {
    const v: unknown = o[name];
    if (!isLimit(v)) {
      throw new EmulatorConfigError(
        `${name} must be a whole number >= 0, or null for no limit (got ${JSON.stringify(v) ?? String(v)})`,
      );
    }
  }
}
