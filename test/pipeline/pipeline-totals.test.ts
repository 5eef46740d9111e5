/**
 * The manifest's totals are counted, not guessed: requests, 429 answers and retried attempts of a
 * snapshot equal what the emulator counted for the key (real Redis, real HTTP, real workers). And
 * shutting a worker down sends no new request: parts still waiting for a rate-limit slot go back
 * to the queue untouched.
 */
import { readFile } from 'node:fs/promises';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Manifest } from '../../src/output/index.js';
import { partJobId } from '../../src/pipeline/queue/ids.js';
import { statusReport } from '../../src/pipeline/status-view.js';
import { companyKey } from '../../src/pipeline/record/universe.js';
import { TestClock } from '../helpers/clock.js';
import { startPipelineHarness, type EmulatorCounter, type PipelineHarness } from '../helpers/pipeline.js';

const open: PipelineHarness[] = [];
afterAll(async () => {
  for (const h of open) await h.close();
});

function keyCounter(stats: { by_key: Record<string, EmulatorCounter> }, keyId: string): EmulatorCounter {
  return stats.by_key[keyId] ?? { requests: 0, status_429: 0, quota_exceeded: 0, by_status: {} };
}

describe('manifest totals', () => {
  it('count the requests, 429s and retries of the snapshot exactly as the emulator saw them', async () => {
    // The emulator's windows are whole minutes of this clock; the test starts 4 s before one ends.
    const clock = new TestClock(Date.UTC(2026, 10, 21, 2, 0, 0));
    const h = await startPipelineHarness({
      clock,
      emulator: { rateLimitPerMinute: 3 },
      config: { 'budget.pacing': 'burst', 'output.formats': ['parquet'] },
    });
    open.push(h);
    await h.startWorkers();
    const keyId = h.emulator.keyIds.active;
    clock.set(Date.UTC(2026, 10, 21, 2, 0, 56));

    // Another client of the same key spends this window: the snapshot's first request meets a 429.
    for (let i = 0; i < 3; i++) await h.client.issuerReference({ ticker: 'AAPL' });
    // One transient failure: a retried attempt.
    await h.setFaults([{ operation: 'series/catalog', ticker: 'WMT', fault: '503', times: 1 }]);
    const before = keyCounter(await h.stats(), keyId);
    expect(before.requests).toBe(3);

    const rec = await h.runToEnd(h.spec(['WMT', 'AAPL'], ['series_catalog'], 'totals-429-503'));
    expect(rec.state, rec.message ?? '').toBe('published');
    const after = keyCounter(await h.stats(), keyId);
    const manifest = JSON.parse(await readFile(rec.manifest ?? '', 'utf8')) as Manifest;

    const sent = after.requests - before.requests;
    const answered429 = after.status_429 - before.status_429;
    expect(answered429).toBeGreaterThanOrEqual(1);
    expect(after.by_status['503']).toBe(1);
    expect(manifest.totals).toMatchObject({
      requests: sent,
      rate_limited_429: answered429,
      retries: 1,
    });
    // Two parts: one request each, one retry after the 503, and every 429.
    expect(sent).toBe(2 + 1 + answered429);
    expect(statusReport(rec, null).requests).toEqual({
      sent,
      rate_limited_429: answered429,
      retried: 1,
    });
  }, 150_000); // at 3 requests a minute, a loaded machine can push the last request into the next 60 s window
});

describe('worker shutdown', () => {
  let h: PipelineHarness | undefined;
  afterEach(async () => {
    await h?.setFaults([]);
  });

  it('puts parts still waiting for their paced slot back in the queue instead of sending them', async () => {
    // 15 requests a minute, paced evenly: one slot every ~4 s, slept inside the processor.
    h = await startPipelineHarness({
      emulator: { latencyMs: 400 },
      config: { 'budget.requests_per_minute': 15, 'budget.pacing': 'even' },
    });
    open.push(h);
    // Pacing starts over with each 60 s window (aligned to the minute): start well inside one, or a
    // new window opening before close() hands the second part a slot of its own.
    const second = new Date().getUTCSeconds();
    if (second > 40) await new Promise((r) => setTimeout(r, (61 - second) * 1000));
    const workers = await h.startWorkers();
    const spec = h.spec(['WMT', 'AAPL', 'TSLA'], ['series_catalog'], 'shutdown-pacing');
    await h.ctx.enqueue(spec);

    // The first part has its request in flight; the other two sleep until their slots.
    const deadline = Date.now() + 10_000;
    while ((await h.stats()).total.requests < 1 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    await workers.close(30_000);

    // Only the request already sent reached the API; it finished, the others were never sent.
    expect((await h.stats()).total.requests).toBe(1);
    const states = await Promise.all(
      spec.companies.map(async (c) => {
        const job = await h!.ctx.partsQueue.getJob(partJobId(spec.id, 'series_catalog', companyKey(c)));
        return job ? await job.getState() : 'removed';
      }),
    );
    expect(states.filter((s) => s === 'completed')).toHaveLength(1);
    // Back in the queue (delayed until now, or already promoted to waiting), not failed.
    expect(states.filter((s) => s === 'delayed' || s === 'waiting')).toHaveLength(2);
    for (const c of spec.companies) {
      const job = await h.ctx.partsQueue.getJob(partJobId(spec.id, 'series_catalog', companyKey(c)));
      if ((await job?.getState()) !== 'completed') expect(job?.attemptsMade, companyKey(c)).toBe(0);
    }
    // Nothing recorded for the parts put back: no attempt spent, no failure.
    const parts = await h.ctx.store.parts(spec.id);
    expect(parts.map((p) => p.status)).toEqual(['done']);
  });

  it('past its deadline, aborts a request in flight and puts the part back without spending an attempt', async () => {
    h = await startPipelineHarness({});
    open.push(h);
    const workers = await h.startWorkers();
    // The response body dribbles out for far longer than the shutdown deadline.
    await h.setFaults([{ operation: 'series/catalog', ticker: 'WMT', fault: 'slow', ms: 2000, times: 1 }]);
    const spec = h.spec(['WMT'], ['series_catalog'], 'shutdown-abort');
    await h.ctx.enqueue(spec);
    const jobId = partJobId(spec.id, 'series_catalog', 'WMT');
    const deadline = Date.now() + 10_000;
    while ((await h.ctx.partsQueue.getJob(jobId))?.processedOn === undefined && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 300)); // the response has started
    await workers.close(200);

    const job = await h.ctx.partsQueue.getJob(jobId);
    expect(['delayed', 'waiting']).toContain(await job?.getState());
    expect(job?.attemptsMade).toBe(0);
    expect(await h.ctx.store.parts(spec.id)).toEqual([]);
  });
});
