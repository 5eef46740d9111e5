/**
 * Converts the staged rows of one output file into typed Parquet: in one DuckDB COPY, or in row
 * ranges on several sessions at once whose files are concatenated without re-encoding
 * (parquet-concat.ts). Strict first; when a value does not fit its column, the whole file again in
 * one tolerant COPY that keeps such values in `_extra`. Rows staged outside the gzip that no
 * segment holds usably are read from their plain files (all-rows-text.ts).
 */
import { mkdir, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Logger } from '../../../log.js';
import { coerceError, OutputError } from '../../../errors.js';
import type { DatasetName } from '../../../types.js';
import {
  concatParquet,
  type ConvertInput,
  type ConvertMode,
  type ConvertSource,
  type DuckSession,
  type ParquetCompression,
} from '../../convert/index.js';
import { copyStatement } from './convert-piece.js';
import { memberCut, rowRanges, SKIP_COST } from '../row-cuts.js';
import type { MemberStart } from '../sidecar.js';
import { copyRanges } from '../../storage/index.js';

export interface ConvertFileOptions {
  /** Schema, kinds and extra fields of the dataset (the mode is chosen here). */
  input: Omit<ConvertInput, 'mode'>;
  /** The staged rows of the file. */
  source: ConvertSource;
  /** Where `source.file`'s gzip members after the first start (row-cuts.ts `joinedMembers`); empty when unknown. */
  members: readonly MemberStart[];
  /** The Parquet file to write. */
  to: string;
  /** Path of the scratch copy of range `i`'s members. */
  scratch: (i: number) => string;
  duck: DuckSession;
  /** More sessions: up to 1 + this many ranges convert at once. */
  rangeDucks: readonly DuckSession[];
  compression: ParquetCompression;
  rowGroupRows: number;
  /**
   * Parquet files already holding some of the file's rows, converted by the same strict statement
   * while the parts were staged (convert-piece.ts): rows [skip, skip + take) of `source.file`,
   * in order, disjoint, inside the file. Only the rows between and around them are converted
   * here. @defaultValue none
   */
  ready?: readonly Piece[];
  /**
   * Rows of `source.file`'s numbering its bytes do not hold (parts staged with their segments
   * outside the gzip, row-cuts.ts `joinedMembers`): `ready` should cover them. When it does not,
   * or the file must be converted from every row (a value that does not fit, segments that do
   * not join), the rows come from `wholeText`, and without it the file fails. @defaultValue none
   */
  holes?: readonly { skip: number; take: number }[];
  /**
   * Writes every row of `source.file`'s numbering, holes included, as staged gzip text into the
   * given path (all-rows-text.ts); resolves false when some rows are no longer there.
   * @defaultValue none: a file with holes that must be converted from every row fails
   */
  wholeText?: (to: string) => Promise<boolean>;
  dataset: DatasetName;
  logger: Logger;
}

/** Rows [skip, skip + take) of a file, converted into `path`. */
export interface Piece {
  skip: number;
  take: number;
  path: string;
}

/** Writes `o.to`; `tolerantReason` says why a strict conversion failed, when it did. */
export async function convertFile(o: ConvertFileOptions): Promise<{ tolerantReason?: string }> {
  const { source } = o;
  const ready = o.ready ?? [];
  const gaps = gapsBetween(ready, source);
  if (gaps === undefined)
    throw new OutputError('OUTPUT_FAILED', `${o.to}: the segments given overlap or lie outside the file`);
  const holes = o.holes ?? [];
  const lost = gaps.flatMap((g) => holes.filter((h) => h.skip < g.skip + g.take && g.skip < h.skip + h.take));
  if (lost.length > 0)
    return await fromWholeText(
      o,
      `no usable segment holds rows ${lost.map((h) => `[${h.skip}, ${h.skip + h.take})`).join(', ')}`,
    );
  const sessions = [o.duck, ...o.rangeDucks];
  const ranges = rangesOf(o, gaps, sessions.length);
  const whole = ready.length === 0 && ranges.length === 1 && holes.length === 0;
  const rangePaths = whole ? [] : ranges.map((_, i) => `${o.to}.range-${i}`);
  const scratch: string[] = [];
  try {
    // Outside the strict attempt: failing to copy members is not a value that does not fit.
    const sources = await Promise.all(ranges.map((r, i) => rangeSource(o, r, i, scratch)));
    try {
      if (whole) {
        await o.duck.run(copyOf(o, 'strict', sources[0]!, o.to));
        return {};
      }
      await convertRanges(o, sessions, sources, rangePaths);
    } catch (err: unknown) {
      if (err instanceof OutputError) throw err; // not a value that does not fit
      // A value did not fit its column (or the input is malformed): redo the file keeping such values in _extra.
      const reason = coerceError(err).message.split('\n')[0] ?? 'conversion failed';
      if (holes.length > 0) return await fromWholeText(o, `a value does not fit its column (${reason})`, err);
      o.logger.warn(
        { dataset: o.dataset, file: o.to, reason },
        'strict conversion failed; converting tolerantly',
      );
      await o.duck.run(copyOf(o, 'tolerant', source, o.to));
      return { tolerantReason: reason };
    }
    const pieces = [...ready, ...ranges.map((r, i) => ({ ...r, path: rangePaths[i]! }))].sort(
      (x, y) => x.skip - y.skip,
    );
    return await joinPieces(o, pieces, ranges.length);
  } finally {
    for (const p of [...rangePaths, ...scratch]) await rm(p, { force: true });
  }
}

