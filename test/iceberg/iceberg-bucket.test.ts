/**
 * Iceberg tables on a bucket root: two snapshots published to s3rver, `iceberg rebuild` through the
 * CLI, then icebird reads the table at its `s3://` location (its requests served by s3rver over
 * HTTP) at each version, rows equal to DuckDB's reading of the published files. A version that
 * exists already is never written again, on a bucket or locally (the exclusive write); one this
 * very commit wrote before a crash cut it short of moving the hint is taken over by the retry.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { icebergRead } from 'icebird';
import { openDuck, type DuckSession } from '../../src/output/convert/duckdb.js';
import { LocalStorage } from '../../src/output/storage/local-storage.js';
import { readTable } from '../../src/output/iceberg/index.js';
import { writeTable } from '../../src/output/iceberg/metadata.js';
import { outputPorts } from '../../src/pipeline/output-adapter.js';
import type { PartPointer } from '../../src/types.js';
import type { Storage } from '../../src/output/storage/index.js';
import { openTestStorage, s3rverEnv, startS3, type TestS3 } from '../helpers/s3.js';
import { syntheticFactRow } from '../helpers/synthetic-rows.js';
import { runCli } from '../helpers/processes.js';

const realFetch = globalThis.fetch;
let s3: TestS3;
let tmp: string;
let duck: DuckSession;
let root: string;
let storage: Storage;

beforeAll(async () => {
  s3 = await startS3();
  tmp = await mkdtemp(join(tmpdir(), 'iceberg-bucket-'));
  duck = await openDuck({ threads: 1 });
  root = `s3://${s3.bucket}/exports`;
  storage = openTestStorage(s3.endpoint, root);
  // icebird turns s3://bucket/key into https://bucket.s3.amazonaws.com/key: serve those from s3rver.
  globalThis.fetch = (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const m = /^https:\/\/([^./]+)\.s3\.amazonaws\.com(\/.*)$/.exec(url);
    return realFetch(m === null ? input : `${s3.endpoint}/${m[1]}${m[2]}`, init);
  };
});
afterAll(async () => {
  globalThis.fetch = realFetch;
  duck?.close();
  await storage?.close();
  await s3?.close();
  await rm(tmp, { recursive: true, force: true });
});

/** Publishes snapshot `id` of `n` synthetic facts_core rows per company to the bucket root. */
async function publish(id: string, date: string, counts: Record<string, number>): Promise<void> {
  const ports = await outputPorts({ openStorage: (r) => openTestStorage(s3.endpoint, r), tmpDir: tmp });
  const parts: PartPointer[] = [];
  for (const [ticker, n] of Object.entries(counts)) {
    const w = ports.staged.createWriter({
      root,
      snapshotId: id,
      dataset: 'facts_core',
      ticker,
      fetchedAt: `${date}T00:00:00Z`,
    });
    for (let i = 0; i < n; i++) await w.write(syntheticFactRow(i, { ticker, cik: `${n}` }));
    parts.push({ dataset: 'facts_core', ticker, status: 'done', ...(await w.finish()) });
  }
  await ports.publish({
    root,
    snapshotId: id,
    snapshotDate: date,
    formats: ['parquet'],
    datasets: ['facts_core'],
    parts,
    waits: [],
    startedAt: `${date}T00:00:00Z`,
    requests: 2,
    retries: 0,
    rateLimited429: 0,
  });
}

/** DuckDB's rows of a snapshot's published files, downloaded from the bucket, as sorted JSON keys. */
async function publishedKeys(id: string): Promise<string[]> {
  const files = (await storage.list('facts_core/')).filter(
    (o) => o.key.includes(`snapshot_id=${id}/`) && o.key.endsWith('.parquet'),
  );
  for (const [i, f] of files.entries()) await storage.download(f.key, join(tmp, `${id}-${i}.parquet`));
  const paths = files.map((_, i) => `'${join(tmp, `${id}-${i}.parquet`)}'`).join(', ');
  const rows = await duck.all(`SELECT fact_key, current_ticker FROM read_parquet([${paths}])`);
  return rows.map((r) => `${String(r.current_ticker)}:${String(r.fact_key)}`).sort();
}

