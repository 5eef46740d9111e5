/** Durable file operations: a published file must survive a crash right after publishing. */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, rename, writeFile, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';

/** fsync a file (by path). */
export async function fsyncFile(path: string): Promise<void> {
  const fh = await open(path, 'r+');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** fsync a directory so renames and creations inside it are durable. Best effort where unsupported. */
export async function fsyncDir(path: string): Promise<void> {
  let fh;
  try {
    fh = await open(path, 'r');
    await fh.sync();
  } catch (err: unknown) {
    // Some platforms (Windows) refuse to open or sync directories; the data files are synced anyway.
    const code = (err as { code?: string }).code;
    if (code !== 'EISDIR' && code !== 'EPERM' && code !== 'EINVAL' && code !== 'EBADF') throw err;
  } finally {
    await fh?.close();
  }
}

/** Writes a file under a temporary name, fsyncs it and renames it into place. */
export async function writeFileAtomic(path: string, data: string | Uint8Array): Promise<void> {
  const tmp = `${path}.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`;
  try {
    await writeFile(tmp, data);
    await fsyncFile(tmp);
    await rename(tmp, path);
  } catch (err: unknown) {
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
  await fsyncDir(dirname(path));
}

/** sha256 hex and size of a file, streamed. */
export async function hashFile(path: string): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20 })) {
    const buf = chunk as Buffer;
    hash.update(buf);
    bytes += buf.length;
  }
  return { sha256: hash.digest('hex'), bytes };
}
