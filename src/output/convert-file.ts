/**
 * Converts the staged rows of one output file into typed Parquet: in one DuckDB COPY, or in row
 * ranges on several sessions at once whose files are concatenated without re-encoding
 * (parquet-concat.ts). Strict first; when a value does not fit its column, the whole file again in
 * one tolerant COPY that keeps such values in `_extra`.
 */
import { mkdir, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Logger } from '../log.js';
import { coerceError, OutputError } from '../errors.js';
import type { DatasetName } from '../types.js';
import { convertSelect, type ConvertInput, type ConvertMode, type ConvertSource } from './convert-sql.js';
import { sqlString, type DuckSession } from './duckdb.js';
import { copyRanges } from './fs-util.js';
import { concatParquet } from './parquet-concat.js';
import type { MemberStart } from './sidecar.js';

export interface ConvertFileOptions {
  /** Schema, kinds and extra fields of the dataset (the mode is chosen here). */
  input: Omit<ConvertInput, 'mode'>;
  /** The staged rows of the file. */
  source: ConvertSource;
  /** Where `source.file`'s gzip members after the first start; empty when several parts or unknown. */
  members: readonly MemberStart[];
  /** The Parquet file to write. */
  to: string;
  /** Path of the scratch copy of range `i`'s members. */
  scratch: (i: number) => string;
  duck: DuckSession;
  /** More sessions: up to 1 + this many ranges convert at once. */
  rangeDucks: readonly DuckSession[];
  compression: 'zstd' | 'snappy';
  rowGroupRows: number;
  dataset: DatasetName;
  logger: Logger;
}

/** Writes `o.to`; `tolerantReason` says why a strict conversion failed, when it did. */
export async function convertFile(o: ConvertFileOptions): Promise<{ tolerantReason?: string }> {
  const copy = (mode: ConvertMode, from: ConvertSource, to: string): string =>
    `COPY (${convertSelect({ ...o.input, mode }, from)}) TO ${sqlString(to)} (FORMAT parquet, COMPRESSION ${o.compression}, ROW_GROUP_SIZE ${o.rowGroupRows})`;
  const { source } = o;
  const sessions = [o.duck, ...o.rangeDucks];
  const ranges = rowRanges(
    source.skip,
    source.take,
    sessions.length,
    o.rowGroupRows,
    o.members.length > 0 ? 0 : SKIP_COST,
  );
  const rangePaths = ranges.length > 1 ? ranges.map((_, i) => `${o.to}.range-${i}`) : [];
  const scratch: string[] = [];
  // A range that starts or ends inside the file reads only the members holding it.
  const sourceOf = async (r: { skip: number; take: number }, i: number): Promise<ConvertSource> => {
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
  };
  try {
    // Outside the strict attempt: failing to copy members is not a value that does not fit.
    const sources = await Promise.all(ranges.map(sourceOf));
    try {
      if (ranges.length === 1) {
        await o.duck.run(copy('strict', sources[0]!, o.to));
        return {};
      }
      const runs = await Promise.allSettled(
        ranges.map((_, i) => sessions[i]!.run(copy('strict', sources[i]!, rangePaths[i]!))),
      );
      const failed = runs.find((r) => r.status === 'rejected');
      if (failed !== undefined) throw failed.reason;
    } catch (err: unknown) {
      if (err instanceof OutputError) throw err; // not a value that does not fit
      // A value did not fit its column (or the input is malformed): redo the file keeping such values in _extra.
      const reason = coerceError(err).message.split('\n')[0] ?? 'conversion failed';
      o.logger.warn(
        { dataset: o.dataset, file: o.to, reason },
        'strict conversion failed; converting tolerantly',
      );
      await o.duck.run(copy('tolerant', source, o.to));
      return { tolerantReason: reason };
    }
    await concatParquet(rangePaths, o.to);
    o.logger.debug(
      { dataset: o.dataset, file: o.to, rows: source.take, ranges: ranges.length },
      'file converted in row ranges',
    );
    return {};
  } finally {
    for (const p of [...rangePaths, ...scratch]) await rm(p, { force: true });
  }
}

/** Fewest row groups per range: below this, a second conversion costs more than it saves. */
const MIN_RANGE_ROW_GROUPS = 4;
/** DuckDB fills row groups in whole vectors: a row group holds `rowGroupRows` rounded up to these. */
const DUCKDB_VECTOR_ROWS = 2048;
/**
 * What skipping a row costs against converting it: decompressing and splitting its line, ~1.8 of
 * ~7.6 s per million facts rows (docs/decisions.md). Without gzip members to start from, a range
 * that starts later skips more rows, so it gets fewer, and the ranges end together.
 */
const SKIP_COST = 0.25;

/**
 * Splits `take` rows from `skip` into at most `ways` ranges of whole row groups (the last takes the
 * rest), so the concatenated file has as many row groups as one conversion writes, of the same
 * size give or take the rows of a chunk. `skipCost` is what reading past a row costs a range
 * against converting it (0 when it starts at its own gzip member); sizes shrink range by range so
 * that each costs about the same.
 */
export function rowRanges(
  skip: number,
  take: number,
  ways: number,
  rowGroupRows: number,
  skipCost = SKIP_COST,
): { skip: number; take: number }[] {
  const unit = Math.ceil(rowGroupRows / DUCKDB_VECTOR_ROWS) * DUCKDB_VECTOR_ROWS;
  const groups = Math.ceil(take / unit);
  const n = Math.max(1, Math.min(ways, Math.floor(groups / MIN_RANGE_ROW_GROUPS)));
  // Range i costs skipCost × (rows before it) + its rows; equal costs put boundary i at
  // groups × (1 − keep^i) / (1 − keep^n), keep = 1 − skipCost (i / n when keep = 1).
  const keep = 1 - skipCost;
  const ranges: { skip: number; take: number }[] = [];
  let prev = 0;
  for (let i = 1; i <= n; i++) {
    const share = keep === 1 ? i / n : (1 - keep ** i) / (1 - keep ** n);
    const at = i === n ? groups : Math.min(groups - (n - i), Math.max(prev + 1, Math.round(groups * share)));
    const from = prev * unit;
    ranges.push({ skip: skip + from, take: Math.min(at * unit, take) - from });
    prev = at;
  }
  return ranges;
}

/**
 * The bytes of a staged file that hold a row range: from the gzip member the range starts in to
 * the first member past its end. `row` is the first row of those bytes, `rows` how many they hold.
 * Undefined when that is the whole file (no members recorded, or the range spans them all).
 */
export function memberCut(
  members: readonly MemberStart[],
  r: { skip: number; take: number },
  total: number,
): { offset: number; end: number | undefined; row: number; rows: number } | undefined {
  let start: MemberStart = { row: 0, offset: 0 };
  for (const m of members) {
    if (m.row > r.skip) break;
    start = m;
  }
  const after = members.find((m) => m.row >= r.skip + r.take);
  if (start.offset === 0 && after === undefined) return undefined;
  return {
    offset: start.offset,
    end: after?.offset,
    row: start.row,
    rows: (after?.row ?? total) - start.row,
  };
}
