// Parts and publish through an s3:// root on a real s3rver: staged objects, ordered upload, staging cleaned, DuckDB rows.
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDuck, type DuckSession } from '../../src/output/convert/duckdb.js';
import { checkAnyOutputRoot } from '../../src/output/staged-part/preflight.js';
import { openStorage } from '../../src/output/storage/open-storage.js';
import { readLatest } from '../../src/output/catalog/upload-snapshot.js';
import { outputPorts } from '../../src/pipeline/output-adapter.js';
import type { PartPointer } from '../../src/types.js';
import { S3RVER_CREDENTIALS, startS3, type TestS3 } from '../helpers/s3.js';
import { syntheticFactRow } from '../helpers/synthetic-rows.js';

let s3: TestS3;
let tmp: string;
let duck: DuckSession;

beforeAll(async () => {
  s3 = await startS3();
  tmp = await mkdtemp(join(tmpdir(), 'remote-root-'));
  duck = await openDuck({ threads: 1 });
});
afterAll(async () => {
  duck.close();
  await s3.close();
  await rm(tmp, { recursive: true, force: true });
});

const storageFor = (root: string) =>
  openStorage(root, {
    settings: { endpoint: s3.endpoint, forcePathStyle: true, region: 'us-east-1' },
    credentials: S3RVER_CREDENTIALS,
  });

describe('an s3:// output root', () => {
  it('stages parts on the bucket, publishes them from another temp dir, and DuckDB reads the rows', async () => {
    const root = `s3://${s3.bucket}/exports`;
    const id = 'remote-1';
    const writerPorts = await outputPorts({ openStorage: storageFor, tmpDir: tmp });
    const counts: Record<string, number> = { AAA: 120, BBB: 75 };
    const parts: PartPointer[] = [];
    for (const [ticker, n] of Object.entries(counts)) {
      const w = writerPorts.staged.createWriter({
        root,
        snapshotId: id,
        dataset: 'facts_core',
        ticker,
        fetchedAt: '2026-11-20T00:00:00Z',
      });
      for (let i = 0; i < n; i++) await w.write(syntheticFactRow(i, { ticker, cik: `${n}` }));
      parts.push({ dataset: 'facts_core', ticker, status: 'done', ...(await w.finish()) });
    }
    const st = storageFor(root);
    for (const p of parts) expect((await st.head(p.file!))?.bytes).toBe(p.bytes);
    expect(await writerPorts.staged.bytes(root, parts[0]!.file!)).toBe(parts[0]!.bytes);
    expect(await writerPorts.staged.bytes(root, '_staging/nope/x.ndjson.gz')).toBeNull();
    // Nothing left in the writer's temp dir.
    expect((await readdir(tmp)).filter((n) => n.startsWith('filings-export-'))).toEqual([]);

    const publisher = await outputPorts({ openStorage: storageFor, tmpDir: tmp });
    const result = await publisher.publish({
      root,
      snapshotId: id,
      snapshotDate: '2026-11-20',
      formats: ['parquet'],
      datasets: ['facts_core'],
      parts,
      waits: [],
      startedAt: '2026-11-20T00:00:00Z',
      requests: 2,
      retries: 0,
      rateLimited429: 0,
    });
    expect(result.rows).toEqual({ facts_core: 195 });
    expect(result.manifestPath).toBe(`${root}/_snapshots/${id}/manifest.json`);
    expect(await st.head(`_snapshots/${id}/_SUCCESS`)).not.toBeNull();
    expect((await readLatest(st))?.snapshot_id).toBe(id);
    expect(await st.list(`_staging/${id}/`)).toEqual([]);
    expect((await readdir(tmp)).filter((n) => n.startsWith('filings-export-'))).toEqual([]);

    const objects = (await st.list('facts_core/')).filter((o) => o.key.endsWith('.parquet'));
    expect(objects.length).toBeGreaterThan(0);
    const dl = join(tmp, 'dl');
    for (const o of objects) await st.download(o.key, join(dl, o.key));
    const rows = await duck.all(
      `SELECT _requested_ticker AS t, count(*)::INTEGER AS n FROM read_parquet('${dl}/**/*.parquet') GROUP BY 1 ORDER BY 1`,
    );
    expect(rows).toEqual([
      { t: 'AAA', n: 120 },
      { t: 'BBB', n: 75 },
    ]);
    // Publishing again returns the stored manifest without rebuilding.
    const again = await publisher.publish({
      root,
      snapshotId: id,
      snapshotDate: '2026-11-20',
      formats: ['parquet'],
      datasets: ['facts_core'],
      parts,
      waits: [],
      startedAt: '2026-11-20T00:00:00Z',
      requests: 2,
      retries: 0,
      rateLimited429: 0,
    });
    expect(again.rows).toEqual({ facts_core: 195 });
    await Promise.all([st.close(), writerPorts.closeOutput(), publisher.closeOutput()]);
  });

  it('preflight: a missing bucket is one line naming it; a local root is still checked locally', async () => {
    const settings = {
      endpoint: s3.endpoint,
      forcePathStyle: true,
      region: 'us-east-1',
      checksums: 'when_required' as const,
    };
    process.env.AWS_ACCESS_KEY_ID = S3RVER_CREDENTIALS.accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY = S3RVER_CREDENTIALS.secretAccessKey;
    await expect(checkAnyOutputRoot('s3://no-such-bucket/x', settings)).rejects.toThrow(/no-such-bucket/);
    await checkAnyOutputRoot(`s3://${s3.bucket}/exports`, settings);
    await checkAnyOutputRoot(join(tmp, 'local-out'), settings);
    expect(await readdir(join(tmp, 'local-out'))).toEqual(['_staging']);
  });
});
