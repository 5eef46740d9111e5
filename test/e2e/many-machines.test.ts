/**
 * Two "machines" and a bucket: two `filings-export worker` processes, each in its own working
 * directory with its own temp dir and no output directory in common, export one snapshot to an
 * s3:// root on a real s3rver. Parts staged by one are published by whichever takes the publish
 * job; DuckDB then reads the published objects and the rows equal what the API serves.
 */
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Job } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiRowText, compareRowTexts, publishedRowText } from '../../scripts/lib/row-values.js';
import { openDuck } from '../../src/output/convert/duckdb.js';
import type { Storage } from '../../src/output/storage/storage.js';
import { readStoredManifest } from '../../src/output/catalog/stored-snapshots.js';
import { partJobId } from '../../src/pipeline/queue/ids.js';
import { spawnWorker, terminateAll, type SpawnedWorker } from '../helpers/processes.js';
import { startPipelineHarness, type PipelineHarness } from '../helpers/pipeline.js';
import { openTestStorage, s3rverEnv, startS3, type TestS3 } from '../helpers/s3.js';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'filings-export.mjs');
const TICKERS = ['AAPL', 'MSFT', 'NVDA', 'TSLA', 'WMT', 'GOOGL'];

let h: PipelineHarness;
let s3: TestS3;
let scratch: string;

beforeAll(async () => {
  h = await startPipelineHarness({
    emulator: { latencyMs: 50 },
    config: { 'output.formats': ['parquet', 'ndjson'] },
  });
  s3 = await startS3('fleet');
  scratch = await mkdtemp(join(tmpdir(), 'many-machines-'));
});
afterAll(async () => {
  await h?.close();
  await s3?.close();
  await rm(scratch, { recursive: true, force: true });
});

describe('workers on two machines with no shared disk', () => {
  it('export one snapshot to the bucket; the published objects hold exactly the API rows', async () => {
    const root = `s3://${s3.bucket}/snapshots`;
    const machines = await Promise.all([0, 1].map((i) => mkdtemp(join(scratch, `machine-${i}-`))));
    const workers: SpawnedWorker[] = [];
    const start = (i: number): Promise<void> => {
      const cwd = machines[i]!;
      const env: NodeJS.ProcessEnv = {
        ...h.env,
        // Each machine sees only the bucket: no FILINGS_EXPORT_OUT directory in common.
        FILINGS_EXPORT_OUT: root,
        FILINGS_EXPORT_TMP_DIR: join(cwd, 'tmp'),
        ...s3rverEnv(s3.endpoint),
        FILINGS_EXPORT_CONCURRENCY: '2',
        LOG_LEVEL: 'info',
      };
      workers[i] = spawnWorker(BIN, ['worker'], { cwd, env });
      return workers[i].ready;
    };
    for (const m of machines) await mkdir(join(m, 'tmp'));
    let storage: Storage | undefined;
    try {
      await Promise.all([start(0), start(1)]);
      const spec = { ...h.spec(TICKERS, ['facts_full', 'series_catalog'], 'fleet-1'), outDir: root };
      const rec = await h.runToEnd(spec);
      expect(rec.state, `${rec.message ?? ''}\n${workers.map((w) => w.log()).join('\n')}`).toBe('published');
      expect(rec.manifest).toBe(`${root}/_snapshots/fleet-1/manifest.json`);

      // Both machines did part of the work.
      const by = new Set<string>();
      for (const t of TICKERS) {
        const job = await Job.fromId(h.ctx.partsQueue, partJobId(spec.id, 'facts_full', t));
        if (job?.processedBy) by.add(job.processedBy);
      }
      expect(by.size).toBe(2);

      // The bucket holds the snapshot and no staging; neither machine kept a temp file.
      storage = openTestStorage(s3.endpoint, root);
      expect(await storage.head('_snapshots/fleet-1/_SUCCESS')).not.toBeNull();
      expect(await storage.list('_staging/fleet-1/')).toEqual([]);
      for (const m of machines) expect(await readdir(join(m, 'tmp'))).toEqual([]);
      for (const m of machines) expect((await readdir(m)).sort()).toEqual(['tmp']);

      // DuckDB over the objects, downloaded as a warehouse loader would: every row, key and
      // values, equals one the API serves, and every API row is there once.
      const manifest = await readStoredManifest(storage, 'fleet-1');
      const dl = join(scratch, 'download');
      for (const f of manifest.files) {
        const stored = await storage.download(f.path, join(dl, f.path));
        expect(stored.bytes, f.path).toBe(f.bytes);
      }
      const duck = await openDuck({ threads: 1 });
      try {
        for (const dataset of ['facts_full', 'series_catalog'] as const) {
          const columns = manifest.datasets[dataset]?.columns ?? [];
          expect(columns.length, dataset).toBeGreaterThan(0);
          const want: string[] = [];
          for (const t of TICKERS) {
            const res = await h.client.stream(dataset === 'facts_full' ? 'facts/full' : 'series/catalog', {
              ticker: t,
            } as never);
            for await (const row of res.rows)
              want.push(apiRowText(columns, t, row as Record<string, unknown>));
          }
          const got = (await duck.all(`SELECT * FROM read_parquet('${dl}/${dataset}/**/*.parquet')`)).map(
            (r) => publishedRowText(columns, r),
          );
          expect(want.length, dataset).toBeGreaterThan(0);
          expect(got.length, dataset).toBe(want.length);
          // Exact duplicates count as duplicated; lost 0 and extra 0 at equal length: the same multiset.
          expect(
            compareRowTexts(want, got, (text) => text),
            dataset,
          ).toEqual({
            lost: 0,
            extra: 0,
            duplicated: 0,
            examples: [],
          });
          const ndjson = (await duck.all(
            `SELECT count(*)::INTEGER AS n FROM read_ndjson('${dl}/${dataset}/**/*.ndjson.gz', format = 'newline_delimited', compression = 'gzip')`,
          )) as Array<{ n: number }>;
          expect(ndjson[0]?.n).toBe(want.length);
        }
      } finally {
        duck.close();
      }
    } finally {
      expect(await terminateAll(workers.map((w) => w.child))).toEqual([0, 0]);
      await storage?.close();
    }
  });
});
