/**
 * Staging parts: the gzip NDJSON part writer (and the uncompressed files of its segments), the
 * field kinds and sidecar it records, where staged rows may be cut, the check of staged parts
 * before publishing, and the preflight of an output root. Public outside src/output: loads no DuckDB (the parts worker and `run` use it).
 */
export { type FieldKinds, Kind, kindsToNames, mergeFieldKinds } from './field-kinds.js';
export {
  createPartWriter,
  type Lineage,
  type PartWriter,
  type PartWriterOptions,
  type StagedPart,
  type WrittenPrefix,
} from './part-writer.js';
export {
  GZIP_SHARE_OF_PLAIN,
  MAX_WAITING_PLAIN_FILES,
  plainSegmentPath,
  segmentMetaPath,
  segmentsDir,
} from './plain-segments.js';
export { checkAnyOutputRoot, checkOutputRoot } from './preflight.js';
export {
  DEFAULT_ROW_GROUP_ROWS,
  joinedMembers,
  memberCut,
  rowRanges,
  type SegmentFile,
  segmentRows,
  SKIP_COST,
  usableSegments,
} from './row-cuts.js';
export { type MemberStart, readFieldsSidecar, type SegmentRows } from './sidecar.js';
export { type CheckedPart, checkStagedPart } from './staged-parts.js';
