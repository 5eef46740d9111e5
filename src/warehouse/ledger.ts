/**
 * The ledger table `filings_export_loads`: one row per snapshot and dataset loaded, written in the
 * same transaction as the rows it describes, so a table holds a snapshot exactly when the ledger
 * says so. The same statement creates it in DuckDB and PostgreSQL.
 */
import type { DatasetName } from '../datasets/index.js';

export const LEDGER_TABLE = 'filings_export_loads';

export const LOAD_MODES = ['full', 'changes'] as const;
export type LoadMode = (typeof LOAD_MODES)[number];

export interface LedgerRow {
  /** Order of the loads (1, 2, …): the dataset's table holds the snapshot of its highest seq. */
  seq: number;
  snapshot_id: string;
  snapshot_date: string;
  dataset: DatasetName;
  mode: LoadMode;
  /** Rows the load wrote: the table's rows (full), the rows applied (changes). */
  rows: number;
  /** ISO-8601 UTC. */
  loaded_at: string;
  /** sha256 of the snapshot's manifest.json as read. */
  manifest_sha256: string;
  /** The column list loaded (table-columns.ts `columnsSignature`): a different one is a schema change. */
  columns: string;
  /** Why this mode (a broken chain says what broke it). */
  reason: string;
}

export function ledgerDdl(table: string): string {
  return `CREATE TABLE IF NOT EXISTS ${table} (
  seq BIGINT NOT NULL,
  snapshot_id VARCHAR NOT NULL,
  snapshot_date DATE NOT NULL,
  dataset VARCHAR NOT NULL,
  mode VARCHAR NOT NULL,
  rows BIGINT NOT NULL,
  loaded_at TIMESTAMPTZ NOT NULL,
  manifest_sha256 VARCHAR NOT NULL,
  columns VARCHAR NOT NULL,
  reason VARCHAR NOT NULL,
  PRIMARY KEY (snapshot_id, dataset)
)`;
}

/** Reads the ledger's SELECT output (any driver's JSON-ish row) into typed rows, oldest first. */
export function ledgerRows(raw: readonly Record<string, unknown>[]): LedgerRow[] {
  return raw
    .map((r) => ({
      seq: Number(r.seq),
      snapshot_id: String(r.snapshot_id),
      snapshot_date: String(r.snapshot_date).slice(0, 10),
      dataset: String(r.dataset) as DatasetName,
      mode: String(r.mode) as LoadMode,
      rows: Number(r.rows),
      loaded_at: String(r.loaded_at),
      manifest_sha256: String(r.manifest_sha256),
      columns: String(r.columns),
      reason: String(r.reason),
    }))
    .sort((a, b) => a.seq - b.seq);
}

/** The newest ledger row per dataset: what each table holds now. */
export function currentLoads(rows: readonly LedgerRow[]): Map<DatasetName, LedgerRow> {
  const out = new Map<DatasetName, LedgerRow>();
  for (const r of rows) {
    const seen = out.get(r.dataset);
    if (seen === undefined || r.seq > seen.seq) out.set(r.dataset, r);
  }
  return out;
}

export const LEDGER_SELECT = `SELECT seq, snapshot_id, CAST(snapshot_date AS VARCHAR) AS snapshot_date, dataset, mode, rows, CAST(loaded_at AS VARCHAR) AS loaded_at, manifest_sha256, columns, reason FROM`;
