/** Storage port over a local directory: today's semantics (write a temp file, fsync, rename). */
import { createReadStream } from 'node:fs';
import { copyFile, link, mkdir, readdir, rename, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { StorageError } from '../../errors.js';
import { fsyncDir, fsyncFile, writeFileAtomic } from './fs-util.js';
import { checkKey, existsAlready, type Storage, type StoredObject } from './storage.js';

function tmpName(path: string): string {
  return `${path}.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`;
}

/** Writes `dst` whole only if it does not exist: a synced temp file hard-linked to it (link never replaces). */
async function writeFileExclusive(dst: string, data: string | Uint8Array): Promise<void> {
  const tmp = tmpName(dst);
  try {
    await writeFile(tmp, data);
    await fsyncFile(tmp);
    await link(tmp, dst).catch((err: unknown) => {
      throw (err as NodeJS.ErrnoException).code === 'EEXIST' ? existsAlready(dst, err) : err;
    });
  } finally {
    await unlink(tmp).catch(() => undefined);
  }
  await fsyncDir(dirname(dst));
}

/** Copies `src` to `dst` durably through a temp name, so readers never see a short file. */
async function copyAtomic(src: string, dst: string): Promise<void> {
  await mkdir(dirname(dst), { recursive: true });
  const tmp = tmpName(dst);
  try {
    await copyFile(src, tmp);
    await fsyncFile(tmp);
    await rename(tmp, dst);
  } catch (err: unknown) {
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
  await fsyncDir(dirname(dst));
}

export class LocalStorage implements Storage {
  readonly kind = 'local' as const;
  constructor(readonly root: string) {}

  url(key: string): string {
    return join(this.root, ...checkKey(key).split('/'));
  }

  async putFile(key: string, localPath: string): Promise<StoredObject> {
    const dst = this.url(key);
    await copyAtomic(localPath, dst);
    return { key, bytes: (await stat(dst)).size };
  }

  async putBytes(
    key: string,
    data: string | Uint8Array,
    opts: { ifAbsent?: boolean } = {},
  ): Promise<StoredObject> {
    const dst = this.url(key);
    await mkdir(dirname(dst), { recursive: true });
    if (opts.ifAbsent === true) await writeFileExclusive(dst, data);
    else await writeFileAtomic(dst, data);
    return { key, bytes: typeof data === 'string' ? Buffer.byteLength(data) : data.byteLength };
  }

  async getStream(key: string): Promise<NodeJS.ReadableStream> {
    const path = this.url(key);
    if ((await this.head(key)) === null) throw notFound(path);
    return createReadStream(path);
  }

  async download(key: string, localPath: string): Promise<StoredObject> {
    const src = this.url(key);
    if ((await this.head(key)) === null) throw notFound(src);
    await copyAtomic(src, localPath);
    return { key, bytes: (await stat(localPath)).size };
  }

  /**
   * Puts the object `from` at `to` as a hard link (no bytes copied), through a temp name so `to`
   * appears whole; a durable copy where the filesystem cannot link. Objects here are never written
   * in place (writers rename over them), so two names of one file never see a change.
   */
  async linkFile(from: string, to: string): Promise<StoredObject> {
    const src = this.url(from);
    const dst = this.url(to);
    await mkdir(dirname(dst), { recursive: true });
    const tmp = tmpName(dst);
    try {
      await link(src, tmp);
    } catch (err: unknown) {
      if ((err as { code?: string }).code === 'ENOENT') throw notFound(src);
      await copyAtomic(src, dst); // another filesystem, or one without hard links
      return { key: to, bytes: (await stat(dst)).size };
    }
    try {
      await rename(tmp, dst);
    } catch (err: unknown) {
      await unlink(tmp).catch(() => undefined);
      throw err;
    }
    await fsyncDir(dirname(dst));
    return { key: to, bytes: (await stat(dst)).size };
  }

  /** A hard link (a copy across file systems): the copy never depends on the original. */
  copy(from: string, to: string): Promise<StoredObject> {
    return this.linkFile(from, to);
  }

  async head(key: string): Promise<StoredObject | null> {
    try {
      const s = await stat(this.url(key));
      return s.isFile() ? { key, bytes: s.size } : null;
    } catch (err: unknown) {
      if ((err as { code?: string }).code === 'ENOENT') return null;
      throw err;
    }
  }

  async list(prefix: string): Promise<StoredObject[]> {
    // Only the folder the prefix's path names is walked: `status` asks for `_snapshots/` while a
    // run has tens of thousands of staged files beside it.
    const folder = prefix.includes('/') ? prefix.slice(0, prefix.lastIndexOf('/') + 1) : '';
    let entries: string[];
    try {
      entries = (await readdir(join(this.root, ...folder.split('/')), { recursive: true })).map(String);
    } catch (err: unknown) {
      const code = (err as { code?: string }).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return [];
      throw err;
    }
    const out: StoredObject[] = [];
    for (const rel of entries) {
      const key = folder + rel.split(sep).join('/');
      if (!key.startsWith(prefix) || /\.tmp-\d+-[a-z0-9]+$/.test(key)) continue;
      const s = await stat(join(this.root, ...key.split('/'))).catch(() => null);
      if (s?.isFile()) out.push({ key, bytes: s.size, modifiedMs: s.mtimeMs });
    }
    return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  async delete(keys: readonly string[]): Promise<void> {
    for (const key of keys) await rm(this.url(key), { force: true });
  }

  async close(): Promise<void> {}

  /** Key of an absolute path under the root (for callers that still hold paths). */
  keyOf(path: string): string {
    return relative(this.root, path).split(sep).join('/');
  }
}

function notFound(path: string): StorageError {
  return new StorageError('STORAGE_NOT_FOUND', `${path}: no such file`, false);
}
