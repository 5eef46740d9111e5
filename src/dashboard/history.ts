/**
 * The nights at a glance, for the status page: the last 30 snapshots as the timeline shows them,
 * the nightly schedule's missed dates, and this month's requests per day for the quota burn-down.
 * Read from the snapshot records (kept `retention.snapshot_record_days`); nothing is written.
 */
import { CronExpressionParser } from 'cron-parser';
import pLimit from 'p-limit';
import {
  localDate,
  nightlySnapshotId,
  totals,
  type PipelineContext,
  type SnapshotView,
} from '../pipeline/index.js';

/** Snapshots the timeline shows. */
export const TIMELINE_NIGHTS = 30;
/** A scheduled run this long ago with no snapshot is a miss; a younger one may still be starting. */
const MISS_GRACE_MS = 60 * 60_000;
const DAY_MS = 86_400_000;

export interface NightSummary {
  id: string;
  date: string;
  trigger: string;
  state: string;
  startedAt: string;
  /** Creation to the end (published, failed, stopped); null while it runs. */
  durationMs: number | null;
  requests: number;
  /** Rows per dataset. */
  rows: Record<string, number>;
  /** Done parts carried over from an earlier snapshot without a request (unchanged companies). */
  reusedParts: number;
  /** Done parts fetched afresh (new or changed companies, or a full refresh). */
  changedParts: number;
  failedParts: number;
}

export interface MonthUse {
  /** YYYY-MM (UTC), the quota month. */
  month: string;
  daysInMonth: number;
  /** Today's day of the month (UTC), 1-based. */
  today: number;
  /** Requests snapshots sent per day of this month (index 0 is day 1), by their start day. */
  perDay: number[];
}

export interface NightsHistory {
  /** Oldest first. */
  nights: NightSummary[];
  /** Dates (YYYY-MM-DD) the nightly schedule ran for, or should have, without a snapshot; oldest first. */
  missed: string[];
  /** The schedule's pattern and zone, or null when no nightly schedule is set up. */
  schedule: { pattern: string; tz: string } | null;
  month: MonthUse;
}

export function nightSummary(id: string, rec: SnapshotView): NightSummary {
  const t = totals(rec);
  return {
    id,
    date: rec.spec.date,
    trigger: rec.spec.trigger,
    state: rec.state,
    startedAt: new Date(rec.createdAtMs).toISOString(),
    durationMs: rec.finishedAtMs === null ? null : rec.finishedAtMs - rec.createdAtMs,
    requests: rec.requests,
    rows: Object.fromEntries(Object.entries(rec.progress).map(([d, p]) => [d, p.rows])),
    reusedParts: t.reused,
    changedParts: t.done - t.reused,
    failedParts: t.failed,
  };
}

/** The local dates of a cron schedule's runs in [fromMs, toMs], oldest first. */
export function scheduledDates(pattern: string, tz: string, fromMs: number, toMs: number): string[] {
  const runs = CronExpressionParser.parse(pattern, {
    tz,
    currentDate: new Date(fromMs),
    endDate: new Date(toMs),
  });
  const dates: string[] = [];
  while (runs.hasNext()) {
    const d = localDate(runs.next().getTime(), tz);
    if (dates.at(-1) !== d) dates.push(d);
  }
  return dates;
}

/** Requests per UTC day of `now`'s month, from the snapshots that started in it. */
export function monthUse(nights: readonly NightSummary[], now: number): MonthUse {
  const d = new Date(now);
  const year = d.getUTCFullYear();
  const month = d.getUTCMonth();
  const daysInMonth = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  const perDay = new Array<number>(daysInMonth).fill(0);
  for (const n of nights) {
    const s = new Date(n.startedAt);
    if (s.getUTCFullYear() === year && s.getUTCMonth() === month) perDay[s.getUTCDate() - 1]! += n.requests;
  }
  return {
    month: `${year}-${String(month + 1).padStart(2, '0')}`,
    daysInMonth,
    today: d.getUTCDate(),
    perDay,
  };
}

/** Where this month's pace ends it, as the burn-down draws and says it. */
export interface MonthProjection {
  /** Requests counted against the monthly quota so far. */
  used: number;
  /** The monthly quota, or null when none is known. */
  limit: number | null;
  /** Days after today until the month ends. */
  daysLeft: number;
  /** `used` plus the pace so far (per day, today counted whole) over the days left, rounded. */
  projected: number;
  /** The pace spends more than the quota before the month ends. */
  runsOutFirst: boolean;
}

/**
 * The burn-down's projection. The ledger's count (`ledger`) is the truth when there is one; without
 * it, the requests the snapshot records add up to.
 */
export function monthProjection(
  month: MonthUse,
  ledger: { used: number; limit: number | null } | null,
): MonthProjection {
  const used = ledger?.used ?? month.perDay.slice(0, month.today).reduce((a, b) => a + b, 0);
  const limit = ledger?.limit ?? null;
  const daysLeft = month.daysInMonth - month.today;
  const projected = Math.round(used + (used / month.today) * daysLeft);
  return { used, limit, daysLeft, projected, runsOutFirst: limit !== null && projected > limit };
}

export async function nightsHistory(ctx: PipelineContext, now: number): Promise<NightsHistory> {
  const ids = await ctx.store.list(TIMELINE_NIGHTS);
  const limitReads = pLimit(4);
  const recs = await Promise.all(
    ids.map((id) => limitReads(async () => [id, await ctx.store.view(id)] as const)),
  );
  const nights = recs
    .flatMap(([id, rec]) => (rec ? [nightSummary(id, rec)] : []))
    .sort((a, b) => a.startedAt.localeCompare(b.startedAt));
  const { cron, tz, scheduler_id } = ctx.config.schedule;
  const scheduled = (await ctx.snapshotsQueue.getJobScheduler(scheduler_id)) !== undefined;
  let missed: string[] = [];
  if (scheduled && nights.length > 0) {
    // Only since the oldest snapshot on record: before it there was nothing to run.
    const from = Math.max(Date.parse(nights[0]!.startedAt), now - TIMELINE_NIGHTS * DAY_MS);
    const dates = scheduledDates(cron, tz, from, now - MISS_GRACE_MS);
    const present = await Promise.all(
      dates.map((d) => limitReads(async () => (await ctx.store.state(nightlySnapshotId(d))) !== undefined)),
    );
    missed = dates.filter((_, i) => !present[i]);
  }
  return {
    nights,
    missed,
    schedule: scheduled ? { pattern: cron, tz } : null,
    month: monthUse(nights, now),
  };
}
