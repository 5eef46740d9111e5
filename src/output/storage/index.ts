/**
 * The output's storage port (a local directory or an S3-compatible bucket), reads that keep "absent"
 * apart from "could not read", and durable local file operations. Public outside src/output: no DuckDB.
 */
export { checkStorage } from './check-storage.js';
export {
  appendRanges,
  concatFiles,
  copyRanges,
  fsyncDir,
  fsyncFile,
  gunzippedText,
  gzipAsOneMember,
  hashFile,
  removeTempDir,
  type RemoveTempDirOptions,
  writeFileAtomic,
} from './fs-util.js';
export { LocalStorage } from './local-storage.js';
export { openStorage, s3Settings } from './open-storage.js';
export { isAbsent, type ReadRetryOptions, retryRead } from './read-retry.js';
export { type S3Settings } from './s3-storage.js';
export { isS3Root } from './s3-url.js';
export { joinKey, type Storage, type StoredObject } from './storage.js';
export { PART_SIZE, QUEUE_SIZE } from './s3-storage.js';
