/**
 * The warehouse dialects `filings-export ddl` writes statements for. A leaf module, so the CLI
 * reads its `--dialect` choices from here without loading the output module (and DuckDB).
 * src/output/readers/ddl.ts has one row per dialect in its tables, checked complete against this list.
 */
export const DDL_DIALECTS = ['duckdb', 'bigquery', 'snowflake', 'spark'] as const;
export type DdlDialect = (typeof DDL_DIALECTS)[number];
