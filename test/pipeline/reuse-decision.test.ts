/**
 * The per-part reuse rule, without Redis or files: what is carried over and what is fetched, and
 * why. And a changed company's other parts going first once its catalog part is done: what is
 * hurried (no Redis), then the move itself on a real BullMQ queue in real Redis, checked by the
 * order in which a worker takes the jobs (no clock involved).
 */
import { randomBytes } from 'node:crypto';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Manifest, ManifestFile, ManifestPart } from '../../src/output/catalog/manifest.js';
import { CatalogFingerprint } from '../../src/pipeline/part/catalog-fingerprint.js';
import { datasetsToHurry, partHurrier } from '../../src/pipeline/part/hurry-changed.js';
import { decideReuse } from '../../src/pipeline/part/reuse-decision.js';
import { DATASETS, type PartPointer } from '../../src/types.js';

const FP = 'fp1:aaa';
/** A published file of night-1 holding MSFT's facts (and another company's). */
const msftFile: ManifestFile = {
  path: 'facts_full/snapshot_date=2026-11-20/snapshot_id=night-1/part-00000.parquet',
  dataset: 'facts_full',
  format: 'parquet',
  rows: 9,
  bytes: 900,
  sha256: 'e'.repeat(64),
  companies: [
    { ticker: 'AMZN', first_row: 0, rows: 4 },
    { ticker: 'MSFT', first_row: 4, rows: 5 },
  ],
};
const previous = (parts: ManifestPart[], files: ManifestFile[] = []): Manifest =>
  ({ snapshot_id: 'night-1', parts, files }) as unknown as Manifest;
const catalog = (o: Partial<PartPointer> = {}): PartPointer => ({
  dataset: 'series_catalog',
  ticker: 'MSFT',
  status: 'done',
  rows: 10,
  bytes: 100,
  fingerprint: FP,
  ...o,
});
const prevCatalog: ManifestPart = {
  dataset: 'series_catalog',
  ticker: 'MSFT',
  status: 'done',
  rows: 10,
  fingerprint: FP,
};
const prevFacts = (o: Partial<ManifestPart> = {}): ManifestPart => ({
  dataset: 'facts_full',
  ticker: 'MSFT',
  status: 'done',
  rows: 5,
  archive: '_snapshots/night-1/parts/facts_full/MSFT.ndjson.gz',
  bytes: 50,
  sha256: 'f'.repeat(64),
  ...o,
});

describe('decideReuse', () => {
  it('carries over only an unchanged company whose previous part was done', () => {
    // From the published files that hold it; no staged copy needed.
    const { archive: _a, ...published } = prevFacts();
    expect(
      decideReuse('facts_full', 'MSFT', catalog(), previous([prevCatalog, published], [msftFile])),
    ).toEqual({ kind: 'reuse', previous: published, files: [msftFile] });
    // A source published before files named their companies: its archived part.
    expect(decideReuse('facts_full', 'MSFT', catalog(), previous([prevCatalog, prevFacts()]))).toEqual({
      kind: 'reuse',
      previous: prevFacts(),
      files: [],
    });
    expect(decideReuse('facts_full', 'MSFT', undefined, previous([prevCatalog, prevFacts()]))).toEqual({
      kind: 'wait',
    });
  });

  it('fetches when the catalog changed, failed or has no fingerprint', () => {
    const p = previous([prevCatalog, prevFacts()]);
    expect(decideReuse('facts_full', 'MSFT', catalog({ fingerprint: 'fp1:bbb' }), p)).toMatchObject({
      kind: 'fetch',
      reason: 'changed since the previous snapshot',
    });
    expect(decideReuse('facts_full', 'MSFT', catalog({ status: 'failed' }), p)).toMatchObject({
      kind: 'fetch',
    });
    const { fingerprint: _f, ...bare } = catalog();
    expect(decideReuse('facts_full', 'MSFT', bare, p)).toMatchObject({ kind: 'fetch' });
  });

  it('fetches a company whose previous part failed, was not found, or kept no copy', () => {
    for (const status of ['failed', 'not_found', 'bad_request'] as const)
      expect(
        decideReuse('facts_full', 'MSFT', catalog(), previous([prevCatalog, prevFacts({ status, rows: 0 })])),
      ).toMatchObject({
        kind: 'fetch',
        reason: `its facts_full part in night-1 was ${status}`,
      });
    const { archive: _a, ...noArchive } = prevFacts();
    expect(decideReuse('facts_full', 'MSFT', catalog(), previous([prevCatalog, noArchive]))).toMatchObject({
      kind: 'fetch',
      reason: 'night-1 kept no Parquet copy of its facts_full part',
    });
    // Only NDJSON published: nothing to rebuild a file from.
    const ndjson = {
      ...msftFile,
      format: 'ndjson' as const,
      path: msftFile.path.replace('.parquet', '.ndjson.gz'),
    };
    expect(
      decideReuse('facts_full', 'MSFT', catalog(), previous([prevCatalog, noArchive], [ndjson])),
    ).toMatchObject({ kind: 'fetch' });
    expect(decideReuse('facts_full', 'MSFT', catalog(), previous([prevCatalog]))).toMatchObject({
      kind: 'fetch',
    });
  });
});

