/**
 * Publishing a snapshot: every dataset's files, the `changes` dataset, the manifest and
 * `_SUCCESS`, parts carried over from an earlier snapshot, and roots on a bucket.
 */
export { type CarryOverRequest, type CarryOverResult } from './carry-over.js';
export { CHANGE_KEY, CHANGE_SOURCES } from './changes.js';
export {
  DEFAULT_ROW_GROUP_ROWS,
  DEFAULT_TARGET_FILE_BYTES,
  type PublishOptions,
  publishSnapshot,
  type SnapshotStats,
} from './publish.js';
export { carryOverPart } from './carry-over.js';
export { createRemotePartWriter, publishToStorage } from './remote-root.js';
