/**
 * Apache Iceberg tables (format v2, file-system layout) over the published snapshots: one table per
 * dataset at `<root>/<dataset>/`, metadata in its `metadata/` folder, one Iceberg snapshot per
 * published snapshot. Writes metadata only, through the storage port; loads no DuckDB.
 */
export { commitPublished, type SnapshotCommit } from './catch-up.js';
export { commitProblems } from './check.js';
export { commitSnapshot, snapshotOf, type TableCommit } from './commit.js';
export { expireBeforePrune, expireSnapshots, type TableExpiry } from './expire.js';
export {
  METADATA_DIR,
  PREVIOUS_VERSIONS_MAX,
  readTable,
  SUMMARY_SNAPSHOT_DATE,
  SUMMARY_SNAPSHOT_ID,
  type TableMetadata,
  type TableVersion,
  VERSION_HINT,
  versionFile,
} from './metadata.js';
export { formatRebuild, rebuildTables, type RebuildReport } from './rebuild.js';
export { columnFieldIds, schemaFor, type ColumnFieldId, type IcebergSchema } from './schema.js';
export { MANIFEST_ENTRY_SCHEMA, MANIFEST_FILE_SCHEMA, decodeAvro } from './avro.js';
