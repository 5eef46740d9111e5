// Storage port against a real s3rver: round trips, multipart, aborts, retried faults, preflight, DuckDB.
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StorageError } from '../../src/errors.js';
import { checkStorage } from '../../src/output/storage/check-storage.js';
import { openStorage } from '../../src/output/storage/open-storage.js';
import { S3Storage, type S3StorageOptions } from '../../src/output/storage/s3-storage.js';
import { parseS3Root } from '../../src/output/storage/s3-url.js';
import { S3RVER_CREDENTIALS, startFaultProxy, startS3, type TestS3 } from '../helpers/s3.js';

let s3: TestS3;
let tmp: string;
const MiB = 1024 * 1024;

function opts(endpoint: string, extra: Partial<S3StorageOptions> = {}): S3StorageOptions {
  return {
    settings: { endpoint, forcePathStyle: true, region: 'us-east-1' },
    credentials: S3RVER_CREDENTIALS,
    ...extra,
  };
}
const sha = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

beforeAll(async () => {
  s3 = await startS3();
  tmp = await mkdtemp(join(tmpdir(), 'storage-s3-'));
});
afterAll(async () => {
  await s3.close();
  await rm(tmp, { recursive: true, force: true });
});

describe('S3Storage on s3rver', () => {
  it('puts, heads, gets, lists (paginated) and deletes under a prefix', async () => {
    const st = openStorage(`s3://${s3.bucket}/snapshots/a`, opts(s3.endpoint));
    await st.putBytes('m/manifest.json', '{"x":1}');
    const file = join(tmp, 'small.bin');
    const body = randomBytes(1234);
    await writeFile(file, body);
    // LastModified is the server's clock, to the second: it falls between these two instants.
    const putFrom = Math.floor(Date.now() / 1000) * 1000;
    expect(await st.putFile('d/part-0.bin', file)).toEqual({ key: 'd/part-0.bin', bytes: 1234 });
    expect(await st.head('d/part-0.bin')).toEqual({ key: 'd/part-0.bin', bytes: 1234 });
    expect(await st.head('d/missing')).toBeNull();
    const back = join(tmp, 'back.bin');
    await st.download('d/part-0.bin', back);
    expect(sha(await readFile(back))).toBe(sha(body));
    expect(st.url('d/part-0.bin')).toBe(`s3://${s3.bucket}/snapshots/a/d/part-0.bin`);
    await expect(st.getStream('nope')).rejects.toMatchObject({ code: 'STORAGE_NOT_FOUND' });

    const many = Array.from({ length: 1005 }, (_, i) => `many/k${String(i).padStart(4, '0')}`);
    for (let i = 0; i < many.length; i += 50)
      await Promise.all(many.slice(i, i + 50).map((k) => st.putBytes(k, k)));
    const listed = await st.list('many/');
    expect(listed.map((o) => o.key)).toEqual(many);
    await st.delete([...many, 'm/manifest.json', 'never-existed']);
    const left = await st.list('');
    expect(left).toEqual([{ key: 'd/part-0.bin', bytes: 1234, modifiedMs: expect.any(Number) }]);
    expect(left[0]?.modifiedMs).toBeGreaterThanOrEqual(putFrom);
    expect(left[0]?.modifiedMs).toBeLessThanOrEqual(Date.now());
    await st.close();
  });

  it('uploads a 12 MB file as a multipart upload (5 MiB parts) byte-identical', async () => {
    const proxy = await startFaultProxy(s3.endpoint, 'none');
    const st = openStorage(`s3://${s3.bucket}/mp`, opts(proxy.endpoint, { partSize: 5 * MiB, queueSize: 2 }));
    const file = join(tmp, 'big.bin');
    const body = randomBytes(12 * MiB + 17);
    await writeFile(file, body);
    await st.putFile('big.bin', file);
    expect(proxy.requests.filter((r) => r.startsWith('PUT ') && r.includes('partNumber='))).toHaveLength(3);
    const back = join(tmp, 'big-back.bin');
    expect((await st.download('big.bin', back)).bytes).toBe(body.length);
    expect(sha(await readFile(back))).toBe(sha(body));
    await st.close();
    await proxy.close();
  });

  it('also works with checksums only when required (WHEN_REQUIRED) for PutObject and multipart', async () => {
    const st = openStorage(
      `s3://${s3.bucket}/ck`,
      opts(s3.endpoint, {
        partSize: 5 * MiB,
        settings: { endpoint: s3.endpoint, forcePathStyle: true, checksums: 'when_required' },
      }),
    );
    const file = join(tmp, 'ck.bin');
    const body = randomBytes(11 * MiB);
    await writeFile(file, body);
    await st.putBytes('small', 'hello');
    await st.putFile('big', file);
    const back = join(tmp, 'ck-back.bin');
    await st.download('big', back);
    expect(sha(await readFile(back))).toBe(sha(body));
    const small = join(tmp, 'ck-small');
    await st.download('small', small);
    expect(await readFile(small, 'utf8')).toBe('hello');
    await st.close();
  });

  it.each(['drop-once', 'status-500-once'] as const)('retries an upload fault (%s)', async (fault) => {
    const proxy = await startFaultProxy(s3.endpoint, fault);
    const st = openStorage(`s3://${s3.bucket}/fault-${fault}`, opts(proxy.endpoint, { partSize: 5 * MiB }));
    const file = join(tmp, `f-${fault}.bin`);
    const body = randomBytes(6 * MiB);
    await writeFile(file, body);
    await st.putFile('obj.bin', file);
    expect(proxy.faultsInjected).toBe(1);
    const back = join(tmp, `f-${fault}-back.bin`);
    await st.download('obj.bin', back);
    expect(sha(await readFile(back))).toBe(sha(body));
    await st.close();
    await proxy.close();
  });

  it('aborts the multipart upload when cancelled, and the object never appears', async () => {
    const proxy = await startFaultProxy(s3.endpoint, 'none');
    const st = openStorage(
      `s3://${s3.bucket}/abort`,
      opts(proxy.endpoint, { partSize: 5 * MiB, queueSize: 1 }),
    );
    const file = join(tmp, 'abort.bin');
    await writeFile(file, randomBytes(20 * MiB));
    const ac = new AbortController();
    const put = st.putFile('obj.bin', file, { signal: ac.signal });
    // Cancel once the multipart upload exists and its first part went up.
    while (!proxy.requests.some((r) => r.startsWith('PUT ') && r.includes('partNumber=')))
      await new Promise((r) => setTimeout(r, 10));
    ac.abort();
    await expect(put).rejects.toBeInstanceOf(StorageError);
    const created = proxy.requests.find((r) => r.startsWith('PUT ') && r.includes('uploadId='));
    const uploadId = /uploadId=([^&\s]+)/.exec(created ?? '')?.[1];
    expect(uploadId).toBeDefined();
    // s3rver 3.7.1 answers neither AbortMultipartUpload nor ListMultipartUploads (405/501), so
    // what is checked is that the abort request for this upload was sent, and no object exists.
    expect(proxy.requests.some((r) => r.startsWith('DELETE ') && r.includes(`uploadId=${uploadId}`))).toBe(
      true,
    );
    expect(await st.head('obj.bin')).toBeNull();
    await st.close();
    await proxy.close();
  });

  it('downloads a Parquet object DuckDB reads back', async () => {
    const inst = await DuckDBInstance.create(':memory:');
    const conn = await inst.connect();
    const src = join(tmp, 'rows.parquet');
    await conn.run(`COPY (SELECT range AS id, range * 2 AS v FROM range(1000)) TO '${src}' (FORMAT parquet)`);
    const st = openStorage(`s3://${s3.bucket}/pq`, opts(s3.endpoint));
    await st.putFile('rows.parquet', src);
    const back = join(tmp, 'rows-back.parquet');
    await st.download('rows.parquet', back);
    const r = await conn.runAndReadAll(`SELECT count(*)::INT AS n, sum(v)::BIGINT AS s FROM '${back}'`);
    expect(r.getRowObjects()).toEqual([{ n: 1000, s: 999000n }]);
    conn.closeSync();
    inst.closeSync();
    await st.close();
  });
});

