/**
 * DuckDB for typed files: the session, the conversion SQL of staged rows, Parquet concatenation,
 * built files and the schema registry. What converts a staged part's rows is src/output/staged-part/parquet.
 */
export {
  convertSelect,
  type ConvertInput,
  type ConvertMode,
  type ConvertSource,
  maxLineBytesFor,
  ndjsonSelect,
} from './convert-sql.js';
export { concatCompatible, concatParquet, parquetRowGroups, type ConcatInput } from './parquet-concat.js';
export {
  type DuckDbOptions,
  type DuckSession,
  openDuck,
  parquetCodec,
  parquetFieldIds,
  type ParquetCompression,
  sqlIdent,
  sqlPathList,
  sqlString,
} from './duckdb.js';
export { EXACT_DECIMAL_MACROS, valueMismatchCondition } from './exact-decimal-sql.js';
export {
  extraFieldNames,
  readSchemaRegistry,
  resolveSchema,
  type SchemaRegistryFile,
} from './schema-registry.js';
export { type BuiltFile, finishFile } from './built-file.js';
