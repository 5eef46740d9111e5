/**
 * The demo's proof that the snapshots are usable: DuckDB queries of Apple's annual revenue by fiscal
 * year (10-K, full-year duration, consolidated), over the `facts_full` table `load` keeps in a
 * DuckDB database file or over the published Parquet files themselves, and of the facts a night
 * restated, over the `facts_full_restatements` view `load --history` keeps beside it.
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
  return (await readRows(database, sql)).map((r) => ({
    fiscal_year: Number(r.fiscal_year),
    period: String(r.period),
    revenue_usd: trimDecimal(String(r.revenue_usd)),
    source_accession: String(r.source_accession),
  }));
}

/**
 * A company's rows of `facts_full_restatements` first seen in one night (`seenIn`, a snapshot id),
 * with the date of that night from the history's own record of the nights it applied.
 */
export function restatementsSql(ticker: string, seenIn: string): string {
  const q = (s: string): string => `'${s.replaceAll("'", "''")}'`;
  return `SELECT r.metric_id, r.period_key, r.old_value_num, r.new_value_num,
       r.old_accession, r.new_accession, n.snapshot_date AS seen_night
FROM facts_full_restatements AS r
JOIN filings_export_history_nights AS n
  ON n.dataset = 'facts_full' AND n.snapshot_id = r.seen_in_snapshot
WHERE r._requested_ticker = ${q(ticker)} AND r.seen_in_snapshot = ${q(seenIn)}
ORDER BY r.metric_id, r.period_key`;
}

export interface RestatementRow {
  metric_id: string;
  period_key: string;
  old_value: string;
  new_value: string;
  old_accession: string;
  new_accession: string;
  seen_night: string;
}

/** restatementsSql over a DuckDB database file `load --history` keeps (opened read-only). */
export async function queryRestatements(
  databasePath: string,
  ticker: string,
  seenIn: string,
): Promise<RestatementRow[]> {
  return (await readRows(databasePath, restatementsSql(ticker, seenIn))).map((r) => ({
    metric_id: String(r.metric_id),
    period_key: String(r.period_key),
    old_value: shown(r.old_value_num),
    new_value: shown(r.new_value_num),
    old_accession: shown(r.old_accession),
    new_accession: shown(r.new_accession),
    seen_night: String(r.seen_night),
  }));
}

/** A value as printed: NULL (a fact without a number, say) as `-`. */
function shown(v: unknown): string {
  return v === null || v === undefined ? '-' : trimDecimal(String(v));
}

async function readRows(database: string, sql: string): Promise<Record<string, unknown>[]> {
  // Loaded here, not at the top: DuckDB maps ~50 MB of native code, which only the demo needs.
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const instance = await DuckDBInstance.create(
    database,
    database === ':memory:' ? {} : { access_mode: 'READ_ONLY' },
  );
  const conn = await instance.connect();
  try {
    return (await conn.runAndReadAll(sql)).getRowObjectsJson();
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
