/**
 * withBudget (src/pipeline/part/part-budget.ts) inside real BullMQ workers (real Redis, real emulator over HTTP): an exhausted daily
 * quota delays the part jobs until the next UTC midnight of the injected clock without spending
 * an attempt, records the wait for status and the manifest, and resumes by itself; per-minute
 * 429s put a job back without spending attempts, up to maxRateLimitRequeues, then fail it clearly.
 */
import { Queue, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, inject, it } from 'vitest';
import { FilingsClient } from '../../src/api/index.js';
import {
  createBudget,
  resolveBudgetConfig,
  type Budget,
  type BudgetConfigInput,
} from '../../src/budget/index.js';
import { concurrencyFor, limiterFor } from '../../src/pipeline/part/worker-limits.js';
import { withBudget } from '../../src/pipeline/part/part-budget.js';
import { SnapshotStore } from '../../src/pipeline/record/snapshot-store.js';
import { TestClock } from '../helpers/clock.js';
import { postOperation, startTestEmulator, type TestEmulator } from '../helpers/emulator.js';

const prefix = `test:budget-bullmq:${process.pid}`;
const bullPrefix = `test-budget-bullmq-${process.pid}`;
let seq = 0;
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
afterAll(async () => {
  const r = new Redis(inject('redisUrl'));
  const keys = [...(await r.keys(`${prefix}:*`)), ...(await r.keys(`${bullPrefix}:*`))];
  if (keys.length) await r.del(...keys);
  await r.quit();
});

interface Harness {
  emulator: TestEmulator;
  queue: Queue;
  budget: Budget;
  store: SnapshotStore;
  client: FilingsClient;
  /** Sets the clock to `startAt` (when given), adds one job per ticker and waits until all finished. */
  run(tickers: string[], attempts?: number, startAt?: number): Promise<Job[]>;
}

