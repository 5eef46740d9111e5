/**
 * `filings-export cancel`: a queued snapshot's jobs are removed and its record says cancelled, by
 * whom and when, with the budget and a published snapshot untouched; `status` and the metrics show
 * it; a running snapshot's part held by a worker (the emulator holds its answer) ends on its own
 * and its result is refused; `run --retry` starts the snapshot again and it publishes. Real CLI
 * processes, a real worker process, real Redis, the emulator over HTTP.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Delay } from '../../src/emulator/index.js';
import { serveMetrics } from '../../src/pipeline/metrics-endpoint.js';
import { partJobId, publishJobId } from '../../src/pipeline/queue/ids.js';
import { ended, spawnWorker, startCli, terminateAll, type SpawnedWorker } from '../helpers/processes.js';
import { startPipelineHarness, type PipelineHarness } from '../helpers/pipeline.js';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'filings-export.mjs');

/** The emulator's latency wait as a gate: while closed, API answers wait until it opens. */
class Gate {
  private closed = false;
  private waiting: (() => void)[] = [];
  private onHeld: (() => void)[] = [];
  held = 0;
  readonly delay: Delay = (_ms, signal) => {
    if (!this.closed) return Promise.resolve();
    this.held++;
    for (const f of this.onHeld.splice(0)) f();
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      signal.addEventListener('abort', () => resolve(), { once: true });
    });
  };
  close(): void {
    this.closed = true;
  }
  open(): void {
    this.closed = false;
    for (const f of this.waiting.splice(0)) f();
  }
  /** Resolves once a request waits at the gate. */
  heldOne(): Promise<void> {
    return this.held > 0 ? Promise.resolve() : new Promise((r) => this.onHeld.push(r));
  }
}

async function cli(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: unknown; out: string; err: string }> {
  const c = startCli(BIN, args, env);
  const code = await ended(c.child);
  return { code, out: c.stdout(), err: c.stderr() };
}

/** Polls `check` until it holds; bounded, never a fixed sleep standing in for an event. */
async function until(what: string, check: () => Promise<boolean>, tries = 600): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`gave up waiting for ${what}`);
}

