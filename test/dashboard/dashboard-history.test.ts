/**
 * The status page's history figures (src/dashboard/history.ts): the dates a nightly schedule ran
 * for, in its own time zone, this month's requests per day, and the missed nights read from
 * snapshot records in a real Redis against a real BullMQ job scheduler.
 */
import { afterAll, describe, expect, it } from 'vitest';
import {
  monthProjection,
  monthUse,
  nightsHistory,
  scheduledDates,
  type NightSummary,
} from '../../src/dashboard/history.js';
import { TestClock } from '../helpers/clock.js';
import { startPipelineHarness, type PipelineHarness } from '../helpers/pipeline.js';

const harnesses: PipelineHarness[] = [];
afterAll(async () => {
  for (const h of harnesses.splice(0)) await h.close();
});

const night = (startedAt: string, requests: number): NightSummary => ({
  id: `n-${startedAt}`,
  date: startedAt.slice(0, 10),
  trigger: 'nightly',
  state: 'published',
  startedAt,
  durationMs: 1000,
  requests,
  rows: {},
  reusedParts: 0,
  changedParts: 0,
  failedParts: 0,
});

describe('scheduledDates', () => {
  it('lists each run date once, in the schedule time zone', () => {
    const from = Date.parse('2026-11-20T00:00:00Z');
    const to = Date.parse('2026-11-23T03:00:00Z');
    expect(scheduledDates('0 2 * * *', 'UTC', from, to)).toEqual([
      '2026-11-20',
      '2026-11-21',
      '2026-11-22',
      '2026-11-23',
    ]);
    // 23:30 in New York is 04:30 UTC the next day: the local date names the night, and the
    // run of Nov 22 (Nov 23 04:30 UTC) is after `to`.
    expect(scheduledDates('30 23 * * *', 'America/New_York', from, to)).toEqual([
      '2026-11-19',
      '2026-11-20',
      '2026-11-21',
    ]);
  });
});

describe('monthUse', () => {
  it('adds requests per UTC day of the current month only', () => {
    const now = Date.parse('2026-11-26T12:00:00Z');
    const use = monthUse(
      [
        night('2026-10-31T23:00:00Z', 500),
        night('2026-11-01T02:00:00Z', 40),
        night('2026-11-01T14:00:00Z', 2),
        night('2026-11-26T02:00:00Z', 35),
      ],
      now,
    );
    expect(use).toMatchObject({ month: '2026-11', daysInMonth: 30, today: 26 });
    expect(use.perDay[0]).toBe(42);
    expect(use.perDay[25]).toBe(35);
    expect(use.perDay.reduce((a, b) => a + b, 0)).toBe(77);
  });
});

describe('monthProjection (the burn-down: "at this pace N", "runs out first")', () => {
  // November 2026 has 30 days; on the 26th, 4 are left.
  const month = monthUse(
    [night('2026-11-02T02:00:00Z', 600), night('2026-11-26T02:00:00Z', 700)],
    Date.parse('2026-11-26T12:00:00Z'),
  );

  it('carries the pace so far over the days left, from the ledger when there is one', () => {
    // 1,300 in 26 days is 50 a day: 1,300 + 4 × 50 = 1,500, which the quota of 1,500 just holds.
    expect(monthProjection(month, { used: 1300, limit: 1500 })).toEqual({
      used: 1300,
      limit: 1500,
      daysLeft: 4,
      projected: 1500,
      runsOutFirst: false,
    });
    // One request fewer in the quota and the pace spends it before the month ends.
    expect(monthProjection(month, { used: 1300, limit: 1499 })).toMatchObject({
      projected: 1500,
      runsOutFirst: true,
    });
    // The ledger is the truth: 2,600 used (other tools share the key) is 100 a day.
    expect(monthProjection(month, { used: 2600, limit: null })).toEqual({
      used: 2600,
      limit: null,
      daysLeft: 4,
      projected: 3000,
      runsOutFirst: false,
    });
  });

  it("adds up the snapshots' requests without a ledger, and rounds the pace", () => {
    expect(monthProjection(month, null)).toEqual({
      used: 1300,
      limit: null,
      daysLeft: 4,
      projected: 1500,
      runsOutFirst: false,
    });
    // 1,000 in 26 days over 4 more: 1,153.8 rounds to 1,154.
    expect(monthProjection(month, { used: 1000, limit: 1153 })).toMatchObject({
      projected: 1154,
      runsOutFirst: true,
    });
    // The last day of the month projects what is used.
    const last = monthUse([], Date.parse('2026-11-30T23:00:00Z'));
    expect(monthProjection(last, { used: 77, limit: 77 })).toMatchObject({
      daysLeft: 0,
      projected: 77,
      runsOutFirst: false,
    });
  });
});

describe('nightsHistory', () => {
  it('shows the nights a schedule ran for without a snapshot, from the oldest record on', async () => {
    const clock = new TestClock(Date.parse('2026-11-20T03:00:00Z'));
    const h = await startPipelineHarness({
      clock,
      config: { 'schedule.cron': '0 2 * * *', 'schedule.tz': 'UTC' },
    });
    harnesses.push(h);
    const nightly = (date: string) => ({
      ...h.spec(['AAPL'], ['series_catalog'], `nightly-${date}`),
      date,
      trigger: 'nightly' as const,
    });
    expect(await h.ctx.store.create(nightly('2026-11-20'))).toBe(true);
    clock.set(Date.parse('2026-11-22T02:00:05Z'));
    expect(await h.ctx.store.create(nightly('2026-11-22'))).toBe(true);
    clock.set(Date.parse('2026-11-23T05:00:00Z'));

    // No scheduler yet: nothing was due, so nothing is missed.
    const before = await nightsHistory(h.ctx, clock.now());
    expect(before).toMatchObject({ missed: [], schedule: null });
    expect(before.nights.map((n) => n.id)).toEqual(['nightly-2026-11-20', 'nightly-2026-11-22']);

    await h.ctx.snapshotsQueue.upsertJobScheduler(
      h.config.schedule.scheduler_id,
      { pattern: '0 2 * * *', tz: 'UTC' },
      { name: 'nightly-trigger-test', data: {} },
    );
    const after = await nightsHistory(h.ctx, clock.now());
    // Runs due since the oldest record (Nov 20, 03:00): Nov 21, 22 and 23 at 02:00; 22 has one.
    expect(after.missed).toEqual(['2026-11-21', '2026-11-23']);
    expect(after.schedule).toEqual({ pattern: '0 2 * * *', tz: 'UTC' });
    // Within the hour after a run, it may still be starting: not a miss yet.
    expect((await nightsHistory(h.ctx, Date.parse('2026-11-23T02:30:00Z'))).missed).toEqual(['2026-11-21']);
  });
});
