/**
 * The budget's settings, each rule written once: the config file's `budget:` section
 * (src/config/schema.ts uses BUDGET_SETTINGS_SCHEMA) and programmatic input (resolveBudgetConfig)
 * are checked by the same zod validators, so a value is accepted or refused the same way, with a
 * message naming the setting as the user wrote it.
 */
import { z } from 'zod';
import type { BudgetConfig } from './budget-types.js';

const posInt = z.number().int('must be a whole number').positive('must be greater than 0');
const nonNegInt = z.number().int('must be a whole number').min(0, 'must be 0 or more');

/** The settings as the config file spells them. */
export const BUDGET_SETTINGS_SCHEMA = z.strictObject({
  /** `auto` (the key's own X-RateLimit-Limit) or a cap in requests per minute. */
  requests_per_minute: z.union([posInt, z.literal('auto')], {
    error: 'must be "auto" (the key\'s own X-RateLimit-Limit) or a whole number of at least 1',
  }),
  /** Share of the key's per-minute limit this exporter may use (others may share the key). */
  share: z.number().gt(0, 'must be between 0 and 1').max(1, 'must be between 0 and 1'),
  /** Requests per UTC day the exporter may spend; null = only the server's quota applies. */
  daily_quota: nonNegInt.nullable(),
  /** Requests per UTC month (telemetry excluded); null = only the server's quota applies. */
  monthly_quota: nonNegInt.nullable(),
  /** The key's account: configured quotas then count every key of the account. */
  account_id: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,128}$/, 'must be 1-128 characters of A-Z a-z 0-9 . _ -')
    .nullable(),
  /** Cap of a single Retry-After wait. */
  max_retry_after_ms: nonNegInt,
  /** How often one part may be put back after a 429 before it fails. */
  max_rate_limit_requeues: nonNegInt,
  /** Let a snapshot that cannot fit the remaining monthly quota spread over several days. */
  allow_multi_day: z.boolean({ error: 'must be true or false' }),
  /** `even` spreads a window's requests over the window; `burst` sends them as fast as workers allow. */
  pacing: z.enum(['even', 'burst'], { error: 'must be even or burst' }),
  /** Quiet time either side of the server's window reset: under a third of the 60 s window. */
  safety_margin_ms: nonNegInt.max(19_999, 'must be less than 20000 (a third of the 60 s window)'),
  /** `auto` without rate headers: the highest rate the ramp may reach (requests per minute). */
  auto_ceiling: posInt,
  /** `auto` without rate headers: the rate's factor per full minute window without a 429. */
  auto_ramp_factor: z
    .number({ error: 'must be a number greater than 1 and at most 10' })
    .gt(1, 'must be greater than 1 and at most 10')
    .max(10, 'must be greater than 1 and at most 10'),
});

export type BudgetSettings = z.infer<typeof BUDGET_SETTINGS_SCHEMA>;

/** Validated settings in the budget module's terms. */
export function toBudgetConfig(s: BudgetSettings): BudgetConfig {
  return {
    requestsPerMinute: s.requests_per_minute,
    share: s.share,
    dailyQuota: s.daily_quota,
    monthlyQuota: s.monthly_quota,
    accountId: s.account_id ?? undefined,
    maxRetryAfterMs: s.max_retry_after_ms,
    maxRateLimitRequeues: s.max_rate_limit_requeues,
    allowMultiDay: s.allow_multi_day,
    pacing: s.pacing,
    safetyMarginMs: s.safety_margin_ms,
    autoCeiling: s.auto_ceiling,
    autoRampFactor: s.auto_ramp_factor,
  };
}

/** camelCase name of a setting (`requests_per_minute` → `requestsPerMinute`). */
/** The budget section of a loaded config (validated once, at load) in the budget's own terms. */
export function budgetConfigFrom(config: { budget: BudgetSettings }): BudgetConfig {
  return toBudgetConfig(config.budget);
}

/**
 * Redis key prefix of the budget. Per Redis prefix, not per queue: every exporter using the same
 * key against the same Redis shares one budget (the key's fingerprint is part of each budget key).
 */
export function budgetPrefix(config: { redis: { prefix: string } }): string {
  return `${config.redis.prefix}:budget`;
}

export function camelName(snake: string): string {
  return snake.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase());
}

/** `camelName` at the type level. */
type CamelName<S extends string> = S extends `${infer Head}_${infer Tail}`
  ? `${Head}${Capitalize<CamelName<Tail>>}`
  : S;
type SettingName = CamelName<keyof BudgetSettings & string>;
/** Settings without a BudgetConfig field of their camelCase name, and fields without a setting. */
type Unpaired = Exclude<SettingName, keyof BudgetConfig> | Exclude<keyof BudgetConfig, SettingName>;
// Fails to compile, naming the setting or field, when the file's settings and BudgetConfig differ.
const settingsPairWithConfig: [Unpaired] extends [never] ? true : Unpaired = true;
void settingsPairWithConfig;
