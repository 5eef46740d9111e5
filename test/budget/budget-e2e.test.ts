/**
 * End to end through the real pipeline (BullMQ flow, part jobs, output module), real Redis and the
 * real emulator over HTTP: a snapshot that meets an exhausted daily quota pauses until the next
 * UTC midnight of the injected clock (3 s away), resumes by itself, fetches nothing twice, says in
 * its manifest that it waited, and publishes files identical to those of an uninterrupted run
 * (apart from the `_fetched_at` lineage timestamps).
 */
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import type { DatasetName } from '../../src/types.js';
import { TestClock } from '../helpers/clock.js';
import { startPipelineHarness, type PipelineHarness } from '../helpers/pipeline.js';

// The five bundled companies, two datasets: 10 parts, 10 requests.
const TICKERS = ['AAPL', 'NVDA', 'TSLA', 'GOOGL', 'WMT'];
const DATASETS: DatasetName[] = ['series_catalog', 'issuer_reference'];
const SNAPSHOT = 'budget-e2e-quota';
const MIDNIGHT = Date.UTC(2026, 11, 1); // also a month boundary: the daily reset is what matters here

const open: PipelineHarness[] = [];
afterAll(async () => {
  for (const p of open) await p.close();
});

/** A whole pipeline (own Redis prefix, output dir and emulator) with 4 part workers, driven by `clock`. */
async function pipeline(clock: TestClock, dailyQuota: number | null): Promise<PipelineHarness> {
  const p = await startPipelineHarness({
    clock,
    emulator: { dailyQuota },
    config: { 'worker.concurrency': 4 },
  });
  open.push(p);
  await p.startWorkers();
  return p;
}

const run = (p: PipelineHarness) => p.runToEnd(p.spec(TICKERS, DATASETS, SNAPSHOT));

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
    const plainRecord = await run(plain);
    expect(plainRecord.state, plainRecord.message ?? '').toBe('published');

    // Interrupted: 6 requests a day for 10 parts; midnight is 3 s away when the snapshot starts.
    const clock = new TestClock();
    const paused = await pipeline(clock, 6);
    clock.set(MIDNIGHT - 3_000);
    const record = await run(paused);
    expect(record.state, record.message ?? '').toBe('published');
    expect(clock.now()).toBeGreaterThanOrEqual(MIDNIGHT);

    // Six before midnight, four after: nothing fetched twice. The first quota 429 taught the
    // ledger; requests already in flight then (at most the 4 workers' slots) met it too.
    const s = (await paused.stats()).total;
    expect(s.by_status['200']).toBe(10);
    expect(s.by_status['429']).toBeGreaterThanOrEqual(1);
    expect(s.by_status['429']).toBeLessThanOrEqual(4);
    expect(s.quota_exceeded).toBe(s.by_status['429']);
    expect(Object.keys(s.by_status).sort()).toEqual(['200', '429']);
    const waits = await paused.ctx.store.quotaWaits(SNAPSHOT);
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
