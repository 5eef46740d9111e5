/**
 * Planning against the budget in real Redis (usage spent through the ledger), the refusal of a
 * plan that cannot fit the month, and the configuration's validation, the limiter and the
 * concurrency rule. Expected numbers are derived from the configured quotas and rates.
 */
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import {
  assertPlanFits,
  createBudget,
  resolveBudgetConfig,
  type Budget,
  type BudgetConfigInput,
} from '../../src/budget/index.js';
import { concurrencyFor, limiterFor } from '../../src/pipeline/part/worker-limits.js';
import { BudgetError, ConfigError } from '../../src/errors.js';
import { TestClock } from '../helpers/clock.js';

const prefix = `test:budget-plan:${process.pid}`;
const redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: null });
const budgets: Budget[] = [];
let n = 0;

afterAll(async () => {
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length) await redis.del(...keys);
  await Promise.all(budgets.map((b) => b.close()));
  await redis.quit();
});

/** A budget whose ledger already holds `spent` requests of today (the 21st) at `at`. */
async function budgetWith(
  input: BudgetConfigInput,
  spent: number,
  at = Date.UTC(2026, 10, 21, 18, 0, 0),
): Promise<Budget> {
  const clock = new TestClock(at);
  const b = createBudget({
    redis,
    apiKey: `ffx_live_b2b_plan_${++n}`,
    config: resolveBudgetConfig({ pacing: 'burst', requestsPerMinute: 100_000, ...input }),
    clock,
    prefix,
  });
  budgets.push(b);
  for (let i = 0; i < spent; i++) expect((await b.acquire('facts/full')).kind).toBe('granted');
  return b;
}

describe('planning a snapshot', () => {
  it('states the duration at the effective rate and that it fits today and this month', async () => {
    const b = await budgetWith(
      { requestsPerMinute: 120, share: 0.5, dailyQuota: 1000, monthlyQuota: 20_000 },
      10,
    );
    const plan = await b.plan(300);
    expect(plan).toMatchObject({
      requests: 300,
      effectiveRequestsPerMinute: 60,
      fitsToday: true,
      fitsMonth: true,
      ok: true,
      days: 1,
    });
    expect(plan.expectedDurationMs).toBe((300 / 60) * 60_000);
    expect(plan.remainingToday).toBe(990);
    expect(plan.remainingThisMonth).toBe(19_990);
    expect(plan.message).toContain('300 requests at 60 requests/min: about 5.0 min');
    expect(plan.message).toContain("fits today's quota (990 left of 1,000)");
    assertPlanFits(plan);
  });

  it('warns when it needs more days than today, and counts them', async () => {
    const b = await budgetWith({ dailyQuota: 100, monthlyQuota: 10_000 }, 40);
    const plan = await b.plan(250);
    // 60 left today, then 100 a day: 2 more days for the other 190.
    expect(plan).toMatchObject({ fitsToday: false, fitsMonth: true, ok: true, remainingToday: 60, days: 3 });
    expect(plan.message).toContain(
      "does not fit today's quota (60 left of 100): it pauses at 2026-11-22T00:00:00.000Z",
    );
    expect(plan.expectedFinishAt.startsWith('2026-11-23')).toBe(true);
  });

  it('refuses a snapshot that cannot fit this month, naming the numbers, unless multi-day is allowed', async () => {
    const b = await budgetWith({ monthlyQuota: 500 }, 120);
    const plan = await b.plan(400);
    expect(plan).toMatchObject({ fitsMonth: false, ok: false, remainingThisMonth: 380 });
    expect(() => assertPlanFits(plan)).toThrow(BudgetError);
    try {
      assertPlanFits(plan);
    } catch (err) {
      expect(err).toMatchObject({ code: 'PLAN_DOES_NOT_FIT' });
      expect((err as Error).message).toContain(
        "does NOT fit this month's quota: needs 400 but only 380 of 500 remain until 2026-12-01T00:00:00.000Z",
      );
      expect((err as Error).message).toContain('--allow-multi-day');
    }
    const allowed = await b.plan(400, { allowMultiDay: true });
    expect(allowed.ok).toBe(true);
    expect(allowed.message).toContain('multi-day is allowed');
    // Telemetry is outside the monthly quota: the same number of requests fits when it is telemetry.
    expect((await b.plan(400, { telemetryRequests: 30 })).ok).toBe(true);
  });

  it('describes the budget for status', async () => {
    const b = await budgetWith({ requestsPerMinute: 90, dailyQuota: 50, accountId: 'acct-plan' }, 5);
    const d = await b.describe();
    expect(d).toMatchObject({
      accountId: 'acct-plan',
      configuredRequestsPerMinute: 90,
      effectiveRequestsPerMinute: 90,
      serverLimitPerMinute: null,
      window: { sent: 5, allowed: 90, inFlight: 5 },
      holds: [],
      daily: {
        period: '2026-11-21',
        used: 5,
        limit: 50,
        remaining: 45,
        exhaustedUntil: null,
        resetsAt: '2026-11-22T00:00:00.000Z',
      },
      monthly: {
        period: '2026-11',
        used: 5,
        limit: null,
        remaining: null,
        resetsAt: '2026-12-01T00:00:00.000Z',
      },
    });
    expect(d.keyFingerprint).toMatch(/^[0-9a-f]{16}$/);
  });
});

describe('configuration', () => {
  it('fills in defaults and names the field of a bad value', () => {
    expect(resolveBudgetConfig({ requestsPerMinute: 120 })).toMatchObject({
      requestsPerMinute: 120,
      share: 1,
      dailyQuota: null,
      monthlyQuota: null,
      pacing: 'even',
      safetyMarginMs: 1000,
    });
    expect(() => resolveBudgetConfig({ share: 1.5 })).toThrow(
      new ConfigError('budget.share: must be between 0 and 1 (got 1.5)'),
    );
    expect(() => resolveBudgetConfig({ requestsPerMinute: 0 }, 'config.budget')).toThrow(
      'config.budget.requestsPerMinute: must be greater than 0 (got 0)',
    );
    expect(() => resolveBudgetConfig({ pacing: 'fast' as never })).toThrow(
      'budget.pacing: must be even or burst (got "fast")',
    );
    expect(() => resolveBudgetConfig({ requestsPerMinut: 5 } as never)).toThrow(
      'budget.requestsPerMinut is not a budget setting',
    );
  });

  it('gives BullMQ a 60 s limiter at the effective rate and enough concurrency to fill it', () => {
    const config = resolveBudgetConfig({ requestsPerMinute: 300, share: 0.8 });
    expect(limiterFor(config)).toEqual({ max: 240, duration: 60_000 });
    // 240/min for 3 s jobs = 12 in flight (Little's law), x2 headroom, over 2 processes.
    expect(concurrencyFor({ config, jobDurationMs: 3000, workers: 2 })).toBe(12);
    expect(concurrencyFor({ config, jobDurationMs: 10 })).toBe(1);
  });
});
