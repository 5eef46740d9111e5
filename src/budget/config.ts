import { ConfigError } from '../errors.js';
import type { BudgetConfig, BudgetConfigInput } from './budget-types.js';

/** The rate of an `auto` budget until the first answer tells the key's limit (conservative). */
export const AUTO_START_RPM = 60;
/** The rate of a key whose successful answers carry no X-RateLimit-Limit: no per-minute limit. */
export const UNLIMITED_RPM = 1_000_000;

export const DEFAULT_BUDGET_CONFIG: BudgetConfig = {
  requestsPerMinute: 'auto',
  share: 1,
  dailyQuota: null,
  monthlyQuota: null,
  accountId: undefined,
  maxRetryAfterMs: 120_000,
  maxRateLimitRequeues: 10,
  allowMultiDay: false,
  pacing: 'even',
  safetyMarginMs: 1000,
};

/**
 * Validates raw budget settings and fills in defaults. Errors name the field as `<where>.<field>`
 * (for example `budget.share must be > 0 and <= 1, got 1.5`).
 */
export function resolveBudgetConfig(input: BudgetConfigInput = {}, where = 'budget'): BudgetConfig {
  const raw: Record<string, unknown> = { ...input };
  const known = new Set(Object.keys(DEFAULT_BUDGET_CONFIG));
  for (const k of Object.keys(raw)) {
    if (!known.has(k))
      throw new ConfigError(`${where}.${k} is not a budget setting (known: ${[...known].join(', ')})`);
  }
  const cfg: BudgetConfig = { ...DEFAULT_BUDGET_CONFIG };
  const int = (k: keyof BudgetConfig, min: number): number | undefined => {
    const v = raw[k];
    if (v === undefined) return undefined;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min) {
      throw new ConfigError(`${where}.${k} must be an integer >= ${min}, got ${JSON.stringify(v)}`);
    }
    return v;
  };
  cfg.requestsPerMinute =
    raw.requestsPerMinute === 'auto' ? 'auto' : (int('requestsPerMinute', 1) ?? cfg.requestsPerMinute);
  cfg.maxRetryAfterMs = int('maxRetryAfterMs', 0) ?? cfg.maxRetryAfterMs;
  cfg.maxRateLimitRequeues = int('maxRateLimitRequeues', 0) ?? cfg.maxRateLimitRequeues;
  cfg.safetyMarginMs = int('safetyMarginMs', 0) ?? cfg.safetyMarginMs;
  for (const k of ['dailyQuota', 'monthlyQuota'] as const) {
    if (raw[k] === null) cfg[k] = null;
    else cfg[k] = int(k, 0) ?? cfg[k];
  }
  if (raw.share !== undefined) {
    const s = raw.share;
    if (typeof s !== 'number' || !Number.isFinite(s) || s <= 0 || s > 1) {
      throw new ConfigError(`${where}.share must be > 0 and <= 1, got ${JSON.stringify(s)}`);
    }
    cfg.share = s;
  }
  if (raw.allowMultiDay !== undefined) {
    if (typeof raw.allowMultiDay !== 'boolean') {
      throw new ConfigError(
        `${where}.allowMultiDay must be true or false, got ${JSON.stringify(raw.allowMultiDay)}`,
      );
    }
    cfg.allowMultiDay = raw.allowMultiDay;
  }
  if (raw.pacing !== undefined) {
    if (raw.pacing !== 'even' && raw.pacing !== 'burst') {
      throw new ConfigError(`${where}.pacing must be "even" or "burst", got ${JSON.stringify(raw.pacing)}`);
    }
    cfg.pacing = raw.pacing;
  }
  if (raw.accountId !== undefined) {
    const a = raw.accountId;
    if (typeof a !== 'string' || !/^[A-Za-z0-9._-]{1,128}$/.test(a)) {
      throw new ConfigError(
        `${where}.accountId must be 1-128 characters of [A-Za-z0-9._-], got ${JSON.stringify(a)}`,
      );
    }
    cfg.accountId = a;
  }
  if (cfg.safetyMarginMs >= 20_000) {
    throw new ConfigError(
      `${where}.safetyMarginMs must be < 20000 (a third of the 60 s window), got ${cfg.safetyMarginMs}`,
    );
  }
  return cfg;
}

/**
 * Requests per minute the exporter allows itself, times the configured share, at least 1:
 * - `auto`: the server's X-RateLimit-Limit (`serverLimit`), UNLIMITED_RPM when its answers carry
 *   none (`serverLimit` 0), AUTO_START_RPM before the first answer (`serverLimit` null);
 * - a number: that cap, lowered to the server's limit when that is less.
 * The gate's Lua (scripts.ts, ACQUIRE) applies the same rule.
 */
export function effectiveRate(
  config: Pick<BudgetConfig, 'requestsPerMinute' | 'share'>,
  serverLimit?: number | null,
): number {
  const server = serverLimit == null ? null : serverLimit > 0 ? serverLimit : UNLIMITED_RPM;
  const keyLimit =
    config.requestsPerMinute === 'auto'
      ? (server ?? AUTO_START_RPM)
      : server !== null && server > 0
        ? Math.min(config.requestsPerMinute, server)
        : config.requestsPerMinute;
  return Math.max(1, Math.floor(keyLimit * config.share + 1e-9));
}
