/**
 * Output of filings-export: staged parts (src/output/staged-part), published snapshots (typed Parquet and gzip NDJSON in a
 * dataset-first Hive layout, manifest, `_SUCCESS`), verification and warehouse DDL.
 * docs/output.md is the user-facing description.
 */
export {
  carryOverPart,
  checkSourceFiles,
  createPartWriter,
  createRemotePartWriter,
  type CarryOverRequest,
  type CarryOverResult,
  type Lineage,
  type PartWriter,
  type PartWriterOptions,
  type PieceOutcome,
  type PieceRequest,
  type StagedPart,
} from './staged-part/index.js';
export { convertPiece, type PieceSettings } from './staged-part/parquet/index.js';
export {
  publishSnapshot,
  DEFAULT_ROW_GROUP_ROWS,
  DEFAULT_TARGET_FILE_BYTES,
  type PublishOptions,
  type SnapshotStats,
} from './publish/index.js';
export {
  readManifest,
  listSnapshots,
  latestPublishedSnapshot,
  isPublished,
  MANIFEST_VERSION,
  type Manifest,
  type ManifestDataset,
  type ManifestFile,
  type ManifestPart,
  type SnapshotInfo,
  listStoredSnapshots,
  latestStoredSnapshot,
  readStoredManifest,
  newestPublishedOtherThan,
  withLocalSnapshot,
  type StoredSnapshot,
} from './catalog/index.js';
export {
  verifySnapshot,
  formatVerifyReport,
  type VerifyReport,
  type VerifyOptions,
  type FileCheck,
  ddl,
  DDL_DIALECTS,
  type DdlDialect,
  type DdlOptions,
  planPrune,
  applyPrune,
  listForPrune,
  formatPrunePlan,
  type PipelineState,
  type PruneAction,
  type PrunePlan,
  type PruneOptions,
} from './readers/index.js';
export { baseSchema, type ColumnDef, type ColumnType, type DatasetSchema } from '../datasets/index.js';
export { readSchemaRegistry, type SchemaRegistryFile, type DuckDbOptions } from './convert/index.js';
export {
  openStorage,
  s3Settings,
  retryRead,
  isAbsent,
  type ReadRetryOptions,
  type Storage,
  type StoredObject,
} from './storage/index.js';
export { CHANGE_SOURCES, publishToStorage } from './publish/index.js';
export { openDuck, sqlIdent, sqlPathList, sqlString, type DuckSession } from './convert/index.js';
export { duckdbIcebergScan, icebergDdl, mergeChangesSql, type IcebergDdlOptions } from './readers/index.js';
export {
  commitPublished,
  commitSnapshot,
  expireSnapshots,
  rebuildTables,
  formatRebuild,
  type SnapshotCommit,
  type TableCommit,
  type TableExpiry,
  type RebuildReport,
} from './iceberg/index.js';
