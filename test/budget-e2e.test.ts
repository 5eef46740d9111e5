/**
 * End to end through the real pipeline (BullMQ flow, part jobs, output module), real Redis and the
 * real emulator over HTTP: a snapshot that meets an exhausted daily quota pauses until the next
 * UTC midnight of the injected clock (3 s away), resumes by itself, fetches nothing twice, says in
 * its manifest that it waited, and publishes files identical to those of an uninterrupted run
 * (apart from the `_fetched_at` lineage timestamps).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { FilingsClient } from '../src/api/index.js';
import { createBudget, type Budget } from '../src/budget/index.js';
import { loadConfig, requireApiKey, type FlagOverride } from '../src/config/load.js';
import { silentLogger } from '../src/log.js';
import { clientFetcher } from '../src/pipeline/client-fetcher.js';
import {
  budgetConfigFrom,
  budgetPrefix,
  openPipeline,
  type PipelineContext,
} from '../src/pipeline/context.js';
import { followSnapshot } from '../src/pipeline/follow.js';
import { outputPorts } from '../src/pipeline/output-adapter.js';
import type { SnapshotRecord, SnapshotSpec } from '../src/pipeline/snapshot-store.js';
import { parseCompany } from '../src/pipeline/universe.js';
import { startWorkers, type RunningWorkers } from '../src/pipeline/worker-runner.js';
import type { DatasetName } from '../src/types.js';
import { TestClock } from './helpers/clock.js';
import { startTestEmulator, type TestEmulator } from './helpers/emulator.js';

// The five bundled companies, two datasets: 10 parts, 10 requests.
const TICKERS = ['AAPL', 'NVDA', 'TSLA', 'GOOGL', 'WMT'];
const DATASETS: DatasetName[] = ['series_catalog', 'issuer_reference'];
const SNAPSHOT = 'budget-e2e-quota';
const MIDNIGHT = Date.UTC(2026, 11, 1); // also a month boundary: the daily reset is what matters here

interface Pipeline {
  emulator: TestEmulator;
  ctx: PipelineContext;
  budget: Budget;
  outDir: string;
  run(): Promise<SnapshotRecord>;
  stats(): Promise<{ requests: number; quota_exceeded: number; by_status: Record<string, number> }>;
  close(): Promise<void>;
}

const open: Pipeline[] = [];
afterAll(async () => {
  for (const p of open) await p.close();
});

/** A whole pipeline (own Redis prefix, output dir and emulator), driven by `clock`. */
async function pipeline(clock: TestClock, dailyQuota: number | null): Promise<Pipeline> {
  const emulator = await startTestEmulator({ clock, dailyQuota });
  const outDir = await mkdtemp(join(tmpdir(), 'ffx-budget-e2e-'));
  const prefix = `tb${randomBytes(5).toString('hex')}`;
  const overrides: Record<string, unknown> = {
    'api.url': emulator.url,
    'redis.url': inject('redisUrl'),
    'redis.prefix': prefix,
    'output.dir': outDir,
    'output.formats': ['ndjson'],
    'budget.requests_per_minute': 1000,
    'worker.concurrency': 4,
    'log.level': 'silent',
  };
  const flags: FlagOverride[] = Object.entries(overrides).map(([path, value]) => ({
    path,
    value,
    flag: `test ${path}`,
  }));
  const config = loadConfig({ env: { FILINGS_API_KEY: emulator.apiKey }, flags });
  const logger = silentLogger();
  const ctx = await openPipeline(config, logger);
  const budget = createBudget({
    redis: ctx.redis,
    config: budgetConfigFrom(config),
    apiKey: requireApiKey(config).reveal(),
    clock,
    logger,
    prefix: budgetPrefix(config),
  });
  const client = new FilingsClient({ baseUrl: emulator.url, apiKey: emulator.apiKey, clock });
  const workers: RunningWorkers = await startWorkers({
    ctx,
    fetcher: clientFetcher(client),
    ...(await outputPorts()),
    budget,
    clock,
  });
  const spec: SnapshotSpec = {
    id: SNAPSHOT,
    date: '2026-11-30',
    trigger: 'manual',
    companies: TICKERS.map((t, i) => parseCompany(t, `tickers[${i}]`)),
    datasets: DATASETS,
    formats: config.output.formats,
    outDir,
  };
  const p: Pipeline = {
    emulator,
    ctx,
    budget,
    outDir,
    async run() {
      await ctx.enqueue(spec);
      return followSnapshot(ctx.store, spec.id, { pollMs: 100 });
    },
    async stats() {
      const s = (await (await fetch(`${emulator.url}/_emulator/stats`)).json()) as {
        total: { requests: number; quota_exceeded: number; by_status: Record<string, number> };
      };
      return s.total;
    },
    async close() {
      await workers.close(2000);
      await client.close();
      await budget.close();
      await ctx.partsQueue.obliterate({ force: true }).catch(() => undefined);
      await ctx.snapshotsQueue.obliterate({ force: true }).catch(() => undefined);
      const keys = await ctx.redis.keys(`${prefix}:*`);
      if (keys.length > 0) await ctx.redis.del(...keys);
      await ctx.close();
      await emulator.close();
      await rm(outDir, { recursive: true, force: true });
    },
  };
  open.push(p);
  return p;
}

