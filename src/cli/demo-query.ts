/**
 * The demo's proof that the snapshot is usable: a DuckDB query, Apple's annual revenue by fiscal
 * year (10-K, full-year duration, consolidated), over the `facts_full` table `load` keeps in a
 * DuckDB database file, or over the published Parquet files themselves.
 */
import { join } from 'node:path';

export const DEMO_METRIC = 'us-gaap#RevenueFromContractWithCustomerExcludingAssessedTax';

/** The SQL, with the snapshot's facts_full Parquet files as the source. */
export function annualRevenueSql(outDir: string, snapshotId: string, ticker = 'AAPL'): string {
  const parts = ['facts_full', 'snapshot_date=*', `snapshot_id=${snapshotId}`, '*.parquet'];
  // path.join would fold an s3:// root's double slash; a URL is joined with `/`.
  const glob = (
    /^s3:\/\//i.test(outDir) ? [outDir.replace(/\/+$/, ''), ...parts].join('/') : join(outDir, ...parts)
  ).replaceAll("'", "''");
  return revenueSql(`read_parquet('${glob}')`, ticker);
}

/** The SQL over a loaded table (`facts_full` of a database `filings-export load` fills). */
export function annualRevenueTableSql(table = 'facts_full', ticker = 'AAPL'): string {
  return revenueSql(table, ticker);
}

function revenueSql(from: string, ticker: string): string {
  // One row per fiscal year; should a period come from several filings, the latest filing wins.
  return `SELECT year(period_end) AS fiscal_year,
       CAST(period_start AS VARCHAR) || '..' || CAST(period_end AS VARCHAR) AS period,
       arg_max(value_num, source_filed_at) AS revenue_usd,
       arg_max(source_accession, source_filed_at) AS source_accession
FROM ${from}
WHERE _requested_ticker = '${ticker}'
  AND metric_id = '${DEMO_METRIC}'
  AND source_form_type = '10-K'
  AND period_kind = 'duration'
  AND is_consolidated
  AND date_diff('day', period_start, period_end) BETWEEN 350 AND 380
GROUP BY period_start, period_end
ORDER BY period_end`;
}

export interface RevenueRow {
  fiscal_year: number;
  period: string;
  revenue_usd: string;
  source_accession: string;
}

export async function queryAnnualRevenue(
  outDir: string,
  snapshotId: string,
  ticker = 'AAPL',
): Promise<RevenueRow[]> {
  return runRevenueQuery(':memory:', annualRevenueSql(outDir, snapshotId, ticker));
}

/** The query over the `facts_full` table of a DuckDB database file (opened read-only). */
export async function queryAnnualRevenueTable(databasePath: string, ticker = 'AAPL'): Promise<RevenueRow[]> {
  return runRevenueQuery(databasePath, annualRevenueTableSql('facts_full', ticker));
}

async function runRevenueQuery(database: string, sql: string): Promise<RevenueRow[]> {
  // Loaded here, not at the top: DuckDB maps ~50 MB of native code, which only the demo needs.
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const instance = await DuckDBInstance.create(
    database,
    database === ':memory:' ? {} : { access_mode: 'READ_ONLY' },
  );
  const conn = await instance.connect();
  try {
    const reader = await conn.runAndReadAll(sql);
    return reader.getRowObjectsJson().map((r) => ({
      fiscal_year: Number(r.fiscal_year),
      period: String(r.period),
      revenue_usd: trimDecimal(String(r.revenue_usd)),
      source_accession: String(r.source_accession),
    }));
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
}

/** `391035000000.000` -> `391035000000` (exact: string surgery, no floats). */
export function trimDecimal(s: string): string {
  return s.includes('.') ? s.replace(/0+$/, '').replace(/\.$/, '') : s;
}

/** `391035000000` -> `391,035,000,000`. */
export function groupDigits(s: string): string {
  const [int = '', frac] = s.split('.');
  const neg = int.startsWith('-');
  const digits = neg ? int.slice(1) : int;
  const grouped = digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${neg ? '-' : ''}${grouped}${frac !== undefined ? `.${frac}` : ''}`;
}
