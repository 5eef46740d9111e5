// uploadSnapshot against a real s3rver (through the fault proxy) and a local root: order, sizes, latest.
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Manifest } from '../../src/output/catalog/manifest.js';
import { openStorage } from '../../src/output/storage/open-storage.js';
import type { Storage } from '../../src/output/storage/storage.js';
import { LATEST_KEY, readLatest, uploadSnapshot } from '../../src/output/catalog/upload-snapshot.js';
import { S3RVER_CREDENTIALS, startFaultProxy, startS3, type TestS3 } from '../helpers/s3.js';

let s3: TestS3;
let tmp: string;

beforeAll(async () => {
  s3 = await startS3();
  tmp = await mkdtemp(join(tmpdir(), 'upload-snapshot-'));
});
afterAll(async () => {
  await s3.close();
  await rm(tmp, { recursive: true, force: true });
});

/** A built snapshot on local disk: `count` data files of random bytes and the manifest naming them. */
async function builtSnapshot(
  id: string,
  date: string,
  count: number,
  publishedAt = `${date}T02:00:00.000Z`,
): Promise<{ dir: string; manifest: Manifest }> {
  const dir = join(tmp, `built-${id}`);
  const files: Manifest['files'] = [];
  for (let i = 0; i < count; i++) {
    const path = `facts_core/snapshot_date=${date}/snapshot_id=${id}/part-${String(i).padStart(5, '0')}.parquet`;
    const body = randomBytes(1000 + i * 37);
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), body);
    files.push({
      path,
      dataset: 'facts_core',
      format: 'parquet',
      rows: i + 1,
      bytes: body.length,
      sha256: '',
    });
  }
  return {
    dir,
    manifest: {
      snapshot_id: id,
      snapshot_date: date,
      published_at: publishedAt,
      files,
      parts: [],
    } as unknown as Manifest,
  };
}

async function text(st: Storage, key: string): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of await st.getStream(key)) chunks.push(Buffer.from(c as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

describe('uploadSnapshot', () => {
  it.each(['drop-once', 'status-500-once'] as const)(
    'puts data objects, manifest, _SUCCESS and latest on a bucket, retrying a fault (%s)',
    async (fault) => {
      const proxy = await startFaultProxy(s3.endpoint, fault);
      const st = openStorage(`s3://${s3.bucket}/up-${fault}`, {
        settings: { endpoint: proxy.endpoint, forcePathStyle: true, region: 'us-east-1' },
        credentials: S3RVER_CREDENTIALS,
      });
      const { dir, manifest } = await builtSnapshot(`snap-${fault}`, '2026-11-20', 6);
      const pointer = await uploadSnapshot({ localRoot: dir, storage: st, manifest, concurrency: 3 });
      expect(proxy.faultsInjected).toBe(1);
      for (const f of manifest.files) expect((await st.head(f.path))?.bytes).toBe(f.bytes);
      expect(JSON.parse(await text(st, `_snapshots/snap-${fault}/manifest.json`))).toEqual(manifest);
      expect(await st.head(`_snapshots/snap-${fault}/_SUCCESS`)).toEqual({
        key: `_snapshots/snap-${fault}/_SUCCESS`,
        bytes: 0,
      });
      expect(await readLatest(st)).toEqual(pointer);
      expect(pointer.snapshot_id).toBe(`snap-${fault}`);
      // _SUCCESS and latest are written after every data object (the proxy saw the order).
      const puts = proxy.requests.filter((r) => r.startsWith('PUT '));
      const success = puts.findIndex((r) => r.includes('_SUCCESS'));
      const latest = puts.findIndex((r) => r.includes(`/${LATEST_KEY} `) || r.includes(`/${LATEST_KEY}?`));
      const lastData = Math.max(...puts.map((r, i) => (r.includes('.parquet') ? i : -1)));
      expect(lastData).toBeLessThan(success);
      expect(success).toBeLessThan(latest);
      await st.close();
      await proxy.close();
    },
  );

  it('fails before the manifest when a data file is missing, and moves latest only forward in publish order', async () => {
    const root = join(tmp, 'local-root');
    const st = openStorage(root);
    const newer = await builtSnapshot('newer', '2026-11-21', 2);
    await uploadSnapshot({ localRoot: newer.dir, storage: st, manifest: newer.manifest });
    // Its manifest was written before newer's (a slow upload): latest stays on newer.
    const older = await builtSnapshot('older', '2026-11-22', 2, '2026-11-21T01:00:00.000Z');
    await uploadSnapshot({ localRoot: older.dir, storage: st, manifest: older.manifest });
    expect((await readLatest(st))?.snapshot_id).toBe('newer');
    expect(await readFile(join(root, '_snapshots/older/_SUCCESS'), 'utf8')).toBe('');
    // Published after newer with an earlier label date (a time zone behind): latest moves to it.
    const behind = await builtSnapshot('behind', '2026-11-20', 2, '2026-11-21T03:00:00.000Z');
    await uploadSnapshot({ localRoot: behind.dir, storage: st, manifest: behind.manifest });
    expect(await readLatest(st)).toMatchObject({
      snapshot_id: 'behind',
      published_at: '2026-11-21T03:00:00.000Z',
      order: 'published_at',
    });

    const broken = await builtSnapshot('broken', '2026-11-22', 2);
    await rm(join(broken.dir, broken.manifest.files[1]!.path));
    await expect(
      uploadSnapshot({ localRoot: broken.dir, storage: st, manifest: broken.manifest }),
    ).rejects.toThrow();
    expect(await st.head('_snapshots/broken/manifest.json')).toBeNull();
    expect(await st.head('_snapshots/broken/_SUCCESS')).toBeNull();
    expect((await readLatest(st))?.snapshot_id).toBe('behind');
    await st.close();
  });
});
