/**
 * The quota ledger in real Redis: configured quotas are never exceeded under concurrency (many
 * connections reserving at once), per key and per account, telemetry outside the monthly count,
 * resets at the UTC day and month boundaries of the injected clock, refunds, and the server's
 * quota 429 (real emulator over HTTP) recorded so nothing more is sent until the reset.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FilingsClient } from '../../src/api/index.js';
import {
  keyFingerprint,
  resolveBudgetConfig,
  type AcquireOutcome,
  type Budget,
  type BudgetConfigInput,
} from '../../src/budget/index.js';
import { QuotaExceededError } from '../../src/errors.js';
import type { Clock } from '../../src/types.js';
import { TestClock } from '../helpers/clock.js';
import { redisScope } from './redis-scope.js';
import { startTestEmulator, TEST_QUOTAS, type TestEmulator } from '../helpers/emulator.js';

const prefix = `test:budget-ledger:${process.pid}`;
const scope = redisScope(prefix);
const connect = scope.connect;

// The ledger is what is tested here: `burst` pacing lets every reservation reach it at once.
function budgetFor(
  apiKey: string,
  input: BudgetConfigInput,
  clock: Clock,
  sub: string,
  redis = connect(),
): Budget {
  const config = resolveBudgetConfig({ pacing: 'burst', ...input });
  return scope.budget({ redis, apiKey, config, clock, prefix: `${prefix}:${sub}` });
}

const granted = (outcomes: AcquireOutcome[]): number => outcomes.filter((o) => o.kind === 'granted').length;

afterAll(() => scope.close());

describe('configured quotas under concurrency', () => {
  it('grants exactly the daily quota to 200 concurrent reservations over 4 connections', async () => {
    const clock = new TestClock(Date.UTC(2026, 10, 21, 12, 0, 0));
    const cfg = { requestsPerMinute: 100_000, dailyQuota: 37 };
    const four = [0, 1, 2, 3].map(() => budgetFor('ffx_live_b2b_concurrency', cfg, clock, 'conc'));
    const outcomes = await Promise.all(
      Array.from({ length: 200 }, (_, i) => four[i % 4]!.acquire('facts/full')),
    );
    expect(granted(outcomes)).toBe(37);
    const refused = outcomes.filter((o) => o.kind === 'quota');
    expect(refused).toHaveLength(163);
    for (const o of refused) {
      expect(o).toMatchObject({
        quota: 'daily',
        source: 'configured',
        scope: 'api_key',
        untilMs: Date.UTC(2026, 10, 22),
      });
    }
    const d = await four[0]!.describe();
    expect(d.daily).toMatchObject({ period: '2026-11-21', used: 37, limit: 37, remaining: 0 });
    expect(d.daily.exhaustedUntil).toBe('2026-11-22T00:00:00.000Z');
    expect(d.monthly.used).toBe(37);
  });

  it('counts an account over all its keys, and keeps telemetry outside the monthly quota', async () => {
    const clock = new TestClock(Date.UTC(2026, 10, 21, 12, 0, 0));
    const cfg = { requestsPerMinute: 100_000, accountId: 'acct-1', monthlyQuota: 10, dailyQuota: 12 };
    const a = budgetFor('ffx_live_b2b_key_a', cfg, clock, 'acct');
    const b = budgetFor('ffx_live_b2b_key_b', cfg, clock, 'acct');
    const facts = await Promise.all(
      Array.from({ length: 30 }, (_, i) => (i % 2 ? a : b).acquire('facts/full')),
    );
    expect(granted(facts)).toBe(10);
    expect(facts.find((o) => o.kind === 'quota')).toMatchObject({ quota: 'monthly', scope: 'account' });
    // The monthly quota is spent, but telemetry is outside it: it only meets the daily quota (12).
    const telemetry = await Promise.all(Array.from({ length: 5 }, () => a.acquire('telemetry/proof-open')));
    expect(granted(telemetry)).toBe(2);
    expect(telemetry.find((o) => o.kind === 'quota')).toMatchObject({ quota: 'daily', scope: 'account' });
    const d = await b.describe();
    expect(d.daily).toMatchObject({ used: 12, limit: 12, remaining: 0 });
    expect(d.monthly).toMatchObject({ used: 10, limit: 10, remaining: 0 });
  });

  it('refunds a reservation whose request was never sent', async () => {
    const clock = new TestClock(Date.UTC(2026, 10, 21, 12, 0, 0));
    const budget = budgetFor(
      'ffx_live_b2b_refund',
      { requestsPerMinute: 100, dailyQuota: 1 },
      clock,
      'refund',
    );
    const first = await budget.acquire('facts/full');
    if (first.kind !== 'granted') throw new Error(`expected a grant, got ${first.kind}`);
    expect((await budget.acquire('facts/full')).kind).toBe('quota');
    await budget.release(first.permit, { sent: false });
    expect((await budget.describe()).daily.used).toBe(0);
    expect((await budget.acquire('facts/full')).kind).toBe('granted');
  });
});

describe('quota periods follow the injected clock', () => {
  it('refuses at 23:59:59 UTC and grants again after midnight', async () => {
    const clock = new TestClock(Date.UTC(2026, 10, 21, 23, 59, 58, 700)).freeze();
    const budget = budgetFor('ffx_live_b2b_day', { requestsPerMinute: 1000, dailyQuota: 2 }, clock, 'day');
    expect((await budget.acquire('facts/full')).kind).toBe('granted');
    expect((await budget.acquire('facts/full')).kind).toBe('granted');
    const refused = await budget.acquire('facts/full');
    expect(refused).toMatchObject({ kind: 'quota', quota: 'daily', untilMs: Date.UTC(2026, 10, 22) });
    clock.set(Date.UTC(2026, 10, 22, 0, 0, 0, 50));
    const next = await budget.acquire('facts/full');
    expect(next.kind).toBe('granted');
    if (next.kind === 'granted') expect(next.permit.day).toBe('2026-11-22');
    expect((await budget.describe()).daily).toMatchObject({
      period: '2026-11-22',
      used: 1,
      remaining: 1,
      exhaustedUntil: null,
    });
  });

  it('refuses on the last day of the month and grants again on the 1st', async () => {
    const clock = new TestClock(Date.UTC(2026, 10, 30, 23, 59, 58, 700)).freeze();
    const budget = budgetFor(
      'ffx_live_b2b_month',
      { requestsPerMinute: 1000, monthlyQuota: 2 },
      clock,
      'month',
    );
    expect(granted(await Promise.all([1, 2, 3].map(() => budget.acquire('facts/core'))))).toBe(2);
    const refused = await budget.acquire('facts/core');
    expect(refused).toMatchObject({ kind: 'quota', quota: 'monthly', untilMs: Date.UTC(2026, 11, 1) });
    if (refused.kind === 'quota') expect(refused.message).toContain('2026-12-01T00:00:00.000Z');
    clock.set(Date.UTC(2026, 11, 1, 0, 0, 0, 50));
    expect((await budget.acquire('facts/core')).kind).toBe('granted');
    expect((await budget.describe()).monthly).toMatchObject({ period: '2026-12', used: 1 });
  });
});

describe("the server's quota 429 (real emulator)", () => {
  let emulator: TestEmulator;
  const clock = new TestClock();
  beforeAll(async () => {
    emulator = await startTestEmulator({ clock });
  });
  afterAll(async () => {
    await emulator?.close();
  });

  it('records used/limit from the 429 body, sends nothing more until midnight, then resumes', async () => {
    const apiKey = emulator.keys.quotaLimited; // key daily quota 3 (account daily 5)
    const client = new FilingsClient({ baseUrl: emulator.url, apiKey, clock });
    const budget = budgetFor(apiKey, { requestsPerMinute: 100 }, clock, 'server-quota');
    // Frozen after the emulator's start-up: midnight comes only when the test moves the clock there.
    clock.freeze().set(Date.UTC(2026, 10, 21, 23, 59, 57));
    try {
      const statuses: (number | string)[] = [];
      for (let i = 0; i < 6; i++) {
        const o = await budget.acquire('issuer/reference');
        if (o.kind !== 'granted') {
          statuses.push(o.kind);
          continue;
        }
        try {
          const res = await client.issuerReference({ ticker: 'AAPL' });
          await budget.observe(o.permit, res.rateLimit);
          statuses.push(res.status);
        } catch (err) {
          if (!(err instanceof QuotaExceededError)) throw err;
          const q = await budget.onQuotaExceeded(o.permit, err);
          expect(q).toMatchObject({ quota: 'daily', scope: 'api_key', untilMs: Date.UTC(2026, 10, 22) });
          statuses.push(429);
        }
      }
      // Three admitted, one 429 teaches the ledger, then the budget itself refuses: no second 429.
      expect(statuses).toEqual([200, 200, 200, 429, 'quota', 'quota']);
      const d = await budget.describe();
      expect(d.keyFingerprint).toBe(keyFingerprint(apiKey));
      expect(d.daily).toMatchObject({
        used: TEST_QUOTAS.keyDaily,
        limit: TEST_QUOTAS.keyDaily,
        remaining: 0,
      });
      expect(d.daily.exhaustedUntil).toBe('2026-11-22T00:00:00.000Z');
      expect(d.serverLimitPerMinute).toBe(1000);

      // The emulator's minute also ends at midnight: the gate stays quiet for the 1 s safety margin.
      clock.set(Date.UTC(2026, 10, 22) + 1000 + 50);
      const after = await budget.acquire('issuer/reference');
      expect(after.kind).toBe('granted');
      if (after.kind === 'granted') {
        const res = await client.issuerReference({ ticker: 'AAPL' });
        await budget.observe(after.permit, res.rateLimit);
        expect(res.status).toBe(200);
      }
    } finally {
      await client.close();
    }
  });
});
