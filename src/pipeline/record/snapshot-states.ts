/**
 * What a snapshot's record says, apart from where it is kept: the spec fixed at creation, the
 * states and their groups (each stated once here; the store moves between them), each dataset's
 * progress, quota waits, the outcome of a load, and the view `status` reads.
 */
import type { QuotaKind, QuotaScope } from '../../types.js';
import type { DatasetName, OutputFormat } from '../../types.js';
import type { MissingCompany } from './missing.js';
import type { Company } from './universe.js';

/** What a snapshot exports; fixed at creation. */
export interface SnapshotSpec {
  id: string;
  /** YYYY-MM-DD: the `snapshot_date` partition. */
  date: string;
  trigger: 'nightly' | 'adhoc' | 'manual';
  companies: Company[];
  datasets: DatasetName[];
  formats: OutputFormat[];
  /** Absolute output root shared by every worker. */
  outDir: string;
  /**
   * An incremental snapshot: unchanged companies' parts are carried over from this published
   * snapshot (docs/pipeline.md, Incremental nights). Absent: everything is fetched.
   */
  reuse?: SnapshotReuse;
  /** The published snapshot the `changes` dataset compares with (the newest before this one). */
  changesAgainst?: string;
}

export interface SnapshotReuse {
  /** The published snapshot to carry parts over from. */
  from: string;
  /** Date of the last full refresh of that chain (the next one is due N days after it). */
  fullRefreshDate: string;
}

/**
 * A spec without its company list: what `status`, `--wait` and the dashboard need. The list is
 * kept in its own field because at 10,000 companies it is ~0.5 MB, read on every poll otherwise.
 */
export type SnapshotSpecHead = Omit<SnapshotSpec, 'companies'>;

/**
 * Lifecycle: enqueuing -> running -> published | failed | stopped | cancelled; `--retry` reopens a
 * failed, stopped or cancelled one (-> enqueuing). This store owns every move between them.
 */
export const SNAPSHOT_STATES = [
  'enqueuing',
  'running',
  'published',
  'failed',
  'stopped',
  'cancelled',
] as const;
export type SnapshotState = (typeof SNAPSHOT_STATES)[number];

/** States a snapshot ends in: following it stops there. */
export const FINAL_STATES: readonly SnapshotState[] = ['published', 'failed', 'stopped', 'cancelled'];
/** States `run --retry` may start again (parts already exported are reused). */
export const RETRYABLE_STATES: readonly SnapshotState[] = ['failed', 'stopped', 'cancelled'];
/**
 * States of a snapshot under way: queued (enqueuing) or running (also while it waits for a quota
 * reset or an outage); `cancel` and a 401/403 stop act on these.
 */
export const ACTIVE_STATES: readonly SnapshotState[] = ['enqueuing', 'running'];

export function isActive(state: SnapshotState): boolean {
  return ACTIVE_STATES.includes(state);
}

export function isFinal(state: SnapshotState): boolean {
  return FINAL_STATES.includes(state);
}

export function isRetryable(state: SnapshotState): boolean {
  return RETRYABLE_STATES.includes(state);
}

export const RECORDED_PART_STATUSES = ['done', 'not_found', 'bad_request', 'failed'] as const;
export type RecordedPartStatus = (typeof RECORDED_PART_STATUSES)[number];

export interface DatasetProgress {
  total: number;
  done: number;
  not_found: number;
  bad_request: number;
  failed: number;
  pending: number;
  rows: number;
  /** Of the done parts, those carried over from an earlier snapshot without a request. */
  reused: number;
}

/** A pause of one snapshot waiting for a quota reset, as recorded for `status` and the manifest. */
export interface QuotaWait {
  reason: 'quota';
  quota: QuotaKind;
  scope: QuotaScope;
  /** Who said the quota is spent: our own ledger against a configured quota, or the server's 429. */
  source: 'configured' | 'server';
  /** ISO timestamps (UTC). */
  since: string;
  until: string;
  /** Human-readable, e.g. `daily quota of 5000 requests spent (api_key); resumes at 2026-11-22T00:00:00.000Z`. */
  message: string;
}

/** A snapshot's record without its company list (SnapshotStore.view): counters, state, timestamps. */
export interface SnapshotView {
  spec: SnapshotSpecHead;
  state: SnapshotState;
  createdAtMs: number;
  updatedAtMs: number;
  finishedAtMs: number | null;
  /** Parts in the snapshot: companies x datasets. */
  total: number;
  progress: Record<string, DatasetProgress>;
  manifest: string | null;
  /** Published without the `changes` asked for: why (the manifest's `changes_missing`). */
  changesMissing: string | null;
  message: string | null;
  /** How often the snapshot was re-enqueued with --retry. */
  retries: number;
  /** Requests its parts sent (every attempt, also those answered 429). */
  requests: number;
  /** Failed attempts that were retried (5xx, timeouts, resets, truncated bodies), over all parts. */
  partRetries: number;
  /** 429 answers its parts received (per-minute and quota). */
  rateLimited429: number;
  /** The warehouse load after publish (output.load_into), when one ran. */
  load: SnapshotLoadRecord | null;
  /** Its commit to the Iceberg tables after publish (output.iceberg), once one was tried. */
  iceberg: SnapshotIcebergRecord | null;
  /** Companies the API did not know (every part 404), as typed; known once the parts have ended. */
  missing: MissingCompany[];
  /** How many companies are missing (`missing` keeps the first MISSING_KEPT). */
  missingCount: number;
  /** Who cancelled it and when (`filings-export cancel`), while it stays cancelled. */
  cancelled: { by: string; atMs: number } | null;
}

/** The whole record, with the spec's company list (SnapshotStore.get). */
export interface SnapshotRecord extends SnapshotView {
  spec: SnapshotSpec;
}

/**
 * How the `load-snapshot` job ended: loaded; refused, because the load would empty a table or
 * remove more than half of its companies (a person decides with `load --allow-shrink`); failed.
 */
export const LOAD_OUTCOMES = ['loaded', 'refused', 'failed'] as const;
export type LoadOutcome = (typeof LOAD_OUTCOMES)[number];

/**
 * Where a published snapshot stands in its Iceberg tables: committed; pending (its commit failed
 * or was cut short, and is retried: by the publish job, else before the next snapshot's commit);
 * superseded (a table holds a newer night, so this one is not committed on top of it).
 */
export const ICEBERG_STATES = ['committed', 'pending', 'superseded'] as const;
export type IcebergState = (typeof ICEBERG_STATES)[number];

/** What the last Iceberg commit of the snapshot said. */
export interface SnapshotIcebergRecord {
  state: IcebergState;
  atMs: number;
  /** One line: the tables and their versions, or the error and what happens next. */
  message: string;
}

/** What the last attempt of the `load-snapshot` job said. */
export interface SnapshotLoadRecord {
  outcome: LoadOutcome;
  atMs: number;
  /** One line: the datasets and modes loaded, or the error (with "will retry" while attempts remain). */
  message: string;
}

/** A dataset's progress before any of its `total` parts was recorded. */
export function noProgress(total: number): DatasetProgress {
  return { total, done: 0, not_found: 0, bad_request: 0, failed: 0, pending: 0, rows: 0, reused: 0 };
}

/** Totals of all datasets of a record. */
export function totals(rec: Pick<SnapshotView, 'progress'>): DatasetProgress {
  const t = noProgress(0);
  for (const p of Object.values(rec.progress)) {
    for (const k of Object.keys(t) as (keyof DatasetProgress)[]) t[k] += p[k];
  }
  return t;
}
