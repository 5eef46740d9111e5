/**
 * What `status` shows: per dataset done / not_found / bad_request / failed / pending parts and
 * rows, the state, and what the snapshot waits for. As a table for people and as JSON.
 */
import {
  budgetConfigFrom,
  budgetPrefix,
  createBudget,
  keyFingerprint,
  type BudgetDescription,
} from '../budget/index.js';
import type { Config } from '../config/load.js';
// The catalog and storage alone, not output/index.js: that also holds the publisher, which loads DuckDB.
import { latestStoredSnapshot } from '../output/catalog/index.js';
import { openStorage, s3Settings } from '../output/storage/index.js';
import { noWorkerStatus, outageStatus } from './record/index.js';
import type { PipelineRecords } from './record/index.js';
import { missingDetailLines, totals, type MissingCompany } from './record/index.js';
import type { DatasetProgress, IcebergState, QuotaWait, SnapshotView } from './record/index.js';
import { counted } from '../counted.js';

/** `not reused` lines the text of `status` prints; `--json` lists them all. */
const NOT_REUSED_SHOWN = 10;

// The pipeline's second public face, for `status`: the records and their view, never BullMQ or DuckDB.
export { openRecords, totals } from './record/index.js';

export interface StatusReport {
  snapshot_id: string;
  state: string;
  trigger: string;
  snapshot_date: string;
  created_at: string;
  finished_at: string | null;
  /** What it waits for now (a quota reset), or null. */
  waiting: { reason: string; until: string } | null;
  /** An API outage the parts queue holds for (`API unreachable since …, next probe at …`), or null. */
  api_outage: string | null;
  /** No worker consumes the parts queue (`no worker is consuming the parts queue …`), or null. */
  no_worker: string | null;
  /** Who cancelled it and when (`filings-export cancel`), or null. */
  cancelled: { by: string; at: string } | null;
  /** The key's rate as configured and as learned from X-RateLimit-Limit (null without a key). */
  rate: {
    configured: number | 'auto';
    learned_limit: number | null;
    effective: number;
    /** What `auto` is doing (`no rate headers: ramping, now 240/min, ceiling 6,000`); null for a number. */
    auto: string | null;
  } | null;
  datasets: Record<string, DatasetProgress>;
  total: DatasetProgress;
  manifest: string | null;
  /** Published without the `changes` dataset asked for: why; null otherwise. */
  changes_missing: string | null;
  message: string | null;
  /** Quota waits the snapshot went through. */
  waits: { message: string; since: string; until: string }[];
  /** How often the snapshot was re-enqueued with --retry. */
  retries: number;
  /** An incremental snapshot: where unchanged parts come from and the requests that saved. */
  incremental: {
    reused_from: string;
    full_refresh_date: string;
    requests_saved: number;
    /** Parts that could have been carried over but were fetched, with why (`MSFT facts_full: …`). */
    not_reused: string[];
    /** How many such parts there are (`not_reused` may hold only the first few: `status` text). */
    not_reused_total: number;
  } | null;
  /** API requests its parts sent, how many were answered 429, failed attempts retried. */
  requests: { sent: number; rate_limited_429: number; retried: number };
  /** The warehouse load after publish (output.load_into), when one ran. */
  load: { outcome: NonNullable<SnapshotView['load']>['outcome']; at: string; message: string } | null;
  /** Its commit to the Iceberg tables after publish (output.iceberg), once one was tried. */
  iceberg: { state: IcebergState; at: string; message: string } | null;
  /** Companies the API did not know, as typed, with its answer (the first 100; known at the end). */
  not_found: MissingCompany[];
  /** How many companies the API did not know. */
  not_found_count: number;
  /** The snapshot `latest` means under this one's output root (the one published last), or null. */
  latest: string | null;
}