describe('filings-export cancel', () => {
  const gate = new Gate();
  let h: PipelineHarness;
  let worker: SpawnedWorker | undefined;
  beforeAll(async () => {
    h = await startPipelineHarness({ emulator: { latencyMs: 1, delay: gate.delay } });
  });
  afterAll(async () => {
    gate.open();
    if (worker) await terminateAll([worker.child]);
    await h?.close();
  });

  it('cancels a queued snapshot: jobs removed, who and when recorded, budget and published snapshots untouched', async () => {
    const workers = await h.startWorkers();
    const pub = await h.runToEnd(h.spec(['WMT'], ['series_catalog'], 'cancel-published'));
    await workers.close(2000);
    expect(pub.state).toBe('published');
    const manifest = await readFile(pub.manifest ?? '', 'utf8');

    // No worker runs: the snapshot stays queued while `run --wait` follows it.
    const run = startCli(
      BIN,
      ['run', '--wait', '--tickers', 'AAPL,TSLA', '--datasets', 'series_catalog', '--snapshot-id', 'cq'],
      h.env,
    );
    await run.saysOnStderr('snapshot cq: enqueued 2 parts');
    expect(await h.ctx.partsQueue.getJobCounts('waiting')).toEqual({ waiting: 2 });
    const budgetBefore = await h.budget.describe();

    const cancelled = await cli(['cancel', 'cq', '--by', 'alice'], h.env);
    expect(cancelled.code, cancelled.err).toBe(0);
    expect(cancelled.out).toContain('snapshot cq cancelled: 2 queued parts removed\n');
    expect(cancelled.out).toMatch(
      /cancelled by alice at \d{4}-\d\d-\d\dT[\d:.]+Z; start it again with: filings-export run --snapshot-id cq --retry/,
    );
    // The follower sees the cancel: it ends with the record's line and exit 1.
    expect(await ended(run.child)).toBe(1);
    expect(run.stderr()).toContain('snapshot cq cancelled: cancelled by alice at');
    expect(JSON.parse(run.stdout().trim())).toMatchObject({ snapshot_id: 'cq', status: 'cancelled' });

    const rec = await h.ctx.store.view('cq');
    expect(rec?.state).toBe('cancelled');
    expect(rec?.cancelled?.by).toBe('alice');
    expect(rec?.cancelled?.atMs).toBe(rec?.finishedAtMs);
    expect(await h.ctx.partsQueue.getJobCounts('waiting', 'delayed', 'prioritized', 'active')).toEqual({
      waiting: 0,
      delayed: 0,
      prioritized: 0,
      active: 0,
    });
    expect(await h.ctx.snapshotsQueue.getJobState(publishJobId('cq'))).toBe('unknown');
    const budgetAfter = await h.budget.describe();
    expect([budgetAfter.daily.used, budgetAfter.monthly.used]).toEqual([
      budgetBefore.daily.used,
      budgetBefore.monthly.used,
    ]);
    expect((await h.ctx.store.view('cancel-published'))?.state).toBe('published');
    expect(await readFile(pub.manifest ?? '', 'utf8')).toBe(manifest);

    const status = await cli(['status', 'cq'], h.env);
    expect(status.out).toContain('snapshot cq: CANCELLED');
    expect(status.out).toContain('message: cancelled by alice at');
    const json = JSON.parse((await cli(['status', 'cq', '--json'], h.env)).out) as {
      state: string;
      cancelled: { by: string };
    };
    expect(json).toMatchObject({ state: 'cancelled', cancelled: { by: 'alice' } });

    const served = await serveMetrics(h, { port: 0 });
    try {
      const text = await (await fetch(`${served.server.url}/metrics`)).text();
      expect(text).toContain('filings_export_newest_snapshot{state="cancelled"} 1');
      expect(text).toContain('filings_export_newest_snapshot{state="running"} 0');
    } finally {
      await served.close();
    }

    // Nothing left to cancel: each says why, with a non-zero exit.
    const again = await cli(['cancel', 'cq'], h.env);
    expect(again.code).toBe(1);
    expect(again.err).toContain('snapshot cq is cancelled (cancelled by alice at');
    expect(again.err).toContain('only a queued, waiting or running snapshot can be cancelled');
    const published = await cli(['cancel', 'cancel-published'], h.env);
    expect(published.code).toBe(1);
    expect(published.err).toContain(
      'snapshot cancel-published is published; only a queued, waiting or running snapshot',
    );
    const unknown = await cli(['cancel', 'no-such-snapshot'], h.env);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toContain('snapshot no-such-snapshot: no such snapshot');
  }, 180_000);

  it('refuses once publishing has begun, and a publish that crosses a cancel leaves the record published', async () => {
    const spec = h.spec(['AAPL'], ['series_catalog'], 'cp');
    await h.ctx.enqueue(spec);
    // Take the publish job as a control worker would, so it is active (a worker with no processor).
    const { Worker } = await import('bullmq');
    const taker = new Worker(h.ctx.names.snapshots, null, {
      connection: h.ctx.redis,
      prefix: h.config.redis.prefix,
    });
    try {
      // Its one part removed, the publish job is next.
      await h.ctx.partsQueue.remove(partJobId('cp', 'series_catalog', 'AAPL'));
      const job = await taker.getNextJob('tok');
      expect(job?.id).toBe(publishJobId('cp'));
      const refused = await cli(['cancel', 'cp'], h.env);
      expect(refused.code).toBe(1);
      expect(refused.err).toContain(
        'snapshot cp is being published (its parts have all ended); too late to cancel it',
      );
      expect((await h.ctx.store.view('cp'))?.state).toBe('running');
      await job?.moveToFailed(new Error('taken by the test'), 'tok', false);
    } finally {
      await taker.close();
    }
    // The two may still cross: the files are out, so the record says published, not cancelled.
    expect(await h.ctx.store.cancel('cp', 'dave')).toBe(true);
    expect(await h.ctx.store.published('cp', '/out/_snapshots/cp/manifest.json')).toBe(true);
    const rec = await h.ctx.store.view('cp');
    expect(rec).toMatchObject({ state: 'published', cancelled: null, message: null });
  });

  it('a part a worker holds ends on its own and is refused; run --retry starts the snapshot again and it publishes', async () => {
    gate.close();
    worker = spawnWorker(BIN, ['worker'], {
      env: { ...h.env, FILINGS_EXPORT_CONCURRENCY: '1', LOG_LEVEL: 'info' },
    });
    await worker.ready;
    const args = [
      'run',
      '--tickers',
      'AAPL,TSLA,NVDA',
      '--datasets',
      'series_catalog',
      '--snapshot-id',
      'cr',
    ];
    expect((await cli(args, h.env)).code).toBe(0);
    await gate.heldOne();
    const requestsAtCancel = (await h.stats()).total.requests;

    const cancelled = await cli(['cancel', 'cr', '--by', 'bob'], h.env);
    expect(cancelled.code, cancelled.err).toBe(0);
    expect(cancelled.out).toContain(
      'snapshot cr cancelled: 2 queued parts removed; 1 part held by a worker will end on its own, result discarded',
    );
    gate.open();
    // The held part ends, then the publish job it waited for runs and refuses the cancelled snapshot.
    await until('the held part and the publish job to end', async () => {
      const counts = await h.ctx.partsQueue.getJobCounts('active', 'waiting');
      const parent = await h.ctx.snapshotsQueue.getJobState(publishJobId('cr'));
      return counts.active === 0 && counts.waiting === 0 && (parent === 'failed' || parent === 'unknown');
    });
    const rec = await h.ctx.store.view('cr');
    expect(rec?.state).toBe('cancelled');
    expect(rec?.cancelled?.by).toBe('bob');
    expect(rec?.progress.series_catalog).toMatchObject({ done: 0, failed: 0, pending: 3 });
    // The held request (the emulator counts it once answered) was the only one: the removed parts sent none.
    expect(gate.held).toBe(1);
    expect((await h.stats()).total.requests).toBe(requestsAtCancel + 1);
    expect(worker.log()).toContain('part result discarded');

    const retry = startCli(BIN, [...args, '--retry', '--wait'], h.env);
    expect(await ended(retry.child), retry.stderr()).toBe(0);
    expect(retry.stderr()).toContain('snapshot cr: re-enqueued');
    const line = JSON.parse(retry.stdout().trim().split('\n').pop() ?? 'null') as {
      status: string;
      rows: Record<string, number>;
    };
    expect(line.status).toBe('published');
    expect(line.rows.series_catalog).toBeGreaterThan(0);
    const after = await h.ctx.store.view('cr');
    expect(after?.cancelled).toBeNull();
    expect(after?.retries).toBe(1);
  }, 180_000);
});
