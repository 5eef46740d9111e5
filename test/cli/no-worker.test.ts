/**
 * No worker on the parts queue: `run --wait` and `status` say so in words, with how to start one,
 * once `queue.no_worker_after_ms` has passed with none connected and no part ending (tiny here,
 * 20 s by default), and stop saying it when a worker starts. Real CLI processes, real Redis, the
 * emulator over HTTP; the line's rule itself against set instants, never the real clock.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectedWorkers, noWorkerLine } from '../../src/pipeline/record/worker-presence.js';
import type { DatasetProgress, SnapshotView } from '../../src/pipeline/record/snapshot-states.js';
import { ended, spawnWorker, startCli, terminateAll } from '../helpers/processes.js';
import { startPipelineHarness, type PipelineHarness } from '../helpers/pipeline.js';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'filings-export.mjs');

async function cliOutput(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: unknown; out: string; err: string }> {
  const c = startCli(BIN, args, env);
  const code = await ended(c.child);
  return { code, out: c.stdout(), err: c.stderr() };
}

const NO_WORKER = 'no worker is consuming the parts queue filings-export-parts';

describe('no worker on the parts queue', () => {
  let h: PipelineHarness;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    h = await startPipelineHarness();
    dir = await mkdtemp(join(tmpdir(), 'fx-no-worker-'));
    const config = join(dir, 'config.yaml');
    await writeFile(config, 'queue:\n  no_worker_after_ms: 0\n');
    env = { ...h.env, FILINGS_EXPORT_CONFIG: config };
  });
  afterAll(async () => {
    await h?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('counts the workers BullMQ counts, from CLIENT LIST', async () => {
    const count = (): Promise<number> =>
      connectedWorkers(h.ctx.redis, h.config.redis.prefix, h.ctx.names.parts);
    expect(await count()).toBe(0);
    const running = await h.startWorkers({ parts: true, control: false });
    expect(await count()).toBe(1);
    expect(await h.ctx.partsQueue.getWorkersCount()).toBe(1);
    // The control worker is on the other queue: it does not consume parts.
    expect(await connectedWorkers(h.ctx.redis, h.config.redis.prefix, h.ctx.names.snapshots)).toBe(0);
    await running.close(2000);
    expect(await count()).toBe(0);
  });

  it('says it once nothing moved for queue.no_worker_after_ms, only while parts are left', () => {
    const progress = (pending: number): Record<string, DatasetProgress> => ({
      series_catalog: {
        total: 2,
        done: 2 - pending,
        not_found: 0,
        bad_request: 0,
        failed: 0,
        pending,
        rows: 0,
        reused: 0,
      },
    });
    const record = (
      state: SnapshotView['state'],
      pending = 2,
    ): Pick<SnapshotView, 'state' | 'updatedAtMs' | 'progress'> => ({
      state,
      updatedAtMs: 1_000_000,
      progress: progress(pending),
    });
    const line = (over: Partial<Parameters<typeof noWorkerLine>[0]>): string | null =>
      noWorkerLine({
        record: record('running'),
        workers: 0,
        nowMs: 1_020_000,
        afterMs: 20_000,
        queue: 'q-parts',
        ...over,
      });
    expect(line({ nowMs: 1_019_999 })).toBeNull();
    expect(line({})).toBe(
      'no worker is consuming the parts queue q-parts (none connected; no part ended for 20 s): ' +
        'start one with `filings-export worker` (same Redis and config), or run the snapshot with --local',
    );
    expect(line({ record: record('enqueuing') })).not.toBeNull();
    expect(line({ workers: 1 })).toBeNull();
    expect(line({ record: record('running', 0) })).toBeNull();
    for (const state of ['published', 'failed', 'stopped', 'cancelled'] as const)
      expect(line({ record: record(state) })).toBeNull();
  });

  it('run --wait and status name the problem and how to start a worker; both stop once one runs', async () => {
    const id = 'no-worker-1';
    const args = [
      'run',
      '--wait',
      '--tickers',
      'AAPL,WMT',
      '--datasets',
      'series_catalog',
      '--snapshot-id',
      id,
    ];
    const run = startCli(BIN, args, env);
    let worker: ReturnType<typeof spawnWorker> | undefined;
    try {
      await run.saysOnStderr(NO_WORKER);
      expect(run.stderr()).toContain('start one with `filings-export worker`');
      expect(run.stderr()).toContain('or run the snapshot with --local');

      const before = await cliOutput(['status', id], env);
      expect(before.code, before.err).toBe(0);
      expect(before.out).toContain(`waiting: ${NO_WORKER}`);
      expect(before.out).toContain('filings-export worker');
      const json = await cliOutput(['status', id, '--json'], env);
      expect((JSON.parse(json.out) as { no_worker: string | null }).no_worker).toContain(NO_WORKER);

      worker = spawnWorker(BIN, ['worker'], { env: { ...env, LOG_LEVEL: 'info' } });
      await worker.ready;
      await run.saysOnStderr(`snapshot ${id}: a worker is consuming the parts queue now`);
      expect(await ended(run.child), run.stderr()).toBe(0);
      expect(JSON.parse(run.stdout().trim().split('\n').pop() ?? 'null')).toMatchObject({
        snapshot_id: id,
        status: 'published',
      });
      const after = await cliOutput(['status', id], env);
      expect(after.out).toContain('PUBLISHED');
      expect(after.out).not.toContain('no worker');
    } finally {
      await terminateAll([run.child, ...(worker ? [worker.child] : [])]);
    }
  });
});
