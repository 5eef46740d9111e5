/**
 * The rows a part staged outside its gzip (part-writer.ts `piecesOutsideGzip`) holds only in its
 * segments. Before the dataset's files are converted, each such segment must have Parquet made
 * by the statement those files are converted with: a segment still in its plain file (its
 * conversion failed or was skipped, or never ran, like the last, partial one) is converted here.
 * One whose plain file does not convert strictly (a value that does not fit) is left to the
 * conversion of its output file, which reads every row. A segment in neither file fails the
 * publish, naming the part and the rows: never a shorter file.
 */
import { mkdir, rm, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { coerceError, OutputError } from '../../../errors.js';
import type { Logger } from '../../../log.js';
import {
  maxLineBytesFor,
  sqlString,
  type ConvertInput,
  type DuckSession,
  type ParquetCompression,
} from '../../convert/index.js';
import { copyStatement, listPieces } from './convert-piece.js';
import type { CheckedPart } from '../check-staged.js';
import type { PieceRows } from '../sidecar.js';
import type { PieceFile } from '../row-cuts.js';
import { plainPiecePath } from '../layout.js';
import { discardStagedPart } from '../states.js';

export interface OutsidePiecesOptions {
  /** What the dataset's files are converted with, and its signature (convert-piece.ts). */
  input: Omit<ConvertInput, 'mode'>;
  signature: string;
  duck: DuckSession;
  compression: ParquetCompression;
  rowGroupRows: number;
  /** Folder for the segments converted here (removed with the publish's scratch files). */
  scratchDir: string;
  /** Says why a segment is left to its output file's conversion. @defaultValue silent */
  log?: Logger;
}

/**
 * The segments publishing uses for `part`: those listed for its staging attempt, plus one made
 * here for each segment outside the gzip that has no usable Parquet.
 */
export async function piecesOfPart(part: CheckedPart, o: OutsidePiecesOptions): Promise<PieceFile[]> {
  const stagingId = part.stagingId;
  if (stagingId === undefined) return [];
  let listed = await listPieces(part.path, stagingId);
  if (part.gzipFrom === 0) return listed;
  const usable = (g: PieceRows): PieceFile | undefined =>
    listed.find((s) => s.skip === g.skip && s.take === g.take && s.signature === o.signature);
  const made: PieceFile[] = [];
  for (const g of part.segments) {
    if (usable(g) !== undefined) continue;
    const plain = plainPiecePath(part.path, stagingId, g.skip, g.take);
    const size = (await stat(plain).catch(() => undefined))?.size;
    const other = listed.some((s) => s.skip === g.skip && s.take === g.take);
    let why = other
      ? `its Parquet was made by another statement (field kinds seen after it changed the dataset's) and its plain file is gone`
      : `neither its Parquet nor its plain file ${plain} is there`;
    if (size === g.bytes) {
      try {
        made.push(await convertPlain(part, g, plain, o));
      } catch (err: unknown) {
        // A value that does not fit its column: the output file holding these rows is converted
        // from every row, these from the plain file, tolerantly (convert-file.ts).
        o.log?.warn(
          {
            part: `${part.pointer.dataset}/${part.pointer.ticker}`,
            rows: [g.skip, g.skip + g.take],
            reason: coerceError(err).message.split('\n')[0],
          },
          'a segment does not convert strictly from its plain file; its output file is converted from every row',
        );
      }
      continue;
    }
    if (size !== undefined) why = `its plain file ${plain} has ${size} bytes, not ${g.bytes}`;
    // Its conversion job may have ended (and removed the plain file) meanwhile.
    listed = await listPieces(part.path, stagingId);
    if (usable(g) === undefined) throw await lostRows(part, g, why);
  }
  return [...listed, ...made].sort((a, b) => a.skip - b.skip);
}

/** Converts a segment's plain file into a Parquet file of the scratch folder, strictly. */
async function convertPlain(
  part: CheckedPart,
  g: PieceRows,
  plain: string,
  o: OutsidePiecesOptions,
): Promise<PieceFile> {
  await mkdir(o.scratchDir, { recursive: true });
  const to = join(o.scratchDir, `${basename(part.path, '.ndjson.gz')}-${part.stagingId}-${g.skip}.parquet`);
  const source = {
    file: plain,
    skip: 0,
    take: g.take,
    total: g.take,
    maxLineBytes: maxLineBytesFor(part.maxLineChars),
    compression: 'none' as const,
  };
  try {
    await o.duck.run(
      copyStatement({ ...o.input, mode: 'strict' }, source, to, o.compression, o.rowGroupRows),
    );
    const counted = await o.duck.all(`SELECT count(*)::BIGINT AS n FROM read_parquet(${sqlString(to)})`);
    if (Number(counted[0]?.n) !== g.take)
      throw new Error(`converted ${String(counted[0]?.n)} rows, expected ${g.take}`);
  } catch (err: unknown) {
    await rm(to, { force: true });
    throw err;
  }
  return { skip: g.skip, take: g.take, path: to, signature: o.signature };
}

/**
 * The part cannot be published: some of its rows are nowhere usable. Its staged file goes too, so
 * that a retried snapshot fetches the part again (as when a staged file is missing).
 */
async function lostRows(part: CheckedPart, g: PieceRows, why: string): Promise<OutputError> {
  const label = `${part.pointer.dataset}/${part.pointer.ticker}`;
  await discardStagedPart(part.path);
  return new OutputError(
    'OUTPUT_FAILED',
    `part ${label}: rows [${g.skip}, ${g.skip + g.take}) were staged outside its gzip, in a segment, and ${why}; its staged file is removed, so a retried snapshot (--retry) fetches the part again, staged whole`,
  );
}
