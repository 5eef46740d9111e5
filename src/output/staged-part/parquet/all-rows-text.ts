/**
 * Every row of an output file as staged text, for a conversion that must read them all when some
 * were staged outside the gzip (part-writer.ts `piecesOutsideGzip`): a value that does not fit
 * its column (the tolerant conversion reads every row), a segment whose Parquet does not convert
 * or does not join. Each such part's segments are still in their plain files until the publish;
 * here they are gzipped in front of the part's own bytes, so the file reads like a part staged
 * whole. Rare and bounded: one output file's rows, once.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rm, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';

/** A staged file of an output file and, for a part staged outside its gzip, the text of the rows it lacks. */
export interface StagedText {
  /** The staged gzip file (for a part staged outside its gzip: its tail, rows [gzipFrom, rows)). */
  file: string;
  /** The plain files of rows [0, gzipFrom), in row order, each with its size when complete. @defaultValue none */
  plain?: readonly { path: string; bytes: number }[] | undefined;
}

/**
 * Writes `to`: a gzip of every row of `files` in order. Resolves false, writing nothing, when a
 * plain file is gone or not its recorded size (its rows are then nowhere whole).
 */
export async function writeWholeText(files: readonly StagedText[], to: string): Promise<boolean> {
  for (const f of files) {
    for (const p of f.plain ?? []) {
      const size = (await stat(p.path).catch(() => undefined))?.size;
      if (size !== p.bytes) return false;
    }
  }
  await mkdir(dirname(to), { recursive: true });
  try {
    await pipeline(pieces(files), createWriteStream(to));
  } catch (err: unknown) {
    await rm(to, { force: true });
    throw err;
  }
  return true;
}

/** The bytes of `to`, file by file: a part's plain text as one gzip member, then its own members. */
async function* pieces(files: readonly StagedText[]): AsyncGenerator<Buffer> {
  for (const f of files) {
    const plain = f.plain ?? [];
    if (plain.length > 0) yield* gzipped(plain.map((p) => p.path));
    yield* createReadStream(f.file) as AsyncIterable<Buffer>;
  }
}

/** The files' bytes in order through one gzip (level 1, as staging writes). */
async function* gzipped(paths: readonly string[]): AsyncGenerator<Buffer> {
  const gzip = createGzip({ level: 1 });
  const fed = pipeline(async function* () {
    for (const p of paths) yield* createReadStream(p) as AsyncIterable<Buffer>;
  }, gzip);
  // Settled whatever ends the loop (a consumer that stops early leaves it rejected, and unread).
  fed.catch(() => undefined);
  try {
    for await (const chunk of gzip as AsyncIterable<Buffer>) yield chunk;
  } catch (err: unknown) {
    // A read error destroys the gzip too: what `fed` rejects with names the file.
    await fed;
    throw err;
  }
  await fed;
}
