/**
 * --retry on an s3:// root: a snapshot whose part fails every attempt ends failed with its staged
 * parts kept on the bucket; after the fault clears, --retry sends only the failed part's request,
 * reuses the staged objects of the others (checked by size on the bucket) and publishes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Storage } from '../../src/output/storage/storage.js';
import { outputPorts } from '../../src/pipeline/output-adapter.js';
import { startPipelineHarness, type PipelineHarness } from '../helpers/pipeline.js';
import { openTestStorage, startS3, type TestS3 } from '../helpers/s3.js';

let s3: TestS3;
let h: PipelineHarness;
let ports: Awaited<ReturnType<typeof outputPorts>>;
let storage: Storage;

const storageFor = (root: string): Storage => openTestStorage(s3.endpoint, root);

beforeAll(async () => {
  s3 = await startS3('retry');
  ports = await outputPorts({ openStorage: storageFor });
  h = await startPipelineHarness({
    output: ports,
    config: { 'retry.base_delay_ms': 100, 'retry.attempts': 2 },
  });
  await h.startWorkers();
  storage = storageFor(`s3://${s3.bucket}/out`);
});
afterAll(async () => {
  await h?.close();
  await ports?.closeOutput();
  await storage?.close();
  await s3?.close();
});

describe('--retry on an s3:// root', () => {
  it('keeps the staged parts on the bucket after a failure and reuses them when retried', async () => {
    const root = `s3://${s3.bucket}/out`;
    await h.setFaults([{ operation: 'series/catalog', ticker: 'WMT', fault: '503', times: 100 }]);
    const spec = { ...h.spec(['AAPL', 'NVDA', 'WMT'], ['series_catalog'], 'bucket-retry'), outDir: root };
    const rec = await h.runToEnd(spec);
    expect(rec.state).toBe('failed');
    const staged = await storage.list('_staging/bucket-retry/');
    expect(staged.map((o) => o.key).filter((k) => k.endsWith('.ndjson.gz'))).toEqual([
      '_staging/bucket-retry/series_catalog/AAPL.ndjson.gz',
      '_staging/bucket-retry/series_catalog/NVDA.ndjson.gz',
    ]);
    expect(await storage.head('_snapshots/bucket-retry/_SUCCESS')).toBeNull();

    await h.setFaults([]);
    const before = (await h.stats()).total.requests;
    const retried = await h.runToEnd(spec, { retry: true });
    expect(retried.message ?? retried.state).toBe('published');
    expect((await h.stats()).total.requests - before).toBe(1);
    expect(retried.progress.series_catalog).toMatchObject({ done: 3, failed: 0 });
    expect(await storage.head('_snapshots/bucket-retry/_SUCCESS')).not.toBeNull();
    expect(await storage.list('_staging/bucket-retry/')).toEqual([]);
  });
});
