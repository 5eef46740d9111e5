/**
 * What one part (one company, one dataset, one request) goes through: the client fetcher and the
 * ports to the output, the budget and rate limit, API outages, reuse, and the failure policy.
 */
export * from './backoff.js';
export * from './catalog-fingerprint.js';
export * from './client-fetcher.js';
export * from './failure-policy.js';
export * from './hurry-changed.js';
export * from './part-budget.js';
export * from './ports.js';
export * from './reuse-decision.js';
export * from './worker-limits.js';
