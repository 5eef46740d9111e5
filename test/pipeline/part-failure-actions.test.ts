/**
 * The part processor's failure step (jobs/export-part/on-failure.ts), one failure action at a
 * time: a real BullMQ job in real Redis, the real snapshot store and outage guard, and the
 * step's other ports injected (the queue's rate limiter and the snapshot stopper record calls).
 */
import { DelayedError, Queue, RateLimitError, UnrecoverableError, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, inject, it } from 'vitest';
import {
  BadRequestError,
  NotFoundError,
  OutputError,
  QuotaExceededError,
  RateLimitedError,
  RequestValidationError,
  ServerError,
  StorageError,
  TransportError,
  UnexpectedStatusError,
  ForbiddenError,
} from '../../src/errors.js';
import { silentLogger } from '../../src/log.js';
import type { ExportPartDeps } from '../../jobs/export-part/deps.js';
import { OutageGuard } from '../../src/pipeline/record/outage.js';
import { SnapshotStore } from '../../src/pipeline/record/snapshot-store.js';
import { startAttempt, type PartAttempt } from '../../jobs/export-part/attempt.js';
import { actOnFailure } from '../../jobs/export-part/on-failure.js';
import { TestClock } from '../helpers/clock.js';

const prefix = `test:part-failure:${process.pid}`;
const bullPrefix = `test-part-failure-${process.pid}`;
const ctx = { operation: 'facts/full', status: 0, rateLimit: {} };
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

/** A port the failure step must not touch. */
function unused<T>(name: string): T {
  return new Proxy(
    {},
    {
      get() {
        throw new Error(`${name} is not used by the failure step`);
      },
    },
  ) as T;
}

interface Scene {
  attempt: PartAttempt;
  store: SnapshotStore;
  job: Job;
  clock: TestClock;
  /** Calls of the queue's rate limiter (ms). */
  holds: number[];
  /** Calls of the snapshot stopper. */
  stops: { snapshotId: string; message: string; job: Job }[];
  /** How often the step reported the part's duration. */
  timed: () => number;
  act(err: unknown): Promise<unknown>;
}

async function scene(opts: { attempts: number; failuresToHold?: number }): Promise<Scene> {
  const n = ++seq;
  const clock = new TestClock(Date.UTC(2026, 10, 20, 12)).freeze();
  const redis = new Redis(inject('redisUrl'));
  cleanups.push(async () => void (await redis.quit()));
  const store = new SnapshotStore(redis, {
    prefix: `${prefix}:${n}`,
    queueBase: 'q',
    recordTtlSeconds: 3600,
    now: () => clock.now(),
  });
  const snapshotId = `snap-${n}`;
  const company = { kind: 'ticker' as const, ticker: 'ACME' };
  await store.create({
    id: snapshotId,
    date: '2026-11-20',
    trigger: 'manual',
    companies: [company],
    datasets: ['facts_full'],
    formats: ['ndjson'],
    outDir: '/nonexistent',
  });
  const queue = new Queue(`parts-${n}`, {
    connection: { url: inject('redisUrl'), maxRetriesPerRequest: null },
    prefix: bullPrefix,
  });
  cleanups.push(async () => {
    await queue.obliterate({ force: true });
    await queue.close();
  });
  const payload = {
    v: 1,
    snapshotId,
    snapshotDate: '2026-11-20',
    dataset: 'facts_full',
    company,
    outDir: '/nonexistent',
  };
  const job = await queue.add('export-part', payload, { attempts: opts.attempts });
  const outage = new OutageGuard(
    redis,
    `${prefix}:${n}:outage`,
    {
      failuresToHold: opts.failuresToHold ?? 3,
      probeBaseMs: 5000,
      probeMaxMs: 60_000,
      maxOutageMs: 3_600_000,
    },
    clock,
  );
  const holds: number[] = [];
  const stops: Scene['stops'] = [];
  const deps: ExportPartDeps = {
    fetcher: unused('fetcher'),
    staged: { createWriter: unused('createWriter') },
    budget: unused('budget'),
    store,
    rateLimiter: { rateLimit: async (ms) => void holds.push(ms) },
    outage,
    maxOutageMs: 3_600_000,
    stopSnapshot: async (id, message, j) => void stops.push({ snapshotId: id, message, job: j }),
    clock,
    logger: silentLogger(),
  };
  const attempt = startAttempt(deps, job, undefined, undefined);
  let timedCalls = 0;
  return {
    attempt,
    store,
    job,
    clock,
    holds,
    stops,
    timed: () => timedCalls,
    act: (err) => actOnFailure(attempt, err, () => void timedCalls++),
  };
}

const partOf = (s: Scene) => s.store.getPart(s.attempt.p.snapshotId, 'facts_full', 'ACME');
const retriesOf = async (s: Scene) => (await s.store.get(s.attempt.p.snapshotId))!.partRetries;

