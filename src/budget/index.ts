/**
 * The budget: one shared per-key rate budget and quota ledger in Redis, used by every worker
 * process on every machine. See docs/budget.md for the design and how the pipeline calls it.
 *
 * Call pattern of a part job processor (one child job = one API request):
 *
 *   const budget = createBudget({ redis, config, apiKey, clock, logger });   // once per process
 *   const worker = new Worker(queue, processor, { limiter: limiterFor(config), concurrency: concurrencyFor({...}) });
 *   // in the processor (job, token):
 *   return withBudget(budget, { job, token, rateLimiter: worker, operation, snapshotId }, async (permit) => {
 *     const res = await client.stream(operation, body, { signal });
 *     await permit.observe(res.rateLimit);       // as soon as the headers are in
 *     ... stream rows to the writer ...
 *     return pointer;
 *   });
 *
 * withBudget throws BullMQ's RateLimitError (window full, per-minute 429: job back to wait, no
 * attempt spent), DelayedError (quota spent: job delayed until the reset, no attempt spent),
 * UnrecoverableError (too many 429 requeues) or the send function's own error, unchanged.
 */
export type {
  AcquireOutcome,
  BudgetConfig,
  BudgetConfigInput,
  BudgetDescription,
  LimiterOptions,
  Permit,
  Plan,
  PlanInput,
  QuotaSource,
  QuotaUsage,
  SnapshotWait,
} from './types.js';
export { WINDOW_MS } from './types.js';
export { DEFAULT_BUDGET_CONFIG, resolveBudgetConfig, effectiveRate } from './config.js';
export { keyFingerprint } from './fingerprint.js';
export { nextUtcMidnight, nextUtcMonthStart, utcDay, utcMonth } from './time.js';
export { limiterFor, concurrencyFor, type ConcurrencyInput } from './limiter.js';
export { planSnapshot, assertPlanFits } from './plan.js';
export { createBudget, type Budget, type BudgetOptions, type BoundPermit } from './budget.js';
export {
  withBudget,
  putBack,
  MAX_PACE_SLEEP_MS,
  type PartJobContext,
  type PartJobLike,
  type RateLimiterLike,
} from './bullmq.js';
