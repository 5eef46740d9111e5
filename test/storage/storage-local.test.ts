// Storage port over a local directory: same contract as the bucket (temp + rename, exact sizes).
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalStorage } from '../../src/output/storage/local-storage.js';
import { openStorage } from '../../src/output/storage/open-storage.js';
import { removeTempDir } from '../../src/output/storage/fs-util.js';

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'storage-local-'));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe('LocalStorage', () => {
  it('puts, heads, gets, lists and deletes; no temp files left', async () => {
    const st = openStorage('root', { cwd: tmp });
    expect(st.kind).toBe('local');
    expect(st.root).toBe(join(tmp, 'root'));
    expect(await st.list('')).toEqual([]);
    const src = join(tmp, 'src.bin');
    const body = randomBytes(3 * 1024 * 1024 + 5);
    await writeFile(src, body);
    expect(await st.putFile('snap/d/part-0.bin', src)).toEqual({
      key: 'snap/d/part-0.bin',
      bytes: body.length,
    });
    await st.putBytes('snap/_SUCCESS', '');
    await st.putBytes('snap/manifest.json', '{"a":1}');
    expect(await st.head('snap/manifest.json')).toEqual({ key: 'snap/manifest.json', bytes: 7 });
    expect(await st.head('snap/missing')).toBeNull();
    expect((await st.list('snap/')).map((o) => o.key)).toEqual([
      'snap/_SUCCESS',
      'snap/d/part-0.bin',
      'snap/manifest.json',
    ]);
    const back = join(tmp, 'back.bin');
    await st.download('snap/d/part-0.bin', back);
    expect((await readFile(back)).equals(body)).toBe(true);
    const chunks: Buffer[] = [];
    for await (const c of await st.getStream('snap/manifest.json')) chunks.push(c as Buffer);
    expect(Buffer.concat(chunks).toString()).toBe('{"a":1}');
    await expect(st.getStream('nope')).rejects.toMatchObject({ code: 'STORAGE_NOT_FOUND' });
    expect((await readdir(join(tmp, 'root', 'snap'))).filter((n) => n.includes('.tmp-'))).toEqual([]);
    await st.delete(['snap/_SUCCESS', 'snap/manifest.json', 'never']);
    expect((await st.list('')).map((o) => o.key)).toEqual(['snap/d/part-0.bin']);
    expect(() => st.url('../escape')).toThrow(/invalid storage key/);
    await st.close();
  });

  it('links an object under a second key (same file, no copy) and names a missing source', async () => {
    const st = new LocalStorage(join(tmp, 'links'));
    await st.putBytes('a/part.ndjson.gz', 'rows');
    expect(await st.linkFile('a/part.ndjson.gz', 'b/c/part.ndjson.gz')).toEqual({
      key: 'b/c/part.ndjson.gz',
      bytes: 4,
    });
    const [a, b] = [await stat(st.url('a/part.ndjson.gz')), await stat(st.url('b/c/part.ndjson.gz'))];
    expect(b.ino).toBe(a.ino);
    expect(a.nlink).toBe(2);
    // Linking over an existing object replaces it whole.
    await st.putBytes('d/old', 'old bytes');
    await st.linkFile('a/part.ndjson.gz', 'd/old');
    expect(await readFile(st.url('d/old'), 'utf8')).toBe('rows');
    await expect(st.linkFile('a/none', 'x')).rejects.toMatchObject({ code: 'STORAGE_NOT_FOUND' });
    expect((await st.list('')).map((o) => o.key)).toEqual([
      'a/part.ndjson.gz',
      'b/c/part.ndjson.gz',
      'd/old',
    ]);
  });
  it('lists a prefix from the folder its path names, as a filter of the whole listing would', async () => {
    const st = new LocalStorage(join(tmp, 'prefixes'));
    for (const key of [
      '_snapshots/a/manifest.json',
      '_snapshots/a/_SUCCESS',
      '_snapshots/ab/x',
      '_staging/a/T.ndjson.gz',
      'facts/snapshot_id=a/part-0.parquet',
      'latest',
    ])
      await st.putBytes(key, key);
    const all = await st.list('');
    for (const prefix of [
      '_snapshots/',
      '_snapshots/a',
      '_snapshots/a/',
      '_snap',
      'facts/snapshot_id=a/',
      'latest',
      'nope/',
      'latest/x',
    ])
      expect(await st.list(prefix), prefix).toEqual(all.filter((o) => o.key.startsWith(prefix)));
    expect((await st.list('_snapshots/')).map((o) => o.key)).toEqual([
      '_snapshots/a/_SUCCESS',
      '_snapshots/a/manifest.json',
      '_snapshots/ab/x',
    ]);
  });
});

describe('output.s3 settings', () => {
  it('keeps an s3:// root as given, reads the S3 env settings, one line for a bad value', async () => {
    const { loadConfig } = await import('../../src/config/load.js');
    const { s3Settings } = await import('../../src/output/storage/open-storage.js');
    const config = loadConfig({
      cwd: tmp,
      env: {
        FILINGS_EXPORT_OUT: 's3://my-bucket/exports',
        FILINGS_EXPORT_S3_ENDPOINT: 'http://127.0.0.1:9000',
        FILINGS_EXPORT_S3_FORCE_PATH_STYLE: 'true',
      },
    });
    expect(config.output.dir).toBe('s3://my-bucket/exports');
    expect(s3Settings(config.output)).toEqual({
      endpoint: 'http://127.0.0.1:9000',
      region: null,
      forcePathStyle: true,
      checksums: 'when_supported',
    });
    expect(loadConfig({ cwd: tmp, env: { FILINGS_EXPORT_OUT: 'out' } }).output.dir).toBe(join(tmp, 'out'));
    expect(() => loadConfig({ cwd: tmp, env: { FILINGS_EXPORT_S3_CHECKSUMS: 'sometimes' } })).toThrow(
      /output\.s3\.checksums.*must be when_supported or when_required/,
    );
  });
});

describe('removeTempDir', () => {
  it('removes the folder and everything in it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fx-temp-'));
    await writeFile(join(dir, 'a'), 'x');
    const warned: string[] = [];
    await removeTempDir(dir, { warn: (f) => warned.push(f.dir) });
    await expect(stat(dir)).rejects.toThrow(/ENOENT/);
    expect(warned).toEqual([]);
  });

  it('asks Node to retry a removal that raced a file being written, and never throws: it names the folder left', async () => {
    const calls: { maxRetries: number }[] = [];
    const warned: { dir: string; reason: string }[] = [];
    const busy = Object.assign(new Error("ENOTEMPTY: directory not empty, rmdir '/tmp/x/_snapshots/s1'"), {
      code: 'ENOTEMPTY',
    });
    await expect(
      removeTempDir('/tmp/x', {
        remove: (_path, opts) => {
          calls.push(opts);
          return Promise.reject(busy);
        },
        warn: (fields) => warned.push(fields),
      }),
    ).resolves.toBeUndefined();
    expect(calls).toEqual([{ recursive: true, force: true, maxRetries: 3 }]);
    expect(warned).toEqual([{ dir: '/tmp/x', reason: busy.message }]);
  });
});
