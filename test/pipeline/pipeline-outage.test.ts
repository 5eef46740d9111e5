/**
 * API outages (src/pipeline/part/outage.ts) with real Redis, real workers and the real emulator over
 * HTTP, stopped and restarted on the same port: the parts queue holds and probes instead of
 * burning attempts, the snapshot publishes without --retry, status says what happens, and an
 * outage longer than retry.outage_max_ms fails the snapshot with a message saying so.
 */
import { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, inject, it } from 'vitest';
import { partJobId } from '../../src/pipeline/queue/ids.js';
import { OutageGuard } from '../../src/pipeline/part/outage.js';
import { TestClock } from '../helpers/clock.js';
import { startPipelineHarness, type PipelineHarness } from '../helpers/pipeline.js';

const TICKERS = ['AAPL', 'MSFT', 'NVDA', 'TSLA', 'WMT', 'AMZN', 'META', 'GOOGL'];
const open: PipelineHarness[] = [];
afterEach(async () => {
  for (const h of open.splice(0)) await h.close();
});

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function waitFor(what: string, check: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

/** A clock that moves only when told: the guard's arithmetic checked to the millisecond. */
class FrozenClock {
  constructor(private t: number) {}
  now(): number {
    return this.t;
  }
  advance(ms: number): void {
    this.t += ms;
  }
}

describe('OutageGuard', () => {
  const redis = new Redis(inject('redisUrl'));
  afterAll(async () => void (await redis.quit()));
  const settings = { failuresToHold: 3, probeBaseMs: 1000, probeMaxMs: 8000, maxOutageMs: 60_000 };

  it('declares an outage after N failures in a row, lets one probe through, backs off, and ends on an answer', async () => {
    const clock = new FrozenClock(Date.UTC(2026, 10, 24, 12));
    const g = new OutageGuard(redis, `test:outage:${process.pid}:a`, settings, clock);
    expect(await g.gate()).toEqual({ kind: 'open' });
    expect(await g.failed('p1', 'TRANSPORT_RESET: ECONNREFUSED')).toEqual({ kind: 'counting', failures: 1 });
    // An answer in between ends the streak: failures must be consecutive.
    expect(await g.answered()).toBeNull();
    await g.failed('p1', 'x');
    // One part failing again and again is that part's problem, not an outage.
    expect(await g.failed('p1', 'x')).toEqual({ kind: 'counting', failures: 1 });
    expect(await g.failed('p2', 'x')).toEqual({ kind: 'counting', failures: 2 });
    const start = clock.now();
    const v = await g.failed('p3', 'TRANSPORT_RESET: ECONNREFUSED');
    expect(v).toMatchObject({ kind: 'outage', since: start });
    if (v.kind !== 'outage') throw new Error('no outage');
    expect(v.nextProbeMs - start).toBeGreaterThanOrEqual(1000);
    expect(await g.gate()).toMatchObject({ kind: 'hold', untilMs: v.nextProbeMs });

    clock.advance(1100);
    expect(await g.gate()).toMatchObject({ kind: 'probe', since: start });
    // Only one probe at a time: the others keep holding while it is out, and look again soon.
    const held = await g.gate();
    expect(held.kind).toBe('hold');
    if (held.kind === 'hold') expect(held.untilMs - clock.now()).toBeLessThanOrEqual(1000);
    // The probe fails: the next one comes later (doubling), the outage goes on.
    const v2 = await g.failed('p4', 'TRANSPORT_RESET: ECONNREFUSED');
    expect(v2).toMatchObject({ kind: 'outage', since: start });
    if (v2.kind !== 'outage') throw new Error('no outage');
    expect(v2.nextProbeMs - clock.now()).toBeGreaterThanOrEqual(2000);
    expect((await g.describe())?.probes).toBe(1);

    clock.advance(2100);
    expect((await g.gate()).kind).toBe('probe');
    const lasted = await g.answered();
    expect(lasted).toBeGreaterThanOrEqual(3200);
    expect(await g.gate()).toEqual({ kind: 'open' });
    expect(await g.describe()).toBeNull();
  });

  it('gives up after maxOutageMs, and a new enqueue starts afresh', async () => {
    const clock = new FrozenClock(Date.UTC(2026, 10, 24, 12));
    const g = new OutageGuard(redis, `test:outage:${process.pid}:b`, settings, clock);
    for (let i = 0; i < 3; i++) await g.failed(`p${i}`, 'API_UNAVAILABLE: Facts backend unavailable');
    expect(await g.clearIfExpired()).toBe(false);
    clock.advance(60_001);
    expect(await g.gate()).toMatchObject({
      kind: 'expired',
      lastError: 'API_UNAVAILABLE: Facts backend unavailable',
    });
    expect(await g.clearIfExpired()).toBe(true);
    expect(await g.gate()).toEqual({ kind: 'open' });
  });
});

describe('an API outage mid-snapshot', () => {
  const config = {
    'retry.attempts': 3,
    'retry.base_delay_ms': 50,
    'retry.max_delay_ms': 200,
    'retry.outage_after_failures': 3,
    'retry.outage_probe_base_ms': 200,
    'retry.outage_probe_max_ms': 800,
    'worker.concurrency': 4,
  };

  it('holds the queue, keeps every attempt and publishes without --retry once the API is back', async () => {
    const h = await startPipelineHarness({ emulator: { latencyMs: 150 }, config });
    open.push(h);
    await h.startWorkers();
    const spec = h.spec(TICKERS, ['series_catalog', 'issuer_reference'], 'outage-rides-out');
    await h.ctx.enqueue(spec);
    await waitFor(
      'the first parts',
      async () => ((await h.ctx.store.get(spec.id))?.progress.series_catalog?.done ?? 0) >= 1,
    );

    // The API goes away for 4 s: without the hold, 3 attempts 50-200 ms apart end within 1 s.
    await h.emulator.stop();
    await waitFor('the outage to be declared', async () => (await h.ctx.outage.describe()) !== null);
    const { statusReport, outageStatus } = await import('../../src/pipeline/index.js');
    const line = await outageStatus(h.ctx);
    expect(line).toMatch(/^API unreachable since \d{4}-.*, next probe at \d{4}-/);
    const rec = await h.ctx.store.get(spec.id);
    expect(statusReport(rec!, null, [], line).api_outage).toBe(line);
    await sleep(4000);
    await h.emulator.restart();

    const done = await h.runToEnd(spec);
    expect(done.state).toBe('published');
    expect(done.message).toBeNull();
    const parts = await h.ctx.store.parts(spec.id);
    expect(parts).toHaveLength(TICKERS.length * 2);
    expect(parts.filter((p) => p.status !== 'done')).toEqual([]);
    // The hold spent no attempt: every part job is kept (retention.completed_jobs) and none used
    // its last attempt; attemptsMade counts the one that succeeded too.
    for (const p of parts) {
      const job = await h.ctx.partsQueue.getJob(partJobId(spec.id, p.dataset, p.ticker));
      expect(job, `the job of ${p.dataset} ${p.ticker}`).toBeDefined();
      expect(job?.attemptsMade, `${p.dataset} ${p.ticker}`).toBeGreaterThanOrEqual(1);
      expect(job?.attemptsMade, `${p.dataset} ${p.ticker}`).toBeLessThan(h.config.retry.attempts);
    }
    expect(await h.ctx.outage.describe()).toBeNull();
  });

  it('rides out a 5-minute outage (on the injectable clock) without --retry', async () => {
    const clock = new TestClock(Date.UTC(2026, 10, 24, 2, 0, 5));
    const h = await startPipelineHarness({ clock, emulator: { latencyMs: 100 }, config });
    open.push(h);
    await h.startWorkers();
    const spec = h.spec(TICKERS, ['series_catalog'], 'outage-five-minutes');
    await h.ctx.enqueue(spec);
    await waitFor(
      'the first parts',
      async () => ((await h.ctx.store.get(spec.id))?.progress.series_catalog?.done ?? 0) >= 1,
    );
    await h.emulator.stop();
    await waitFor('the outage to be declared', async () => (await h.ctx.outage.describe()) !== null);
    // Five minutes pass on the clock while the queue holds and probes.
    for (let i = 0; i < 10; i++) {
      clock.advance(30_000);
      await sleep(300);
    }
    const during = await h.ctx.outage.describe();
    expect(during).not.toBeNull();
    expect(clock.now() - (during?.since ?? clock.now())).toBeGreaterThanOrEqual(5 * 60_000);
    expect(during?.probes).toBeGreaterThan(0);
    await h.emulator.restart();
    const done = await h.runToEnd(spec);
    expect(done.state).toBe('published');
    expect(done.progress.series_catalog?.done).toBe(TICKERS.length);
    expect(await h.ctx.outage.describe()).toBeNull();
  });

  it('fails the snapshot after retry.outage_max_ms with a message saying so; --retry resumes it', async () => {
    const h = await startPipelineHarness({
      emulator: { latencyMs: 100 },
      config: { ...config, 'retry.outage_max_ms': 1500 },
    });
    open.push(h);
    await h.startWorkers();
    const spec = h.spec(TICKERS.slice(0, 4), ['series_catalog'], 'outage-gives-up');
    await h.emulator.stop();
    const failed = await h.runToEnd(spec);
    expect(failed.state).toBe('failed');
    expect(failed.message).toMatch(/API unreachable since .* longer than retry\.outage_max_ms=1500 ms/);
    expect(failed.message).toContain('--retry');

    await h.emulator.restart();
    const resumed = await h.runToEnd(spec, { retry: true });
    expect(resumed.state).toBe('published');
    expect(resumed.progress.series_catalog?.done).toBe(4);
  });
});