/**
 * Every published data file: relative path → its rows without `_fetched_at`, in file order, with
 * the emulator's own base URL (it differs between the two emulators: blob URLs) written as `<api>`.
 */
async function publishedRows(outDir: string, apiUrl: string): Promise<Map<string, unknown[]>> {
  const out = new Map<string, unknown[]>();
  const walk = async (dir: string): Promise<void> => {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      const path = join(dir, e.name);
      if (e.isDirectory()) {
        if (e.name !== '_staging' && e.name !== '_snapshots') await walk(path);
      } else if (e.name.endsWith('.ndjson.gz')) {
        const text = gunzipSync(await readFile(path)).toString('utf8');
        const rows = text
          .split('\n')
          .filter((l) => l !== '')
          .map((l) => {
            const { _fetched_at: fetchedAt, ...rest } = JSON.parse(l.replaceAll(apiUrl, '<api>')) as Record<
              string,
              unknown
            >;
            expect(typeof fetchedAt).toBe('string');
            return rest;
          });
        out.set(relative(outDir, path), rows);
      }
    }
  };
  await walk(outDir);
  return out;
}

describe('a snapshot that meets an exhausted daily quota', () => {
  it('pauses until midnight, resumes by itself and publishes the same files as an uninterrupted run', async () => {
    // Uninterrupted: no quota.
    const plainClock = new TestClock(MIDNIGHT - 3_600_000);
    const plain = await pipeline(plainClock, null);
    const plainRecord = await plain.run();
    expect(plainRecord.state, plainRecord.message ?? '').toBe('published');

    // Interrupted: 6 requests a day for 10 parts; midnight is 3 s away when the snapshot starts.
    const clock = new TestClock();
    const paused = await pipeline(clock, 6);
    clock.set(MIDNIGHT - 3_000);
    const record = await paused.run();
    expect(record.state, record.message ?? '').toBe('published');
    expect(clock.now()).toBeGreaterThanOrEqual(MIDNIGHT);

    // Six before midnight, four after: nothing fetched twice. The first quota 429 taught the
    // ledger; requests already in flight then (at most the 4 workers' slots) met it too.
    const s = await paused.stats();
    expect(s.by_status['200']).toBe(10);
    expect(s.by_status['429']).toBeGreaterThanOrEqual(1);
    expect(s.by_status['429']).toBeLessThanOrEqual(4);
    expect(s.quota_exceeded).toBe(s.by_status['429']);
    expect(Object.keys(s.by_status).sort()).toEqual(['200', '429']);
    const waits = await paused.budget.snapshotWaits(SNAPSHOT);
    expect(waits).toHaveLength(1);
    expect(waits[0]).toMatchObject({
      quota: 'daily',
      source: 'server',
      until: new Date(MIDNIGHT).toISOString(),
    });

    const manifest = JSON.parse(
      await readFile(join(paused.outDir, '_snapshots', SNAPSHOT, 'manifest.json'), 'utf8'),
    ) as {
      quota_wait: { waited: boolean; waits: { until: string }[] };
    };
    expect(manifest.quota_wait.waited).toBe(true);
    expect(manifest.quota_wait.waits[0]?.until).toBe(new Date(MIDNIGHT).toISOString());
    const plainManifest = JSON.parse(
      await readFile(join(plain.outDir, '_snapshots', SNAPSHOT, 'manifest.json'), 'utf8'),
    ) as {
      quota_wait: { waited: boolean };
    };
    expect(plainManifest.quota_wait.waited).toBe(false);

    const expected = await publishedRows(plain.outDir, plain.emulator.url);
    const actual = await publishedRows(paused.outDir, paused.emulator.url);
    expect(expected.size).toBeGreaterThan(0);
    expect([...actual.keys()].sort()).toEqual([...expected.keys()].sort());
    for (const [file, rows] of expected) expect(actual.get(file), file).toEqual(rows);
  });
});
