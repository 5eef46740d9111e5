/**
 * Readers of published snapshots: verify, warehouse DDL (its dialect list is the leaf
 * ddl-dialects.ts, which the CLI reads without DuckDB) and retention (prune).
 */
export { ddl, DDL_DIALECTS, type DdlDialect, type DdlOptions, mergeChangesSql } from './ddl.js';
export {
  applyPrune,
  formatPrunePlan,
  listForPrune,
  type PipelineState,
  planPrune,
  type PruneAction,
  type PruneOptions,
  type PrunePlan,
} from './retention.js';
export {
  type FileCheck,
  formatVerifyReport,
  type VerifyOptions,
  type VerifyReport,
  verifySnapshot,
} from './verify.js';
export { duckdbIcebergScan, icebergDdl, type IcebergDdlOptions } from './iceberg-ddl.js';