describe('checkStorage preflight', () => {
  it('passes for a reachable bucket', async () => {
    await expect(checkStorage(`s3://${s3.bucket}/x`, opts(s3.endpoint))).resolves.toBeUndefined();
  });

  it('one line for a missing bucket', async () => {
    const err = await checkStorage('s3://no-such-bucket/x', opts(s3.endpoint)).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'STORAGE_UNAVAILABLE', retryable: false });
    expect((err as Error).message).toMatch(
      /^output root s3:\/\/no-such-bucket\/x \(endpoint http:.*\): bucket does not exist$/,
    );
  });

  it('one line for an unknown access key (s3rver checks the key id, not the V4 signature)', async () => {
    const bad = { ...opts(s3.endpoint), credentials: { accessKeyId: 'WRONG', secretAccessKey: 'S3RVER' } };
    const err = await checkStorage(`s3://${s3.bucket}/x`, bad).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'STORAGE_UNAVAILABLE', retryable: false });
    expect((err as Error).message).toMatch(/credentials refused or missing/);
    expect((err as Error).message).not.toContain('S3RVER');
  });

  it('one line for an unreachable endpoint', async () => {
    const proxy = await startFaultProxy(s3.endpoint, 'none');
    const dead = proxy.endpoint;
    await proxy.close();
    const err = await checkStorage(`s3://${s3.bucket}/x`, opts(dead)).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'STORAGE_UNAVAILABLE', retryable: false });
    expect((err as Error).message).toMatch(/endpoint unreachable \(ECONNREFUSED\)/);
  });

  it('local roots: creates a missing one, refuses a file', async () => {
    const dir = join(tmp, 'new-root');
    await checkStorage(dir);
    const file = join(tmp, 'a-file');
    await writeFile(file, 'x');
    await expect(checkStorage(file)).rejects.toThrow(/is not a directory/);
  });
});

describe('parseS3Root', () => {
  it('parses bucket and prefix, one line for bad roots', () => {
    expect(parseS3Root('s3://my-bucket/a/b/')).toEqual({ bucket: 'my-bucket', prefix: 'a/b' });
    expect(parseS3Root('s3://my-bucket')).toEqual({ bucket: 'my-bucket', prefix: '' });
    expect(() => parseS3Root('s3:///x')).toThrow(/names no bucket/);
    expect(() => parseS3Root('s3://My_Bucket/x')).toThrow(/not a valid S3 bucket name/);
    expect(() => parseS3Root('s3://b-1/a//b')).toThrow(/empty, \. or \.\. segment/);
    expect(() => openStorage('gs://b/x')).toThrow(/only local paths and s3:\/\/ roots/);
  });
  it('S3Storage root string', () => {
    expect(new S3Storage({ bucket: 'b12', prefix: '' }).root).toBe('s3://b12');
  });
});