async function harness(opts: {
  clock: TestClock;
  emulator: Parameters<typeof startTestEmulator>[0];
  budget: BudgetConfigInput;
}): Promise<Harness> {
  const emulator = await startTestEmulator({ clock: opts.clock, ...opts.emulator });
  cleanups.push(() => emulator.close());
  const connection = { url: inject('redisUrl'), maxRetriesPerRequest: null };
  const name = `parts-${++seq}`;
  const queue = new Queue(name, { connection, prefix: bullPrefix });
  cleanups.push(async () => {
    await queue.obliterate({ force: true });
    await queue.close();
  });
  const config = resolveBudgetConfig(opts.budget);
  const budget = createBudget({
    redis: inject('redisUrl'),
    apiKey: emulator.apiKey,
    config,
    clock: opts.clock,
    prefix: `${prefix}:${seq}`,
  });
  cleanups.push(() => budget.close());
  const storeRedis = new Redis(inject('redisUrl'));
  cleanups.push(async () => void (await storeRedis.quit()));
  const store = new SnapshotStore(storeRedis, {
    prefix: `${prefix}:${seq}`,
    queueBase: 'q',
    recordTtlSeconds: 3600,
    now: () => opts.clock.now(),
  });
  const client = new FilingsClient({ baseUrl: emulator.url, apiKey: emulator.apiKey, clock: opts.clock });
  cleanups.push(() => client.close());
  const worker = new Worker(
    name,
    async (job: Job<{ ticker: string }>, token?: string) =>
      withBudget(
        budget,
        {
          job,
          token,
          rateLimiter: queue,
          operation: 'issuer/reference',
          snapshotId: 'snap-1',
          part: `issuer_reference/${job.data.ticker}`,
          store,
          label: `issuer ${job.data.ticker}`,
        },
        async (permit) => {
          const res = await client.issuerReference({ ticker: job.data.ticker });
          await permit.observe(res.rateLimit);
          return { status: res.status, finishedAt: opts.clock.now() };
        },
      ),
    {
      connection,
      prefix: bullPrefix,
      limiter: limiterFor(config),
      concurrency: concurrencyFor({ config, jobDurationMs: 100 }),
    },
  );
  cleanups.push(() => worker.close());
  return {
    emulator,
    queue,
    store,
    budget,
    client,
    async run(tickers, attempts = 3, startAt) {
      if (startAt !== undefined) opts.clock.set(startAt);
      const jobs = await queue.addBulk(
        tickers.map((ticker) => ({
          name: 'part',
          data: { ticker },
          opts: { jobId: `part-${ticker}`, attempts },
        })),
      );
      const deadline = Date.now() + 30_000;
      for (;;) {
        const c = await queue.getJobCounts('completed', 'failed');
        if ((c.completed ?? 0) + (c.failed ?? 0) === tickers.length) break;
        if (Date.now() > deadline)
          throw new Error(`jobs did not finish: ${JSON.stringify(await queue.getJobCounts())}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      return Promise.all(jobs.map(async (j) => (await queue.getJob(j.id!))!));
    },
  };
}

async function keyStats(
  h: Harness,
): Promise<{ requests: number; status_429: number; rate_limited: number; quota_exceeded: number }> {
  const s = (await (await fetch(`${h.emulator.url}/_emulator/stats`)).json()) as {
    by_key: Record<
      string,
      { requests: number; status_429: number; rate_limited: number; quota_exceeded: number }
    >;
  };
  return s.by_key[h.emulator.keyIds.active]!;
}

// The five companies bundled in data/sec (companyfacts, submissions and the tickers map).
const TICKERS = ['AAPL', 'NVDA', 'TSLA', 'GOOGL', 'WMT'];
const midnight = Date.UTC(2026, 10, 22);

describe('a spent daily quota pauses the part jobs until midnight and resumes them', () => {
  it('server quota: one 429 teaches the ledger, the rest wait without a request; no attempt spent', async () => {
    const clock = new TestClock();
    const h = await harness({ clock, emulator: { dailyQuota: 3 }, budget: { requestsPerMinute: 600 } });
    const jobs = await h.run(TICKERS, 3, midnight - 3_000);
    expect(jobs.map((j) => j.finishedOn !== undefined && j.failedReason === undefined)).toEqual([
      true,
      true,
      true,
      true,
      true,
    ]);
    const after = jobs.filter((j) => (j.returnvalue as { finishedAt: number }).finishedAt >= midnight);
    expect(after).toHaveLength(2);
    // Waiting for the quota spent no attempt: every job finished on its first counted attempt.
    expect(jobs.map((j) => j.attemptsMade)).toEqual([1, 1, 1, 1, 1]);
    // One quota 429 teaches the ledger; a request already in flight then (2 slots) may meet it too.
    const st = await keyStats(h);
    expect(st.requests - st.status_429).toBe(5);
    expect(st.status_429).toBeGreaterThanOrEqual(1);
    expect(st.status_429).toBeLessThanOrEqual(2);
    expect(st.quota_exceeded).toBe(st.status_429);
    const waits = await h.store.quotaWaits('snap-1');
    expect(waits).toHaveLength(1);
    expect(waits[0]).toMatchObject({
      reason: 'quota',
      quota: 'daily',
      source: 'server',
      until: new Date(midnight).toISOString(),
    });
    expect(await h.store.currentQuotaWait('snap-1')).toBeNull();
  });

  it('configured quota: the exporter never sends the request that would exceed it', async () => {
    const clock = new TestClock();
    const h = await harness({ clock, emulator: {}, budget: { requestsPerMinute: 600, dailyQuota: 3 } });
    const jobs = await h.run(TICKERS, 3, midnight - 3_000);
    expect(jobs.every((j) => j.failedReason === undefined)).toBe(true);
    const before = jobs.filter((j) => (j.returnvalue as { finishedAt: number }).finishedAt < midnight);
    expect(before).toHaveLength(3);
    expect(await keyStats(h)).toMatchObject({ requests: 5, status_429: 0 });
    expect(await h.store.quotaWaits('snap-1')).toMatchObject([{ quota: 'daily', source: 'configured' }]);
    expect((await h.budget.describe()).daily).toMatchObject({ period: '2026-11-22', used: 2, remaining: 1 });
  });
});

describe('per-minute 429s', () => {
  it('put the job back without spending attempts, then fail it after maxRateLimitRequeues', async () => {
    const clock = new TestClock();
    const h = await harness({
      clock,
      emulator: { rateLimitPerMinute: 1 },
      budget: { requestsPerMinute: 1, maxRetryAfterMs: 200, safetyMarginMs: 50, maxRateLimitRequeues: 2 },
    });
    clock.set(Date.UTC(2026, 10, 21, 10, 0, 5));
    // Another client spends the key's only request of this minute.
    expect(
      (await postOperation(h.emulator.url, 'issuer/reference', { ticker: 'AAPL' }, h.emulator.apiKey)).status,
    ).toBe(200);
    const [job] = await h.run(['MSFT'], 5);
    expect(job!.failedReason).toMatch(
      /issuer MSFT: rate limited \(429\) 3 times, more than budget\.max_rate_limit_requeues=2/,
    );
    expect(job!.attemptsMade).toBe(1);
    expect(await keyStats(h)).toMatchObject({ requests: 4, rate_limited: 3 });
  });
});
