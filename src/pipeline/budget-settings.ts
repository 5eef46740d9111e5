/** The budget's settings and Redis prefix from the pipeline's config (no queue, no BullMQ). */
import { toBudgetConfig, type BudgetConfig } from '../budget/index.js';
import type { Config } from '../config/load.js';

/** The budget section of the config in the budget module's terms (validated once, at load). */
export function budgetConfigFrom(config: Config): BudgetConfig {
  return toBudgetConfig(config.budget);
}

/**
 * Redis key prefix of the budget. Per Redis prefix, not per queue: every exporter using the same
 * key against the same Redis shares one budget (the key's fingerprint is part of each budget key).
 */
export function budgetPrefix(config: Config): string {
  return `${config.redis.prefix}:budget`;
}