export function statusReport(
  rec: SnapshotView,
  current: QuotaWait | null,
  waits: QuotaWait[] = [],
  outage: string | null = null,
  budget: BudgetDescription | null = null,
  notReused: { lines: string[]; total: number } = { lines: [], total: 0 },
  seen: { latest?: string | null; noWorker?: string | null } = {},
): StatusReport {
  const running = rec.state === 'running' || rec.state === 'enqueuing';
  return {
    snapshot_id: rec.spec.id,
    state: running && current ? 'waiting_quota' : rec.state,
    trigger: rec.spec.trigger,
    snapshot_date: rec.spec.date,
    created_at: new Date(rec.createdAtMs).toISOString(),
    finished_at: rec.finishedAtMs ? new Date(rec.finishedAtMs).toISOString() : null,
    waiting: running && current ? { reason: current.message, until: current.until } : null,
    api_outage: running ? outage : null,
    no_worker: running ? (seen.noWorker ?? null) : null,
    cancelled: rec.cancelled
      ? { by: rec.cancelled.by, at: new Date(rec.cancelled.atMs).toISOString() }
      : null,
    rate: budget
      ? {
          configured: budget.configuredRequestsPerMinute,
          learned_limit: budget.serverLimitPerMinute,
          effective: budget.effectiveRequestsPerMinute,
          auto: budget.auto?.message ?? null,
        }
      : null,
    datasets: rec.progress,
    total: totals(rec),
    manifest: rec.manifest,
    changes_missing: rec.changesMissing,
    message: rec.message,
    waits: waits.map((w) => ({ message: w.message, since: w.since, until: w.until })),
    retries: rec.retries,
    incremental: rec.spec.reuse
      ? {
          reused_from: rec.spec.reuse.from,
          full_refresh_date: rec.spec.reuse.fullRefreshDate,
          requests_saved: totals(rec).reused,
          not_reused: notReused.lines,
          not_reused_total: notReused.total,
        }
      : null,
    requests: { sent: rec.requests, rate_limited_429: rec.rateLimited429, retried: rec.partRetries },
    load: rec.load
      ? { outcome: rec.load.outcome, at: new Date(rec.load.atMs).toISOString(), message: rec.load.message }
      : null,
    iceberg: rec.iceberg
      ? {
          state: rec.iceberg.state,
          at: new Date(rec.iceberg.atMs).toISOString(),
          message: rec.iceberg.message,
        }
      : null,
    not_found: rec.missing,
    not_found_count: rec.missingCount,
    latest: seen.latest ?? null,
  };
}

const COLUMNS = ['done', 'reused', 'not_found', 'bad_request', 'failed', 'pending', 'total', 'rows'] as const;

/** A few lines readable at a glance. `nowMs` makes "in 3h12m" relative to now. */
export function formatStatus(r: StatusReport, nowMs: number = Date.now()): string {
  const lines: string[] = [];
  const started = Date.parse(r.created_at);
  const end = r.finished_at ? Date.parse(r.finished_at) : nowMs;
  lines.push(
    `snapshot ${r.snapshot_id}: ${r.state.toUpperCase()}  (${r.trigger}, date ${r.snapshot_date}, started ${r.created_at}, ${r.finished_at ? 'took' : 'running for'} ${duration(end - started)})`,
  );
  if (r.waiting)
    lines.push(
      `waiting: ${r.waiting.reason} (until ${r.waiting.until}, in ${duration(Date.parse(r.waiting.until) - nowMs)})`,
    );
  if (r.api_outage) lines.push(`waiting: ${r.api_outage}`);
  if (r.no_worker) lines.push(`waiting: ${r.no_worker}`);
  lines.push('');
  const header = ['dataset', ...COLUMNS];
  const rows = Object.entries(r.datasets).map(([ds, p]) => [ds, ...COLUMNS.map((c) => fmt(p[c]))]);
  rows.push(['all', ...COLUMNS.map((c) => fmt(r.total[c]))]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: string[]): string =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
  lines.push(line(header));
  for (const row of rows) lines.push(line(row));
  lines.push('');
  if (r.manifest) lines.push(`manifest: ${r.manifest}`);
  if (r.latest !== null)
    lines.push(
      r.latest === r.snapshot_id
        ? 'latest: this snapshot (the one published last under its output root)'
        : `latest: ${r.latest} (the one published last under this snapshot's output root)`,
    );
  if (r.changes_missing) lines.push(`changes: not written: ${r.changes_missing}`);
  if (r.load) lines.push(`warehouse load: ${r.load.outcome} at ${r.load.at}: ${r.load.message}`);
  if (r.iceberg) lines.push(icebergLine(r.iceberg));
  if (r.message) lines.push(`message: ${r.message}`);
  lines.push(...missingDetailLines(r.not_found, r.not_found_count));
  for (const w of r.waits)
    if (w.until !== r.waiting?.until) lines.push(`waited: ${w.message} (${w.since} -> ${w.until})`);
  if (r.requests.sent > 0)
    lines.push(
      `requests: ${fmt(r.requests.sent)} sent, ${fmt(r.requests.rate_limited_429)} answered 429, ${counted(r.requests.retried, 'failed attempt', 'failed attempts', fmt(r.requests.retried))} retried`,
    );
  if (r.retries > 0) lines.push(`retried: ${counted(r.retries, 'time')}`);
  if (r.incremental)
    lines.push(
      `incremental: ${counted(r.incremental.requests_saved, 'part', 'parts', fmt(r.incremental.requests_saved))} carried over from ${r.incremental.reused_from} (requests saved); last full refresh ${r.incremental.full_refresh_date}`,
    );
  for (const n of r.incremental?.not_reused.slice(0, NOT_REUSED_SHOWN) ?? [])
    lines.push(`  not reused: ${n}`);
  if ((r.incremental?.not_reused_total ?? 0) > NOT_REUSED_SHOWN)
    lines.push(
      `  … and ${(r.incremental?.not_reused_total ?? 0) - NOT_REUSED_SHOWN} more (status --json lists them all)`,
    );
  if (r.rate) {
    const learned =
      r.rate.learned_limit === null
        ? 'not reported yet'
        : r.rate.learned_limit === 0
          ? 'none'
          : `${fmt(r.rate.learned_limit)}/min`;
    lines.push(
      `rate: ${fmt(r.rate.effective)} requests/min (configured ${String(r.rate.configured)}; the key's X-RateLimit-Limit: ${learned})`,
    );
    if (r.rate.auto !== null) lines.push(`  auto: ${r.rate.auto}`);
  }
  return lines.join('\n').trimEnd();
}

