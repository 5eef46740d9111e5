/**
 * Staged rows into typed files with DuckDB: the session, the conversion SQL, file sizing, row-range
 * conversion with Parquet concatenation, segments converted while staging, the schema registry.
 */
export { type BuiltFile, finishFile, writeDatasetFiles } from './dataset-writer.js';
export { type ConvertInput, maxLineBytesFor, ndjsonSelect } from './convert-sql.js';
export { concatCompatible, concatParquet, parquetRowGroups, type ConcatInput } from './parquet-concat.js';
export {
  type DuckDbOptions,
  type DuckSession,
  openDuck,
  parquetCodec,
  type ParquetCompression,
  sqlIdent,
  sqlPathList,
  sqlString,
} from './duckdb.js';
export {
  conversionSignature,
  copyStatement,
  listSegments,
  type SegmentFile,
  type SegmentOutcome,
  type SegmentRequest,
} from './early-segments.js';
export { RowsOutsideGzipError } from './convert-file.js';
export { EXACT_DECIMAL_MACROS, valueMismatchCondition } from './exact-decimal-sql.js';
export { readSchemaRegistry, resolveSchema, type SchemaRegistryFile } from './schema-registry.js';
export { convertSegment } from './early-segments.js';
