/**
 * The commands that read an output root, on an s3:// root served by a real s3rver: verify (sound,
 * truncated, deleted objects), ddl (the bucket's own URLs), prune (dry run, removal order, what
 * stays), run through the real CLI binary with settings from the environment.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { latestStoredSnapshot, listStoredSnapshots } from '../../src/output/catalog/stored-snapshots.js';
import type { Storage } from '../../src/output/storage/storage.js';
import { outputPorts } from '../../src/pipeline/output-adapter.js';
import { openTestStorage, s3rverEnv, startS3, type TestS3 } from '../helpers/s3.js';
import { publishFactParts, stageFactParts } from '../helpers/synthetic-snapshot.js';

const exec = promisify(execFile);
const BIN = fileURLToPath(new URL('../../bin/filings-export.mjs', import.meta.url));

let s3: TestS3;
let tmp: string;
let root: string;
let st: Storage;

const storageFor = (r: string): Storage => openTestStorage(s3.endpoint, r);

/** Stages two companies' parts of a snapshot on the bucket and, unless told not to, publishes it. */
async function exportToBucket(id: string, date: string, publish = true): Promise<void> {
  const ports = await outputPorts({ openStorage: storageFor, tmpDir: tmp });
  const at = { root, id, date };
  const parts = await stageFactParts(ports, at, [
    { ticker: 'AAA', cik: '40', rows: 40 },
    { ticker: 'BBB', cik: '25', rows: 25 },
  ]);
  if (publish) await publishFactParts(ports, at, parts);
  await ports.closeOutput();
}

/** The CLI with the bucket's settings in the environment; resolves with the exit code too. */
async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = {
    ...process.env,
    ...s3rverEnv(s3.endpoint),
    FILINGS_EXPORT_PREFIX: `bucket-readers-${process.pid}`,
    FILINGS_EXPORT_TMP_DIR: tmp,
    LOG_LEVEL: 'warn',
  };
  return exec(process.execPath, [BIN, ...args, '--out', root], { env }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (err: { code: number; stdout: string; stderr: string }) => err,
  );
}

beforeAll(async () => {
  s3 = await startS3();
  tmp = await mkdtemp(join(tmpdir(), 'bucket-readers-'));
  root = `s3://${s3.bucket}/warehouse/exports`;
  st = storageFor(root);
  await exportToBucket('b-1', '2026-11-19');
  await exportToBucket('b-2', '2026-11-20');
  await exportToBucket('b-3', '2026-11-21', false); // staged, never published: may be in progress
});
afterAll(async () => {
  await st.close();
  await s3.close();
  await rm(tmp, { recursive: true, force: true });
});

describe('verify on an s3:// root', () => {
  it('checks the latest published snapshot from the bucket, and leaves no copy behind', async () => {
    const ok = await cli(['verify']);
    expect(ok.stderr).not.toMatch(/error|fail/i);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/^snapshot b-2: OK/);
    const json = JSON.parse((await cli(['verify', 'b-1', '--json'])).stdout) as {
      ok: boolean;
      root: string;
      rowsChecked: number;
    };
    expect(json).toMatchObject({ ok: true, root, rowsChecked: 130 });
    expect(
      (await import('node:fs/promises').then((fs) => fs.readdir(tmp))).filter((n) => n.includes('read')),
    ).toEqual([]);
  });

  it('catches a truncated object and a deleted one', async () => {
    await exportToBucket('b-bad', '2026-11-18');
    const objects = (await st.list('facts_core/')).filter((o) => o.key.includes('snapshot_id=b-bad/'));
    const parquet = objects.find((o) => o.key.endsWith('.parquet'))!;
    const ndjson = objects.find((o) => o.key.endsWith('.ndjson.gz'))!;
    await st.putBytes(parquet.key, Buffer.alloc(100, 1));
    await st.delete([ndjson.key]);
    const bad = await cli(['verify', 'b-bad']);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toMatch(/snapshot b-bad: FAILED/);
    expect(bad.stdout).toContain(`FAIL ${parquet.key}`);
    expect(bad.stdout).toContain(`FAIL ${ndjson.key}`);
    // Remove it again so prune below sees only b-1..b-3.
    await st.delete((await st.list('')).filter((o) => o.key.includes('b-bad')).map((o) => o.key));
  });
});

