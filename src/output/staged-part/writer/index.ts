/**
 * The part writer: stages one part as gzip NDJSON members (and, for pieces converted while
 * staging, their rows uncompressed in files of their own), recording its sidecar at finish.
 */
export {
  createPartWriter,
  localFault,
  maxFreeChunks,
  type Lineage,
  type PartWriterOptions,
} from './part-writer.js';
export { stagingOptionsOf, type StagingPlan } from './options.js';
export { GZIP_SHARE_OF_PLAIN, MAX_WAITING_OUTSIDE_GZIP, MAX_WAITING_PLAIN_FILES } from './plain-pieces.js';
export { createRemotePartWriter } from './bucket-part-writer.js';
