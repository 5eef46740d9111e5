/** Durable file operations: a published file must survive a crash right after publishing. */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { open, rename, rm, writeFile, unlink, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import { coerceError } from '../../errors.js';

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

const HASH_CHUNK = 1 << 20;

/**
 * sha256 hex and size of a file, read through one reused 1 MiB buffer: a stream would allocate a
 * fresh buffer per chunk, and hashing a 100 MB staged part that way left ~50 MB of garbage for the
 * GC, on top of DuckDB's memory while publishing.
 */
export async function hashFile(path: string): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash('sha256');
  const buf = Buffer.allocUnsafe(HASH_CHUNK);
  let bytes = 0;
  const fh = await open(path, 'r');
  try {
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, HASH_CHUNK, null);
      if (bytesRead === 0) break;
      hash.update(buf.subarray(0, bytesRead));
      bytes += bytesRead;
    }
  } finally {
    await fh.close();
  }
  return { sha256: hash.digest('hex'), bytes };
}

/** A byte range of a file: [start, end), or to its end when `end` is undefined. */
export interface FileRange {
  path: string;
  start?: number;
  end?: number;
}

/**
 * Writes the concatenation of `paths` to `out` through one reused 1 MiB buffer (no garbage for the
 * GC while DuckDB runs next to it). Concatenated gzip files are one valid gzip file.
 */
export async function concatFiles(paths: readonly string[], out: string): Promise<number> {
  return copyRanges(
    paths.map((path) => ({ path })),
    out,
  );
}

/** Writes the given byte ranges, in order, to `out` (created or truncated); returns bytes written. */
export async function copyRanges(ranges: readonly FileRange[], out: string): Promise<number> {
  const dst = await open(out, 'w');
  try {
    return await appendRanges(dst, ranges);
  } finally {
    await dst.close();
  }
}

/** Appends byte ranges to an open file at its current position, through one reused 1 MiB buffer. */
export async function appendRanges(dst: FileHandle, ranges: readonly FileRange[]): Promise<number> {
  const buf = Buffer.allocUnsafe(HASH_CHUNK);
  let bytes = 0;
  for (const range of ranges) {
    const src = await open(range.path, 'r');
    try {
      let pos = range.start ?? 0;
      const end = range.end ?? Infinity;
      while (pos < end) {
        const want = Math.min(HASH_CHUNK, end - pos);
        const { bytesRead } = await src.read(buf, 0, want, pos);
        if (bytesRead === 0) {
          if (range.end !== undefined)
            throw new Error(`${range.path} ended at byte ${pos}, before ${range.end}`);
          break;
        }
        let written = 0;
        while (written < bytesRead) {
          const w = await dst.write(buf, written, bytesRead - written);
          written += w.bytesWritten;
        }
        pos += bytesRead;
        bytes += bytesRead;
      }
    } finally {
      await src.close();
    }
  }
  return bytes;
}

/** What removeTempDir needs: the removal (fs.promises.rm's shape) and where to say it failed. */
export interface RemoveTempDirOptions {
  /** @defaultValue fs.promises.rm */
  remove?: (path: string, opts: { recursive: true; force: true; maxRetries: number }) => Promise<void>;
  /** Told when the folder stays behind. @defaultValue silent */
  warn?: (fields: { dir: string; reason: string }, msg: string) => void;
}

/**
 * Removes a temp folder of this process's own work, retrying a removal that raced a file still
 * being closed in it (ENOTEMPTY, EBUSY: Node's `maxRetries`). Never throws: work already done
 * (a snapshot uploaded, a part stored) must not fail over a leftover temp folder, which is only
 * disk in os.tmpdir(); the folder is named in a warning instead.
 */
export async function removeTempDir(dir: string, o: RemoveTempDirOptions = {}): Promise<void> {
  const remove = o.remove ?? rm;
  try {
    await remove(dir, { recursive: true, force: true, maxRetries: 3 });
  } catch (err: unknown) {
    o.warn?.(
      { dir, reason: coerceError(err).message },
      'a temp folder could not be removed; it is left behind',
    );
  }
}

/**
 * Writes `out` (created or truncated): the text of the gzip files `inputs`, in order, as one gzip
 * member at `level`. DuckDB 1.5.6's gzip reader can silently drop the later members of a file
 * of several (docs/decisions.md, "a file DuckDB reads short"), so a file readers get, or a
 * conversion's second try, is one member.
 */
export async function gzipAsOneMember(inputs: readonly string[], out: string, level: number): Promise<void> {
  try {
    await pipeline(gunzippedText(inputs), createGzip({ level }), createWriteStream(out));
  } catch (err: unknown) {
    await rm(out, { force: true });
    throw err;
  }
}

/** The decompressed bytes of gzip files in order (every member of each). */
export async function* gunzippedText(paths: readonly string[]): AsyncGenerator<Buffer> {
  for (const path of paths) {
    const gunzip = createGunzip();
    const fed = pipeline(createReadStream(path), gunzip);
    // Settled whatever ends the loop (a consumer that stops early leaves it rejected, and unread).
    fed.catch(() => undefined);
    try {
      for await (const chunk of gunzip as AsyncIterable<Buffer>) yield chunk;
    } catch (err: unknown) {
      // A read error destroys the gunzip too: what `fed` rejects with names the file.
      await fed;
      throw err;
    }
    await fed;
  }
}