describe('ddl on an s3:// root', () => {
  it('points DuckDB and Spark at the bucket, tells Snowflake which URL its stage needs, keeps BigQuery on gs://', async () => {
    const duck = await cli(['ddl', '--dialect', 'duckdb']);
    expect(duck.code).toBe(0);
    expect(duck.stdout).toContain('INSTALL httpfs; LOAD httpfs;');
    expect(duck.stdout).toContain(`'${root}/facts_core/*/*/*.parquet'`);
    expect(duck.stdout).toMatch(
      new RegExp(`'${root}/facts_core/snapshot_date=2026-11-20/snapshot_id=b-2/part-\\d+\\.parquet'`),
    );
    const spark = await cli(['ddl', '--dialect', 'spark', 'b-1']);
    expect(spark.stdout).toContain(`LOCATION '${root}/facts_core';`);
    const snow = await cli(['ddl', '--dialect', 'snowflake']);
    expect(snow.stdout).toContain(`CREATE STAGE filings_export_stage URL = '${root}/'`);
    expect(snow.stdout).toContain('LOCATION = @filings_export_stage/facts_core/');
    // BigQuery reads a gs:// copy, never the s3:// bucket: its default location stands.
    const bq = await cli(['ddl', '--dialect', 'bigquery']);
    expect(bq.stdout).toContain(`uris = ['gs://YOUR_BUCKET/filings-export/facts_core/*.parquet']`);
  });
});

describe('prune on an s3:// root', () => {
  it('--dry-run lists what would go and removes nothing', async () => {
    const before = await st.list('');
    const dry = await cli(['prune', '--keep', '1', '--dry-run']);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/would remove b-1: \d+ objects/);
    expect(dry.stdout).toMatch(/kept b-2: newest published/);
    expect(dry.stdout).toMatch(/kept b-3: not published, no pipeline record, touched/);
    expect(await st.list('')).toEqual(before);
  });

  it('removes whole old snapshots, never the newest published one nor one that may be in progress', async () => {
    const res = await cli(['prune', '--keep', '1', '--json']);
    expect(res.code).toBe(0);
    const out = JSON.parse(res.stdout) as { removed: Array<{ snapshot_id: string; what: string }> };
    expect(out.removed).toEqual([expect.objectContaining({ snapshot_id: 'b-1', what: 'snapshot' })]);
    const left = await listStoredSnapshots(st);
    expect(left.map((s) => [s.snapshotId, s.published]).sort()).toEqual([
      ['b-2', true],
      ['b-3', false],
    ]);
    expect((await st.list('')).some((o) => o.key.includes('b-1'))).toBe(false);
    expect(left.find((s) => s.snapshotId === 'b-3')?.staging.length).toBeGreaterThan(0);
    // The pointer may still name b-bad, published last and then removed by hand above: every command
    // reads `latest` through latestStoredSnapshot, which passes over a pointer to a snapshot that is gone.
    expect(await latestStoredSnapshot(st)).toBe('b-2');
    // The one left still verifies.
    expect((await cli(['verify'])).code).toBe(0);
  });

  it('bad input is one clear line', async () => {
    const zero = await cli(['prune', '--keep', '0']);
    expect(zero.code).not.toBe(0);
    expect(zero.stderr).toMatch(/--keep must be a whole number of at least 1/);
    const age = await cli(['prune', '--keep', '2', '--older-than', '30 days']);
    expect(age.code).not.toBe(0);
    expect(age.stderr).toMatch(/--older-than must be a whole number and a unit/);
  });
});
