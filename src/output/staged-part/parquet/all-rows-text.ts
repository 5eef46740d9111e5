/**
 * Staged rows rewritten as one gzip member, for the conversions that cannot read the staged files
 * as they are:
 * - every row of an output file, when some were staged outside the gzip (part-writer.ts
 *   `piecesOutsideGzip`) and must be read again: a value that does not fit its column (the
 *   tolerant conversion reads every row), a segment whose Parquet does not convert or does not
 *   join. Each such part's segments are still in their plain files until the publish; here they
 *   go in front of the part's own rows, so the file reads like a part staged whole.
 * - the staged files of an output file that DuckDB read short. Its gzip reader can end a file of
 *   several gzip members early, without an error: when a read of its 32 KiB input buffer ends
 *   exactly at the end of the file and a member ends inside that buffer, the members after it
 *   are dropped (DuckDB 1.5.6; dataset-files.ts counts every converted file and comes here).
 *   One member has no member end to stop at.
 * Rare and bounded: one output file's rows, once, decompressed and compressed again at level 1.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rm, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { gunzippedText } from '../../storage/index.js';

/** A staged file of an output file and, for a part staged outside its gzip, the text of the rows it lacks. */
export interface StagedText {
  /** The staged gzip file (for a part staged outside its gzip: its tail, rows [gzipFrom, rows)). */
  file: string;
  /** The plain files of rows [0, gzipFrom), in row order, each with its size when complete. @defaultValue none */
  plain?: readonly { path: string; bytes: number }[] | undefined;
}

/**
 * Writes `to`: one gzip member (level 1, as staging writes) of every row of `files` in order, each
 * file's plain text before its gzip's rows. Resolves false, writing nothing, when a plain file is
 * gone or not its recorded size (its rows are then nowhere whole).
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
    await pipeline(texts(files), createGzip({ level: 1 }), createWriteStream(to));
  } catch (err: unknown) {
    await rm(to, { force: true });
    throw err;
  }
  return true;
}

/** The rows' text, file by file: a part's plain files, then its gzip decompressed (every member). */
async function* texts(files: readonly StagedText[]): AsyncGenerator<Buffer> {
  for (const f of files) {
    for (const p of f.plain ?? []) yield* createReadStream(p.path) as AsyncIterable<Buffer>;
    yield* gunzippedText([f.file]);
  }
}
