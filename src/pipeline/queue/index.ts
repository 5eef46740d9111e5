/**
 * A snapshot in BullMQ: job names and payloads, deterministic ids, the flow and its enqueueing,
 * its cancelling, the incremental plan of a night, pieces converted while staging, and following a snapshot to its end.
 */
export * from './cancel.js';
export * from './enqueue.js';
export * from './flow.js';
export * from './follow.js';
export * from './ids.js';
export * from './incremental.js';
export * from './job-payloads.js';
export * from './payload.js';
export * from './piece-announcer.js';
export * from './snapshot-request.js';
