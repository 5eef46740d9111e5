/**
 * Output of filings-export: staged parts, published snapshots (typed Parquet and gzip NDJSON in a
 * dataset-first Hive layout, manifest, `_SUCCESS`), verification and warehouse DDL.
 * docs/output.md is the user-facing description.
 */
export {
  createPartWriter,
  type Lineage,
  type PartWriter,
  type PartWriterOptions,
  type StagedPart,
} from './part-writer.js';
export {
  publishSnapshot,
  DEFAULT_ROW_GROUP_ROWS,
  DEFAULT_TARGET_FILE_BYTES,
  type PublishOptions,
  type SnapshotStats,
} from './publish.js';
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
} from './manifest.js';
export {
  verifySnapshot,
  formatVerifyReport,
  type VerifyReport,
  type VerifyOptions,
  type FileCheck,
} from './verify.js';
export { ddl, DDL_DIALECTS, type DdlDialect, type DdlOptions } from './ddl.js';
export { baseSchema, type ColumnDef, type ColumnType, type DatasetSchema } from '../datasets/index.js';
export { readSchemaRegistry, type SchemaRegistryFile } from './schema-registry.js';
export type { DuckDbOptions } from './duckdb.js';
export {
  listStoredSnapshots,
  latestStoredSnapshot,
  readStoredManifest,
  latestPublishedBefore,
  withLocalSnapshot,
  type StoredSnapshot,
} from './stored-snapshots.js';
export { openStorage, s3Settings } from './storage/open-storage.js';
export { retryRead, isAbsent, type ReadRetryOptions } from './storage/read-retry.js';
export {
  planPrune,
  applyPrune,
  listForPrune,
  formatPrunePlan,
  type PipelineState,
  type PruneAction,
  type PrunePlan,
  type PruneOptions,
} from './retention.js';
export type { Storage, StoredObject } from './storage/storage.js';
