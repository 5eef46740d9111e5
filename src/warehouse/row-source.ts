/** A snapshot's rows of one dataset as a DuckDB table expression over its local files. */
import { join } from 'node:path';
import type { DatasetName } from '../datasets/index.js';
import { sqlIdent, sqlPathList, sqlString } from '../output/index.js';
import type { Manifest } from '../output/catalog/index.js';
import type { TableColumn } from './table-columns.js';
import type { RowSource } from './warehouse.js';

/** The Parquet files when written (typed as loaded), else the NDJSON read with the manifest's types. */
export function rowSource(
  localRoot: string,
  m: Manifest,
  dataset: DatasetName,
  columns: readonly TableColumn[],
): RowSource {
  const format = m.formats.includes('parquet') ? 'parquet' : 'ndjson';
  const files = m.files
    .filter((f) => f.dataset === dataset && f.format === format)
    .map((f) => join(localRoot, ...f.path.split('/')));
  if (files.length === 0)
    return {
      sql: `(SELECT ${columns.map((c) => `CAST(NULL AS ${c.type}) AS ${sqlIdent(c.name)}`).join(', ')} LIMIT 0)`,
    };
  if (format === 'parquet') return { sql: `read_parquet(${sqlPathList(files)}, union_by_name = true)` };
  const types = `{${columns.map((c) => `${sqlString(c.name)}: '${c.type}'`).join(', ')}}`;
  return {
    sql: `read_ndjson(${sqlPathList(files)}, columns = ${types}, format = 'newline_delimited', compression = 'gzip')`,
  };
}

/** `_requested_ticker IN (…)` (false for an empty list). */
export function tickerIn(tickers: readonly string[]): string {
  return tickers.length === 0 ? 'false' : `_requested_ticker IN (${tickers.map(sqlString).join(', ')})`;
}