describe('CatalogFingerprint', () => {
  const row = (key: string, version: number, count = 3) => ({
    series_key: key,
    series_version: version,
    observation_count: count,
    latest_filed_at: '2025-10-31',
    filing_count: 2,
    metric_label: 'ignored',
  });
  const digest = (rows: Record<string, unknown>[]): string | null => {
    const f = new CatalogFingerprint();
    for (const r of rows) f.add(r);
    return f.digest();
  };

  it('ignores row order and other fields, and moves with a version, a count or a new series', () => {
    const base = digest([row('a', 1), row('b', 1)]);
    expect(digest([row('b', 1), { ...row('a', 1), metric_label: 'renamed' }])).toBe(base);
    expect(digest([row('a', 2), row('b', 1)])).not.toBe(base); // a restatement: new version
    expect(digest([row('a', 1, 4), row('b', 1)])).not.toBe(base); // a new observation
    expect(digest([row('a', 1), row('b', 1), row('c', 1)])).not.toBe(base); // a new series
    expect(base).toMatch(/^fp1:[0-9a-f]{64}$/);
  });

  it('is unavailable when a row has no series version', () => {
    expect(digest([row('a', 1), { series_key: 'b' }])).toBeNull();
  });
});

const hurryPrevious = {
  snapshot_id: 'night-1',
  parts: [
    { dataset: 'series_catalog', ticker: 'MSFT', status: 'done', rows: 10, fingerprint: 'fp1:aaa' },
    { dataset: 'facts_full', ticker: 'MSFT', status: 'done', rows: 5 },
  ] satisfies ManifestPart[],
  files: [],
} as unknown as Manifest;
const hurryCatalog = (fingerprint: string | undefined): PartPointer => ({
  dataset: 'series_catalog',
  ticker: 'MSFT',
  status: 'done',
  rows: 10,
  bytes: 100,
  ...(fingerprint === undefined ? {} : { fingerprint }),
});

describe('what a catalog part hurries', () => {
  it('nothing for an unchanged company, every other dataset for a changed one', () => {
    expect(datasetsToHurry('MSFT', hurryCatalog('fp1:aaa'), hurryPrevious)).toEqual([]);
    const others = DATASETS.filter((d) => d !== 'series_catalog');
    expect(datasetsToHurry('MSFT', hurryCatalog('fp1:bbb'), hurryPrevious)).toEqual(others);
    expect(datasetsToHurry('MSFT', hurryCatalog(undefined), hurryPrevious)).toEqual(others);
    // A company the previous snapshot did not have.
    expect(datasetsToHurry('NVDA', hurryCatalog('fp1:aaa'), hurryPrevious)).toEqual(others);
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
