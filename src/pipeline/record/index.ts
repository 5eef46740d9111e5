/**
 * The pipeline's record of each snapshot in Redis: the company universe a snapshot covers, the
 * snapshot store (state, parts, progress, quota waits), progress lines and retention states.
 */
export * from './progress.js';
export * from './retention-states.js';
export * from './snapshot-store.js';
export * from './universe.js';