describe('Iceberg tables on an s3:// root', () => {
  it('rebuild writes the table at its s3:// location, and icebird reads each version from the bucket', async () => {
    await publish('b-1', '2025-10-30', { AAA: 40, BBB: 25 });
    await publish('b-2', '2025-11-05', { AAA: 55, BBB: 25, CCC: 10 });
    const cli = await runCli(['iceberg', 'rebuild', '--out', root], {
      env: s3rverEnv(s3.endpoint),
      timeoutMs: 120_000,
    });
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toContain('rebuilt 1 table from 2 published snapshots');

    const table = (await readTable(storage, 'facts_core'))!;
    expect(table.version).toBe(2);
    expect(table.metadata.location).toBe(`${root}/facts_core`);
    expect(
      table.metadata.snapshots.every((s) => s['manifest-list'].startsWith(`${root}/facts_core/metadata/`)),
    ).toBe(true);
    for (const [version, id] of [
      [1, 'b-1'],
      [2, 'b-2'],
    ] as const) {
      const rows = await icebergRead({
        tableUrl: `${root}/facts_core`,
        metadataFileName: `v${version}.metadata.json`,
      });
      const keys = rows.map((r) => `${String(r.current_ticker)}:${String(r.fact_key)}`).sort();
      expect(keys.length).toBe(version === 1 ? 65 : 90);
      expect(keys).toEqual(await publishedKeys(id));
    }
    // Following the hint, as Spark's HadoopCatalog and DuckDB's iceberg_scan do.
    expect((await icebergRead({ tableUrl: `${root}/facts_core` })).length).toBe(90);
  }, 300_000);

  it('a version that exists already is refused, not overwritten', async () => {
    const v1 = (await readTable(storage, 'facts_core'))!.metadata;
    const previous = { version: 1, metadata: v1 };
    await expect(
      // Another writer's v2: another snapshot is current there.
      writeTable(storage, 'facts_core', previous, { ...v1, 'current-snapshot-id': 1, 'last-updated-ms': 1 }),
    ).rejects.toThrow(
      `${root}/facts_core/metadata/v2.metadata.json exists already: another writer committed to the facts_core table`,
    );
    expect((await readTable(storage, 'facts_core'))?.metadata['last-updated-ms']).toBe(v1['last-updated-ms']);

    // The write itself is exclusive where the store has one: a local root's hard link never replaces.
    const local = new LocalStorage(tmp);
    await local.putBytes('x/v1.metadata.json', 'first\n', { ifAbsent: true });
    await expect(local.putBytes('x/v1.metadata.json', 'second\n', { ifAbsent: true })).rejects.toThrow(
      `${join(tmp, 'x', 'v1.metadata.json')} exists already`,
    );
    expect(await readFile(join(tmp, 'x', 'v1.metadata.json'), 'utf8')).toBe('first\n');
  });

  it('a commit cut short before its hint moved is taken over by its retry, not refused for ever', async () => {
    const v2 = (await readTable(storage, 'facts_core'))!;
    expect(v2.version).toBe(2);
    // The crash: v2.metadata.json written, the hint still naming v1.
    await storage.putBytes('facts_core/metadata/version-hint.text', '1\n');
    const v1 = (await readTable(storage, 'facts_core'))!;
    expect(v1.version).toBe(1);
    // The retry builds the same commit again (same snapshot, a later timestamp).
    const retried = await writeTable(storage, 'facts_core', v1, { ...v2.metadata, 'last-updated-ms': 2 });
    expect(retried.version).toBe(2);
    expect(retried.metadata).toEqual(v2.metadata);
    expect(await readTable(storage, 'facts_core')).toEqual(v2);
  });
});
