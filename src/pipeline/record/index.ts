/**
 * The pipeline's record of each snapshot in Redis: the company universe a snapshot covers and the
 * companies of it the API did not know, the snapshot store (state, parts, progress, quota waits),
 * progress lines, retention states, the API outage guard every worker shares, whether a worker
 * consumes the parts queue, and `openRecords`
 * (Redis and these records without the queues).
 * Loads neither BullMQ nor DuckDB: `status` reads the records through it.
 */
export * from './missing.js';
export * from './outage.js';
export * from './progress.js';
export * from './records.js';
export * from './retention-states.js';
export * from './snapshot-states.js';
export * from './snapshot-store.js';
export * from './universe.js';
export * from './worker-presence.js';
