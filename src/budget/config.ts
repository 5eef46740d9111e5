import { ConfigError } from '../errors.js';
import { BUDGET_SETTINGS_SCHEMA, camelName, toBudgetConfig } from './settings.js';
import type { BudgetConfig, BudgetConfigInput } from './budget-types.js';

/** The rate of an `auto` budget until the first answer tells the key's limit (conservative). */
export const AUTO_START_RPM = 60;
/** BullMQ's coarse limiter under `auto`: high enough never to bind (the gate sets the rate). */
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
  autoCeiling: 6000,
  autoRampFactor: 2,
};

/**
 * Validates programmatic budget settings (camelCase) with the same rules as the config file
 * (settings.ts), fills in defaults, and names a bad field as `<where>.<field>` the way it was
 * written: `budget.share: must be between 0 and 1 (got 1.5)`.
 */
export function resolveBudgetConfig(input: BudgetConfigInput = {}, where = 'budget'): BudgetConfig {
  const snakeOf = new Map(Object.keys(BUDGET_SETTINGS_SCHEMA.shape).map((k) => [camelName(k), k]));
  for (const k of Object.keys(input))
    if (!snakeOf.has(k))
      throw new ConfigError(
        `${where}.${k} is not a budget setting (known: ${[...snakeOf.keys()].join(', ')})`,
      );
  // The defaults, then the given values, renamed to the settings' names by the one naming rule
  // (camelName); an absent optional value (accountId) is the settings' null.
  const given = Object.entries(input).filter(([, v]) => v !== undefined);
  const raw: Record<string, unknown> = {};
  for (const [k, v] of [...Object.entries(DEFAULT_BUDGET_CONFIG), ...given]) raw[snakeOf.get(k)!] = v ?? null;
  const r = BUDGET_SETTINGS_SCHEMA.safeParse(raw);
  if (!r.success) {
    const issue = r.error.issues[0];
    const snake = String(issue?.path[0] ?? '');
    const name = camelName(snake);
    throw new ConfigError(
      `${where}.${name}: ${issue?.message ?? 'invalid'} (got ${JSON.stringify(raw[snake])})`,
    );
  }
  return toBudgetConfig(r.data);
}

/**
 * Requests per minute the exporter allows itself, times the configured share, at least 1:
 * - `auto`: the server's X-RateLimit-Limit (`serverLimit`); when its answers carry none
 *   (`serverLimit` 0) the probed rate `autoRate` (auto-rate.ts; AUTO_START_RPM until it ramps);
 *   AUTO_START_RPM before the first answer (`serverLimit` null);
 * - a number: that cap, lowered to the server's limit when that is less.
 * The gate's Lua (scripts.ts, ACQUIRE) applies the same rule.
 */
export function effectiveRate(
  config: Pick<BudgetConfig, 'requestsPerMinute' | 'share'>,
  serverLimit?: number | null,
  autoRate?: number | null,
): number {
  const keyLimit =
    config.requestsPerMinute === 'auto'
      ? serverLimit == null
        ? AUTO_START_RPM
        : serverLimit > 0
          ? serverLimit
          : (autoRate ?? AUTO_START_RPM)
      : serverLimit != null && serverLimit > 0
        ? Math.min(config.requestsPerMinute, serverLimit)
        : config.requestsPerMinute;
  return Math.max(1, Math.floor(keyLimit * config.share + 1e-9));
}