function fmt(n: number): string {
  return n.toLocaleString('en-US');
}

export function duration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '0s';
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, '0')}s`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h${String(m % 60).padStart(2, '0')}m`;
  return `${Math.floor(h / 24)}d${h % 24}h`;
}

/**
 * Reads what `status` shows of one snapshot: a bounded number of small Redis replies whatever the
 * number of companies and parts (counters kept as parts end, never a read per part). `all` reads
 * every `not reused` line (`--json`); otherwise the first few the text prints. Undefined: no record.
 */
export async function readStatus(
  ctx: PipelineRecords,
  id: string,
  opts: { all: boolean; nowMs?: number },
): Promise<StatusReport | undefined> {
  const rec = await ctx.store.view(id);
  if (!rec) return undefined;
  const [current, waits, outage, budget, notReused, latest, noWorker] = await Promise.all([
    ctx.store.currentQuotaWait(id),
    ctx.store.quotaWaits(id),
    outageStatus(ctx),
    describeKeyBudget(ctx),
    rec.spec.reuse
      ? ctx.store.notReused(id, opts.all ? undefined : NOT_REUSED_SHOWN)
      : { lines: [], total: 0 },
    latestUnder(ctx.config, rec.spec.outDir),
    noWorkerStatus(ctx, rec, opts.nowMs ?? Date.now()),
  ]);
  return statusReport(rec, current, waits, outage, budget, notReused, { latest, noWorker });
}

/**
 * The snapshot `latest` means under an output root (src/output/catalog: the one published last),
 * for `status` and the page; null when none is published there. A root that cannot be read is
 * null too: these views report the pipeline, and verify, ddl and load name a root's faults.
 */
export async function latestUnder(config: Config, outDir: string): Promise<string | null> {
  const storage = openStorage(outDir, { settings: s3Settings(config.output) });
  try {
    return (await latestStoredSnapshot(storage, { attempts: 1 })) ?? null;
  } catch {
    return null;
  } finally {
    await storage.close();
  }
}

/** The budget of the configured key, for `status` (null when no key is configured here). */
export async function describeKeyBudget(
  ctx: Pick<PipelineRecords, 'config' | 'redis'>,
): Promise<BudgetDescription | null> {
  const key = ctx.config.api.key;
  if (!key) return null;
  const budget = createBudget({
    redis: ctx.redis,
    config: budgetConfigFrom(ctx.config),
    keyFingerprint: keyFingerprint(key.reveal()),
    prefix: budgetPrefix(ctx.config),
  });
  try {
    return await budget.describe();
  } finally {
    await budget.close();
  }
}

/** The snapshot's Iceberg commit in one line a person understands at a glance. */
function icebergLine(i: NonNullable<StatusReport['iceberg']>): string {
  switch (i.state) {
    case 'committed':
      return `iceberg: committed at ${i.at}: ${i.message}`;
    case 'pending':
      return `iceberg: PENDING since ${i.at}: published, not yet in its tables: ${i.message}`;
    case 'superseded':
      return `iceberg: not committed (${i.at}): ${i.message}`;
    default: {
      const unknown: never = i.state;
      return `iceberg: ${String(unknown)}`;
    }
  }
}