describe('part failure step: one action at a time', () => {
  it('record_not_found: the part ends as not_found, nothing is retried', async () => {
    const s = await scene({ attempts: 3 });
    const pointer = await s.act(new NotFoundError('ACME is not known', { ...ctx, status: 404 }));
    expect(pointer).toMatchObject({ dataset: 'facts_full', ticker: 'ACME', status: 'not_found', rows: 0 });
    expect(await partOf(s)).toEqual(pointer);
    expect(await retriesOf(s)).toBe(0);
    expect(s.timed()).toBe(1);
  });

  it('record_bad_request: a 400, or a request the client refused, ends as bad_request', async () => {
    const s = await scene({ attempts: 3 });
    const pointer = await s.act(new BadRequestError('bad fields', { ...ctx, status: 400 }));
    expect(pointer).toMatchObject({ status: 'bad_request', message: 'bad fields' });
    const t = await scene({ attempts: 3 });
    await t.act(new RequestValidationError('facts/full', 'ticker', 'too long'));
    expect(await partOf(t)).toMatchObject({ status: 'bad_request', message: 'facts/full: ticker: too long' });
  });

  it('stop_snapshot: the part fails, the snapshot is stopped with the message, no retry', async () => {
    const s = await scene({ attempts: 3 });
    const err = s.act(
      new ForbiddenError('API_KEY_REVOKED', 'key revoked: rotate it', { ...ctx, status: 403 }),
    );
    await expect(err).rejects.toThrow(UnrecoverableError);
    await expect(err).rejects.toThrow('snapshot stopped: key revoked: rotate it');
    expect(await partOf(s)).toMatchObject({ status: 'failed', message: 'key revoked: rotate it' });
    expect(s.stops).toHaveLength(1);
    expect(s.stops[0]).toMatchObject({
      snapshotId: s.attempt.p.snapshotId,
      message: 'key revoked: rotate it',
    });
    expect(s.stops[0]!.job.id).toBe(s.job.id);
  });

  it('hold_on_outage: an outage holds the queue until the next probe, spending no attempt', async () => {
    const s = await scene({ attempts: 3, failuresToHold: 1 });
    await expect(s.act(new ServerError('boom', { ...ctx, status: 500 }))).rejects.toThrow(RateLimitError);
    expect(s.holds).toEqual([5000]);
    expect(await partOf(s)).toBeUndefined();
    expect(await retriesOf(s)).toBe(0);
  });

  it('hold_on_outage: below the outage threshold the part is retried like a transient fault', async () => {
    const s = await scene({ attempts: 3, failuresToHold: 3 });
    const e = new TransportError('TRANSPORT_RESET', 'ECONNREFUSED', ctx);
    await expect(s.act(e)).rejects.toBe(e);
    expect(s.holds).toEqual([]);
    expect(await retriesOf(s)).toBe(1);
    expect(await partOf(s)).toBeUndefined();
  });

  it('hold_queue and wait_quota_reset reaching the step are retried while attempts remain', async () => {
    const s = await scene({ attempts: 3 });
    const rate = new RateLimitedError('slow down', { ...ctx, status: 429, retryAfterMs: 1000 });
    await expect(s.act(rate)).rejects.toBe(rate);
    const quota = new QuotaExceededError('daily', { ...ctx, status: 429, quota: 'daily', scope: 'api_key' });
    await expect(s.act(quota)).rejects.toBe(quota);
    expect(await retriesOf(s)).toBe(2);
    expect(s.holds).toEqual([]);
  });

  it('retry: retried while attempts remain, recorded failed (not unrecoverable) on the last', async () => {
    const s = await scene({ attempts: 3 });
    const e = new TransportError('TRANSPORT_TRUNCATED', 'short body', ctx);
    await expect(s.act(e)).rejects.toBe(e);
    expect(await retriesOf(s)).toBe(1);
    expect(await partOf(s)).toBeUndefined();

    const last = await scene({ attempts: 1 });
    await expect(last.act(e)).rejects.toBe(e);
    expect(await retriesOf(last)).toBe(0);
    expect(await partOf(last)).toMatchObject({
      status: 'failed',
      message: 'TRANSPORT_TRUNCATED: short body (attempt 1 of 1)',
    });
  });

  it('retry, only if transient: a 4xx unlisted status or a refused bucket fails at once', async () => {
    const s = await scene({ attempts: 3 });
    await expect(s.act(new UnexpectedStatusError('418', { ...ctx, status: 418 }))).rejects.toThrow(
      UnrecoverableError,
    );
    expect(await partOf(s)).toMatchObject({
      status: 'failed',
      message: 'API_UNEXPECTED_STATUS: 418 (attempt 1 of 3)',
    });
    const refused = await scene({ attempts: 3 });
    await expect(
      refused.act(new StorageError('STORAGE_UNAVAILABLE', 's3://b: access denied', false)),
    ).rejects.toThrow(UnrecoverableError);
    const passing = await scene({ attempts: 3 });
    const gateway = new UnexpectedStatusError('502', { ...ctx, status: 502 });
    await expect(passing.act(gateway)).rejects.toBe(gateway);
    expect(await retriesOf(passing)).toBe(1);
  });

  it('fail: the part fails at its first attempt, whatever attempts remain', async () => {
    const s = await scene({ attempts: 5 });
    const err = s.act(new OutputError('OUTPUT_FAILED', 'ENOSPC: /out/facts'));
    await expect(err).rejects.toThrow(UnrecoverableError);
    await expect(err).rejects.toThrow('OUTPUT_FAILED: ENOSPC: /out/facts (attempt 1 of 5)');
    expect(await partOf(s)).toMatchObject({ status: 'failed' });
    expect(await retriesOf(s)).toBe(0);
  });

  it("BullMQ's own control errors pass through untouched: nothing recorded or timed", async () => {
    const s = await scene({ attempts: 3 });
    const delayed = new DelayedError('later');
    await expect(s.act(delayed)).rejects.toBe(delayed);
    expect(await partOf(s)).toBeUndefined();
    expect(s.timed()).toBe(0);
  });
});
