/**
 * A staged part, end to end: the layout of its files (the gzip NDJSON, its sidecar, the pieces'
 * plain and Parquet files), the writer that stages it, its states and every move between them,
 * carrying a part over, and the check before publishing. DuckDB-free, so the parts worker, `run`
 * and the CLI may load it; reading rows [a, b) of parts as Parquet is parquet/ (docs/internals/staged-part.md).
 */
export { type FieldKinds, Kind, kindsToNames, mergeFieldKinds } from './field-kinds.js';
export type {
  PartWriter,
  PieceOutcome,
  PieceRequest,
  PlainPiece,
  StagedPart,
  WrittenPrefix,
} from './types.js';
export {
  createPartWriter,
  createRemotePartWriter,
  type Lineage,
  MAX_WAITING_PLAIN_FILES,
  type PartWriterOptions,
  stagingOptionsOf,
  type StagingPlan,
} from './writer/index.js';
export { fieldsSidecarPath, stagedPartFiles, stagedPartRelPath, tickerFileName } from './layout.js';
export { checkAnyOutputRoot, checkOutputRoot } from './preflight.js';
export { DEFAULT_ROW_GROUP_ROWS, memberCut, rowRanges, rowsPerPiece } from './row-cuts.js';
export { readFieldsSidecar } from './sidecar.js';
export { type CheckedPart, checkStagedPart } from './check-staged.js';
export {
  checkStagedPartMove,
  discardPiece,
  discardStagedPart,
  isStagedPartMove,
  STAGED_PART_MOVES,
  stagedPartStateOf,
  type StagedPartState,
} from './states.js';
export { readyPieces, type ReadyPiece } from './ready-pieces.js';
export {
  carryOverPart,
  checkSourceFiles,
  type CarryOverRequest,
  type CarryOverResult,
} from './carry-over.js';
