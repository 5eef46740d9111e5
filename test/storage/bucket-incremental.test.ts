/**
 * Incremental nights on an s3:// root (s3rver): the second night carries Microsoft's parts over
 * from the first through the bucket, fetches only what changed (Apple filed), writes the changes
 * dataset from the previous snapshot's files on the bucket, and the copy a reader takes verifies.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDuck } from '../../src/output/convert/duckdb.js';
import type { Manifest } from '../../src/output/catalog/manifest.js';
import type { Storage } from '../../src/output/storage/storage.js';
import { copySnapshotToLocal, readStoredManifest } from '../../src/output/catalog/stored-snapshots.js';
import { verifySnapshot, formatVerifyReport } from '../../src/output/readers/verify.js';
import { incrementalPlanner } from '../../src/pipeline/queue/incremental.js';
import { outputPorts } from '../../src/pipeline/output-adapter.js';
import type { SnapshotSpec } from '../../src/pipeline/record/snapshot-states.js';
import type { DatasetName } from '../../src/types.js';
import { startPipelineHarness, type PipelineHarness } from '../helpers/pipeline.js';
import { openTestStorage, s3rverEnv, startS3, type TestS3 } from '../helpers/s3.js';

const TICKERS = ['AAPL', 'MSFT'];
const DATASETS: DatasetName[] = ['series_catalog', 'facts_full'];

let s3: TestS3;
let h: PipelineHarness;
let ports: Awaited<ReturnType<typeof outputPorts>>;
let storage: Storage;
let local: string;
let root: string;

beforeAll(async () => {
  s3 = await startS3('nights');
  root = `s3://${s3.bucket}/out`;
  // The planner opens the bucket as `run` does: settings from the config, keys from the AWS chain.
  Object.assign(process.env, s3rverEnv(s3.endpoint));
  const storageFor = (r: string): Storage => openTestStorage(s3.endpoint, r);
  ports = await outputPorts({ openStorage: storageFor });
  h = await startPipelineHarness({
    output: ports,
    emulator: { asOf: '2025-10-30' },
    config: {
      'output.formats': ['parquet'],
      'output.s3.endpoint': s3.endpoint,
      'output.s3.force_path_style': true,
      'output.s3.region': 'us-east-1',
      'output.s3.checksums': 'when_required',
    },
  });
  await h.startWorkers();
  storage = storageFor(root);
  local = await mkdtemp(join(tmpdir(), 'fx-bucket-nights-'));
});
afterAll(async () => {
  await h?.close();
  await ports?.closeOutput();
  await storage?.close();
  await s3?.close();
  if (local) await rm(local, { recursive: true, force: true });
});

async function night(
  id: string,
  date: string,
): Promise<{ requests: number; note: string; manifest: Manifest }> {
  const asked: SnapshotSpec = { ...h.spec(TICKERS, DATASETS, id), date, outDir: root };
  const { spec, note } = await incrementalPlanner(h.config)(asked, {});
  const before = (await h.stats()).total.requests;
  const rec = await h.runToEnd(spec);
  expect(rec.state, rec.message ?? '').toBe('published');
  return {
    requests: (await h.stats()).total.requests - before,
    note,
    manifest: await readStoredManifest(storage, id),
  };
}

describe('incremental nights on a bucket', () => {
  it('carries parts over through the bucket and writes changes a reader can verify', async () => {
    const first = await night('bn-1', '2025-10-30');
    expect(first.requests).toBe(TICKERS.length * DATASETS.length);
    expect(first.manifest.changes).toBeUndefined();

    const res = await fetch(`${h.emulator.url}/_emulator/clock`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ as_of: '2025-11-05' }),
    });
    expect(res.status).toBe(200);
    const second = await night('bn-2', '2025-11-05');
    expect(second.note).toMatch(/^incremental from bn-1: /);
    // Two catalogs, then Apple's facts; Microsoft's facts come from bn-1's files on the bucket.
    expect(second.requests).toBe(TICKERS.length + 1);
    const msft = second.manifest.parts.find((p) => p.dataset === 'facts_full' && p.ticker === 'MSFT');
    expect(msft).toMatchObject({ reused: true, reused_from: 'bn-1' });
    expect(second.manifest.changes?.against).toBe('bn-1');
    expect(second.manifest.changes?.counts.added).toBeGreaterThan(0);

    await copySnapshotToLocal(storage, 'bn-2', local, { data: true });
    const report = await verifySnapshot(local, 'bn-2');
    expect(report.ok, formatVerifyReport(report)).toBe(true);
    const changesFile = second.manifest.changes?.files[0];
    expect(report.files.find((f) => f.path === changesFile?.path)).toMatchObject({
      ok: true,
      rows: changesFile?.rows,
    });
    const duck = await openDuck({ threads: 1 });
    try {
      const who = await duck.all(
        `SELECT DISTINCT _requested_ticker AS t FROM read_parquet('${join(local, changesFile!.path)}')`,
      );
      expect(who).toEqual([{ t: 'AAPL' }]);
    } finally {
      duck.close();
    }

    // A published object of bn-2 removed behind the exporter's back: its companies are fetched
    // again (a HEAD finds it gone), and the night publishes whole.
    const gone = second.manifest.files.find(
      (f) => f.dataset === 'facts_full' && f.companies!.some((c) => c.ticker === 'MSFT'),
    )!;
    await storage.delete([gone.path]);
    const third = await night('bn-3', '2025-11-05');
    expect(third.note).toMatch(/^incremental from bn-2: /);
    expect(third.requests).toBe(TICKERS.length + gone.companies!.length);
    const refetched = third.manifest.parts.find((p) => p.dataset === 'facts_full' && p.ticker === 'MSFT');
    expect(refetched?.reused).toBeUndefined();
    expect(refetched?.message).toMatch(/fetched, not reused: s3:\/\/.*part-\d+\.parquet is missing/);
    expect(third.manifest.datasets.facts_full?.rows).toBe(second.manifest.datasets.facts_full?.rows);
  });
});
