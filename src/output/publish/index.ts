/**
 * Publishing a snapshot: every dataset's files, the `changes` dataset, the manifest and
 * `_SUCCESS`, and roots on a bucket.
 */
export { CHANGE_KEY, CHANGE_SOURCES } from './changes.js';
export {
  DEFAULT_ROW_GROUP_ROWS,
  DEFAULT_TARGET_FILE_BYTES,
  type PublishOptions,
  publishSnapshot,
  type SnapshotStats,
} from './publish.js';
export { publishToStorage } from './remote-root.js';
