/**
 * A changed company's other parts go first once its catalog part is done (incremental nights): the
 * choice of what to hurry (no Redis), then the move itself on a real BullMQ queue in real Redis,
 * checked by the order in which a worker takes the jobs (no clock involved).
 */
import { randomBytes } from 'node:crypto';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import type { Manifest, ManifestPart } from '../../src/output/catalog/manifest.js';
import { datasetsToHurry, partHurrier } from '../../src/pipeline/part/hurry-changed.js';
import { DATASETS, type PartPointer } from '../../src/types.js';

const previous = {
  snapshot_id: 'night-1',
  parts: [
    { dataset: 'series_catalog', ticker: 'MSFT', status: 'done', rows: 10, fingerprint: 'fp1:aaa' },
    { dataset: 'facts_full', ticker: 'MSFT', status: 'done', rows: 5 },
  ] satisfies ManifestPart[],
  files: [],
} as unknown as Manifest;
const catalog = (fingerprint: string | undefined): PartPointer => ({
  dataset: 'series_catalog',
  ticker: 'MSFT',
  status: 'done',
  rows: 10,
  bytes: 100,
  ...(fingerprint === undefined ? {} : { fingerprint }),
});

describe('what a catalog part hurries', () => {
  it('nothing for an unchanged company, every other dataset for a changed one', () => {
    expect(datasetsToHurry('MSFT', catalog('fp1:aaa'), previous)).toEqual([]);
    const others = DATASETS.filter((d) => d !== 'series_catalog');
    expect(datasetsToHurry('MSFT', catalog('fp1:bbb'), previous)).toEqual(others);
    expect(datasetsToHurry('MSFT', catalog(undefined), previous)).toEqual(others);
    // A company the previous snapshot did not have.
    expect(datasetsToHurry('NVDA', catalog('fp1:aaa'), previous)).toEqual(others);
  });
});

describe('hurrying parts on a real queue', () => {
  let redis: Redis;
  let queue: Queue;
  let worker: Worker;
  beforeAll(() => {
    redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: null });
    const opts = { connection: redis, prefix: `t${randomBytes(5).toString('hex')}` };
    queue = new Queue('parts', opts);
    // No processor: the test takes the jobs one by one, as a worker with concurrency 1 would.
    worker = new Worker('parts', null, opts);
  });
  afterAll(async () => {
    await worker?.close();
    await queue?.obliterate({ force: true }).catch(() => undefined);
    await queue?.close();
    redis?.disconnect();
  });

  it('puts a changed company’s waiting and delayed parts before the catalogs still queued', async () => {
    // As an incremental night enqueues them: catalogs priority 1, the rest priority 2.
    for (const t of ['AAPL', 'AMZN', 'MSFT', 'NVDA'])
      await queue.add('part', {}, { jobId: `s.series_catalog.${t}`, priority: 1 });
    for (const t of ['AAPL', 'AMZN', 'MSFT', 'NVDA'])
      await queue.add('part', {}, { jobId: `s.facts_full.${t}`, priority: 2 });
    // MSFT's evidence part already looked for its catalog and waits out its step, delayed.
    await queue.add('part', {}, { jobId: 's.evidence.MSFT', priority: 2, delay: 60_000 });
    const token = 'tok';
    const take = async (): Promise<string> => {
      const job = await worker.getNextJob(token);
      if (job === undefined) return '(none)';
      await job.moveToCompleted('ok', token, false);
      return job.id!;
    };

    expect(await take()).toBe('s.series_catalog.AAPL');
    // MSFT's catalog part, done and changed, hurries its other parts (one of them absent).
    await partHurrier(queue)(['s.facts_full.MSFT', 's.evidence.MSFT', 's.facts_latest.MSFT']);
    const order: string[] = [];
    for (let i = 0; i < 8; i++) order.push(await take());
    expect(order.slice(0, 2).sort()).toEqual(['s.evidence.MSFT', 's.facts_full.MSFT']);
    expect(order.slice(2)).toEqual([
      's.series_catalog.AMZN',
      's.series_catalog.MSFT',
      's.series_catalog.NVDA',
      's.facts_full.AAPL',
      's.facts_full.AMZN',
      's.facts_full.NVDA',
    ]);
  });
});
