/**
 * The status page's history figures (src/dashboard/history.ts) as pure functions: the dates a
 * nightly schedule ran for, in its own time zone, and this month's requests per day.
 */
import { describe, expect, it } from 'vitest';
import { monthUse, scheduledDates, type NightSummary } from '../src/dashboard/history.js';

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
