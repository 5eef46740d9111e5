/**
 * The budget of one API key: a shared per-key rate gate and quota ledger in Redis, used by every
 * worker process on every machine. It knows requests and responses only (acquire a permit before
 * a request, observe the response's rate-limit headers, release), never jobs or snapshots: the
 * pipeline maps its outcomes onto BullMQ (src/pipeline/part/part-budget.ts). See docs/budget.md.
 */
export type {
  AcquireOutcome,
  AutoRateState,
  BudgetConfig,
  BudgetConfigInput,
  BudgetDescription,
  LimiterOptions,
  Permit,
  Plan,
  PlanInput,
  QuotaSource,
  QuotaUsage,
} from './budget-types.js';
export { WINDOW_MS } from './budget-types.js';
export {
  AUTO_START_RPM,
  DEFAULT_BUDGET_CONFIG,
  UNLIMITED_RPM,
  resolveBudgetConfig,
  effectiveRate,
} from './config.js';
export {
  AUTO_CEILING_EXPIRY_MS,
  rampedRate,
  backedOff,
  rampDurationMs,
  describeAuto,
  fastRampFactor,
} from './auto-rate.js';
export { keyFingerprint } from './fingerprint.js';
export { nextUtcMidnight, nextUtcMonthStart, utcDay, utcMonth } from './time.js';
export { planRequests, assertPlanFits } from './plan.js';
export { createBudget, type Budget, type BudgetOptions, type BoundPermit } from './budget.js';
export {
  BUDGET_SETTINGS_SCHEMA,
  budgetConfigFrom,
  budgetPrefix,
  toBudgetConfig,
  type BudgetSettings,
} from './settings.js';