/** The COPY converting `from` into `to` in `mode`. */
function copyOf(o: ConvertFileOptions, mode: ConvertMode, from: ConvertSource, to: string): string {
  return copyStatement({ ...o.input, mode }, from, to, o.compression, o.rowGroupRows);
}

/** The ranges to convert: one gap (no segments, or segments at one end) cut over the sessions; several go one each. */
function rangesOf(
  o: ConvertFileOptions,
  gaps: { skip: number; take: number }[],
  sessions: number,
): { skip: number; take: number }[] {
  const only = gaps.length === 1 ? gaps[0]! : undefined;
  return only === undefined
    ? gaps
    : rowRanges(only.skip, only.take, sessions, o.rowGroupRows, o.members.length > 0 ? 0 : SKIP_COST);
}

/**
 * The staged rows of range `i`: a range that starts or ends inside the file reads only the members
 * holding it, copied into a scratch file (pushed onto `scratch` for removal).
 */
async function rangeSource(
  o: ConvertFileOptions,
  r: { skip: number; take: number },
  i: number,
  scratch: string[],
): Promise<ConvertSource> {
  const { source } = o;
  const cut = memberCut(o.members, r, source.total);
  if (cut === undefined) return { ...source, ...r };
  const file = o.scratch(i);
  await mkdir(dirname(file), { recursive: true });
  scratch.push(file);
  await copyRanges(
    [{ path: source.file, start: cut.offset, ...(cut.end === undefined ? {} : { end: cut.end }) }],
    file,
  );
  return { ...source, file, skip: r.skip - cut.row, take: r.take, total: cut.rows };
}

/** Strict conversion of every range into its path; each session takes the next range until none is left. */
async function convertRanges(
  o: ConvertFileOptions,
  sessions: readonly DuckSession[],
  sources: readonly ConvertSource[],
  paths: readonly string[],
): Promise<void> {
  let next = 0;
  const runs = await Promise.allSettled(
    sessions.map(async (session) => {
      for (let i = next++; i < sources.length; i = next++)
        await session.run(copyOf(o, 'strict', sources[i]!, paths[i]!));
    }),
  );
  const failed = runs.find((r) => r.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
}

/** Concatenates the converted pieces into `o.to`; segments that do not join are redone from the staged rows. */
async function joinPieces(
  o: ConvertFileOptions,
  pieces: readonly Piece[],
  ranges: number,
): Promise<{ tolerantReason?: string }> {
  const ready = o.ready ?? [];
  try {
    await concatParquet(
      pieces.map((p) => p.path),
      o.to,
    );
  } catch (err: unknown) {
    if (ready.length === 0) throw err;
    if ((o.holes ?? []).length > 0) return await fromWholeText(o, 'its segments do not join', err);
    // Segments are an optimisation: one that does not join (another writer's file) is redone here.
    o.logger.warn(
      { dataset: o.dataset, file: o.to, reason: coerceError(err).message },
      'segments converted while staging do not join; converting the file again',
    );
    return await convertFile({ ...o, ready: [] });
  }
  o.logger.debug(
    { dataset: o.dataset, file: o.to, rows: o.source.take, ranges, segments: ready.length },
    'file converted in row ranges',
  );
  return {};
}

/**
 * Converts a file with holes from every row, the holes read from their parts' plain files
 * (`wholeText`): strict, then tolerant when a value does not fit, as a part staged whole is.
 */
async function fromWholeText(
  o: ConvertFileOptions,
  why: string,
  cause?: unknown,
): Promise<{ tolerantReason?: string }> {
  const path = `${o.to}.whole.ndjson.gz`;
  try {
    if (o.wholeText === undefined || !(await o.wholeText(path)))
      throw outsideGzip(o, why, 'are not all in their plain files any more', cause);
    o.logger.warn(
      { dataset: o.dataset, file: o.to, reason: why },
      "converting the file from every staged row, the segments' rows from their plain files",
    );
    try {
      return await convertFile({
        ...o,
        source: { ...o.source, file: path },
        members: [],
        ready: [],
        holes: [],
        wholeText: undefined,
      });
    } catch (err: unknown) {
      if (err instanceof OutputError) throw err;
      throw outsideGzip(o, why, `do not convert from their plain files (${coerceError(err).message})`, err);
    }
  } finally {
    await rm(path, { force: true });
  }
}

/**
 * An output file cannot be converted from its staged rows: some are only in segments, and their
 * plain files are gone or do not convert. The publisher removes such parts' staged files, so a
 * retried snapshot fetches them again, staged whole.
 */
export class RowsOutsideGzipError extends OutputError {}

function outsideGzip(o: ConvertFileOptions, why: string, plain: string, cause: unknown): OutputError {
  return new RowsOutsideGzipError(
    'OUTPUT_FAILED',
    `${o.to}: ${why}, and rows ${(o.holes ?? []).map((h) => `[${h.skip}, ${h.skip + h.take})`).join(', ')} of ${o.source.file} were staged outside its gzip and ${plain}, so it cannot be converted from the staged rows`,
    { cause },
  );
}

/** The row ranges of the file that `ready` does not hold, or undefined when `ready` is not a set of disjoint ranges inside it. */
function gapsBetween(
  ready: readonly { skip: number; take: number }[],
  source: ConvertSource,
): { skip: number; take: number }[] | undefined {
  const end = source.skip + source.take;
  const gaps: { skip: number; take: number }[] = [];
  let at = source.skip;
  for (const r of ready) {
    if (r.skip < at || r.take <= 0 || r.skip + r.take > end) return undefined;
    if (r.skip > at) gaps.push({ skip: at, take: r.skip - at });
    at = r.skip + r.take;
  }
  if (at < end) gaps.push({ skip: at, take: end - at });
  return gaps;
}
