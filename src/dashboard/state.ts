/**
 * What the status page shows, as one JSON document: recent snapshots with per-dataset progress
 * and an ETA, the key's budget (rate, window, holds, quota ledger), an API outage in force, and the
 * last errors of failed parts. Read from Redis on each request; nothing is cached or written.
 */
import pLimit from 'p-limit';
import type { BudgetDescription } from '../budget/index.js';
import {
  describeKeyBudget,
  latestUnder,
  noWorkerStatus,
  outageStatus,
  totals,
  type DatasetProgress,
  type MissingCompany,
  type PipelineContext,
  type SnapshotView,
} from '../pipeline/index.js';
import { monthProjection, nightsHistory, type MonthProjection, type NightsHistory } from './history.js';

export interface DashboardSnapshot {
  id: string;
  state: string;
  trigger: string;
  date: string;
  createdAt: string;
  finishedAt: string | null;
  datasets: Record<string, DatasetProgress>;
  total: DatasetProgress;
  /** When the remaining parts should be done at the pace so far (ISO), or null. */
  eta: string | null;
  waiting: string | null;
  /** No worker consumes the parts queue of this running snapshot, in words; else null. */
  noWorker: string | null;
  /** Who cancelled it and when (ISO), while it stays cancelled. */
  cancelled: { by: string; at: string } | null;
  message: string | null;
  manifest: string | null;
  /** Requests its parts sent so far (the page derives the request rate from it). */
  requests: number;
  /** The warehouse load after publish (output.load_into), when one ran. */
  load: { outcome: NonNullable<SnapshotView['load']>['outcome']; at: string; message: string } | null;
  /** Companies the API did not know, as typed, with its answer (as `status` shows them). */
  notFound: MissingCompany[];
  /** How many there are (`notFound` keeps the first 100). */
  notFoundCount: number;
}

export interface DashboardState {
  generatedAt: string;
  apiOutage: string | null;
  budget: BudgetDescription | null;
  snapshots: DashboardSnapshot[];
  errors: { snapshot: string; dataset: string; company: string; message: string }[];
  /** The snapshot `latest` means under the configured output root (the one published last), or null. */
  latest: string | null;
  /** The last 30 snapshots, the schedule's misses and this month's use, for the charts. */
  history: NightsHistory;
  /** Where this month's pace ends it, against the ledger's monthly quota. */
  burnDown: MonthProjection;
}

/** ETA from the pace so far: parts finished per ms since the snapshot was created. */
export function etaOf(rec: SnapshotView, now: number): string | null {
  if (rec.state !== 'running') return null;
  const t = totals(rec);
  const finished = t.total - t.pending;
  if (finished <= 0 || t.pending <= 0) return null;
  const perMs = finished / Math.max(1, now - rec.createdAtMs);
  return new Date(now + t.pending / perMs).toISOString();
}

export async function dashboardState(ctx: PipelineContext, now: number, limit = 10): Promise<DashboardState> {
  const ids = await ctx.store.list(limit);
  // Each snapshot costs a few Redis reads: a handful at a time keeps a page load short without
  // flooding Redis when the page is open in many tabs.
  const limitReads = pLimit(4);
  const loaded = await Promise.all(
    ids.map((id) =>
      limitReads(async () => {
        // The view, not the whole record: the company list (~0.35 MB at 10,000 companies) is
        // not shown, and the page polls this every few seconds.
        const rec = await ctx.store.view(id);
        if (!rec) return null;
        const wait = await ctx.store.currentQuotaWait(id);
        const failed =
          totals(rec).failed > 0 ? (await ctx.store.parts(id)).filter((p) => p.status === 'failed') : [];
        return { id, rec, wait, failed, noWorker: await noWorkerStatus(ctx, rec, now) };
      }),
    ),
  );
  const snapshots: DashboardSnapshot[] = [];
  const errors: DashboardState['errors'] = [];
  for (const l of loaded) {
    if (l === null) continue;
    const { id, rec, wait, noWorker } = l;
    snapshots.push({
      id,
      state: rec.state,
      trigger: rec.spec.trigger,
      date: rec.spec.date,
      createdAt: new Date(rec.createdAtMs).toISOString(),
      finishedAt: rec.finishedAtMs ? new Date(rec.finishedAtMs).toISOString() : null,
      datasets: rec.progress,
      total: totals(rec),
      eta: etaOf(rec, now),
      waiting: wait ? wait.message : null,
      noWorker,
      cancelled: rec.cancelled
        ? { by: rec.cancelled.by, at: new Date(rec.cancelled.atMs).toISOString() }
        : null,
      message: rec.message,
      manifest: rec.manifest,
      requests: rec.requests,
      load: rec.load
        ? { outcome: rec.load.outcome, at: new Date(rec.load.atMs).toISOString(), message: rec.load.message }
        : null,
      notFound: rec.missing,
      notFoundCount: rec.missingCount,
    });
    for (const p of l.failed) {
      if (errors.length >= 20) break;
      errors.push({ snapshot: id, dataset: p.dataset, company: p.ticker, message: p.message ?? 'failed' });
    }
  }
  const budget = await describeKeyBudget(ctx);
  const history = await nightsHistory(ctx, now);
  return {
    generatedAt: new Date(now).toISOString(),
    apiOutage: await outageStatus(ctx),
    budget,
    snapshots,
    errors,
    latest: await latestUnder(ctx.config, ctx.config.output.dir),
    history,
    burnDown: monthProjection(history.month, budget?.monthly ?? null),
  };
}
