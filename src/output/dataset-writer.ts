/**
 * Builds the output files of one dataset of a snapshot from its staged parts: typed Parquet (zstd,
 * row groups of a set size) and/or gzip NDJSON with the same rows, sized by file-plan.ts, in a
 * build folder that publish.ts renames into the Hive layout when every file is complete.
 */
import { mkdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../log.js';
import { coerceError, OutputError } from '../errors.js';
import type { DatasetName, OutputFormat } from '../types.js';
import {
  convertSelect,
  maxLineBytesFor,
  ndjsonSelect,
  type ConvertInput,
  type ConvertMode,
  type ConvertSource,
} from './convert-sql.js';
import { sqlString, type DuckSession } from './duckdb.js';
import { nextSlice, type Cursor, type PlannedPart } from './file-plan.js';
import { concatFiles, copyRanges, fsyncFile, hashFile } from './fs-util.js';
import { dataFileName } from './paths.js';
import { concatParquet } from './parquet-concat.js';
import { hasPeriodEnd, type DatasetSchema } from '../datasets/index.js';

export interface DatasetWriteOptions {
  dataset: DatasetName;
  /** Written into `_snapshot_id` of every row. */
  snapshotId: string;
  schema: DatasetSchema;
  kinds: ReadonlyMap<string, number>;
  extraFields: readonly string[];
  parts: readonly PlannedPart[];
  formats: readonly OutputFormat[];
  /** Folder the files are written to (renamed into the layout later). */
  dir: string;
  /** Folder for transient files (the staged parts of one output file, concatenated). */
  scratchDir: string;
  targetFileBytes: number;
  rowGroupRows: number;
  compression: 'zstd' | 'snappy';
  duck: DuckSession;
  /**
   * More sessions, each converting a row range of a big output file beside `duck` on its own
   * thread; the ranges' files are then concatenated (parquet-concat.ts). DuckDB reads a gzip file
   * on one thread whatever its `threads`, so this is what spreads one file over cores. Each adds
   * a row group's worth of memory. @defaultValue none: one conversion per file
   */
  rangeDucks?: readonly DuckSession[];
  logger: Logger;
}

export interface BuiltFile {
  /** File name inside the partition folder. */
  name: string;
  format: OutputFormat;
  rows: number;
  bytes: number;
  sha256: string;
  min_period_end?: string | null;
  max_period_end?: string | null;
}

export interface DatasetWriteResult {
  files: BuiltFile[];
  rows: number;
  /** Files that needed the tolerant conversion (a value did not fit its column; kept in `_extra`). */
  tolerantFiles: { file: string; reason: string }[];
}

/** First guesses of output bytes per staged byte, corrected after every file. */
const INITIAL_RATIO: Record<OutputFormat, number> = { parquet: 0.6, ndjson: 0.9 };

export async function writeDatasetFiles(o: DatasetWriteOptions): Promise<DatasetWriteResult> {
  await rm(o.dir, { recursive: true, force: true });
  await mkdir(o.dir, { recursive: true });
  const sizing: OutputFormat = o.formats.includes('parquet') ? 'parquet' : 'ndjson';
  const withDates = hasPeriodEnd(o.schema);
  const files: BuiltFile[] = [];
  const tolerantFiles: DatasetWriteResult['tolerantFiles'] = [];
  let ratio = INITIAL_RATIO[sizing];
  let stagedSoFar = 0;
  let outputSoFar = 0;
  let cursor: Cursor = { part: 0, row: 0 };
  const lineChars = new Map(o.parts.map((p) => [p.path, p.maxLineChars]));
  const memberStarts = new Map(o.parts.map((p) => [p.path, p.members ?? []]));
  let rows = 0;

  for (let index = 0; ; index++) {
    const slice = nextSlice(o.parts, cursor, o.targetFileBytes / ratio);
    if (slice === undefined) break;
    cursor = slice.next;
    const parquetPath = join(o.dir, dataFileName(index, 'parquet'));
    // DuckDB's CSV reader keeps every buffer of a compressed file when one scan reads several files
    // (up to a whole part, uncompressed, in memory): several parts are read as one concatenated gzip.
    const input =
      slice.files.length === 1 ? slice.files[0]! : join(o.scratchDir, `concat-${index}.ndjson.gz`);
    if (input !== slice.files[0]) {
      await mkdir(o.scratchDir, { recursive: true });
      await concatFiles(slice.files, input);
    }
    const source: ConvertSource = {
      file: input,
      skip: slice.skip,
      take: slice.take,
      total: slice.total,
      maxLineBytes: maxLineBytesOf(lineChars, slice.files),
    };
    const copy = (mode: ConvertMode, from: ConvertSource, to: string): string => {
      const sel: ConvertInput = {
        schema: o.schema,
        kinds: o.kinds,
        extraFields: o.extraFields,
        mode,
        snapshotId: o.snapshotId,
      };
      return `COPY (${convertSelect(sel, from)}) TO ${sqlString(to)} (FORMAT parquet, COMPRESSION ${o.compression}, ROW_GROUP_SIZE ${o.rowGroupRows})`;
    };
    const sessions = [o.duck, ...(o.rangeDucks ?? [])];
    // One staged part with recorded gzip members: a range reads from the member it starts in.
    const members = slice.files.length === 1 ? (memberStarts.get(input) ?? []) : [];
    const ranges = rowRanges(
      slice.skip,
      slice.take,
      sessions.length,
      o.rowGroupRows,
      members.length > 0 ? 0 : SKIP_COST,
    );
    const rangePaths = ranges.length > 1 ? ranges.map((_, i) => `${parquetPath}.range-${i}`) : [];
    const scratch: string[] = [];
    const sourceOf = async (r: { skip: number; take: number }, i: number): Promise<ConvertSource> => {
      const cut = memberCut(members, r, slice.total);
      if (cut === undefined) return { ...source, ...r };
      const file = join(o.scratchDir, `range-${index}-${i}.ndjson.gz`);
      await mkdir(o.scratchDir, { recursive: true });
      scratch.push(file);
      await copyRanges(
        [{ path: input, start: cut.offset, ...(cut.end === undefined ? {} : { end: cut.end }) }],
        file,
      );
      return { ...source, file, skip: r.skip - cut.row, take: r.take, total: cut.rows };
    };
    try {
      try {
        const sources = await Promise.all(ranges.map(sourceOf));
        if (ranges.length === 1) await o.duck.run(copy('strict', sources[0]!, parquetPath));
        else {
          const runs = await Promise.allSettled(
            ranges.map((_, i) => sessions[i]!.run(copy('strict', sources[i]!, rangePaths[i]!))),
          );
          const failed = runs.find((r) => r.status === 'rejected');
          if (failed !== undefined) throw failed.reason;
          await concatParquet(rangePaths, parquetPath);
          o.logger.debug(
            { dataset: o.dataset, file: parquetPath, rows: slice.take, ranges: ranges.length },
            'file converted in row ranges',
          );
        }
      } catch (err: unknown) {
        if (err instanceof OutputError) throw err; // concatenating failed: not a value that does not fit
        // A value did not fit its column (or the input is malformed): redo the file keeping such values in _extra.
        const reason = coerceError(err).message.split('\n')[0] ?? 'conversion failed';
        o.logger.warn(
          { dataset: o.dataset, file: parquetPath, reason },
          'strict conversion failed; converting tolerantly',
        );
        try {
          await o.duck.run(copy('tolerant', source, parquetPath));
        } catch (err2: unknown) {
          throw new OutputError(
            'OUTPUT_FAILED',
            `${o.dataset}: converting staged rows (${slice.files.join(', ')}) failed: ${coerceError(err2).message}`,
            { cause: err2 },
          );
        }
        tolerantFiles.push({ file: dataFileName(index, sizing), reason });
      }
    } finally {
      if (input !== slice.files[0]) await rm(input, { force: true });
      for (const p of [...rangePaths, ...scratch]) await rm(p, { force: true });
    }

    const stats = await o.duck.all(
      withDates
        ? `SELECT count(*)::BIGINT AS n, CAST(min(period_end) AS VARCHAR) AS lo, CAST(max(period_end) AS VARCHAR) AS hi FROM read_parquet(${sqlString(parquetPath)}, hive_partitioning = false)`
        : `SELECT count(*)::BIGINT AS n FROM read_parquet(${sqlString(parquetPath)}, hive_partitioning = false)`,
    );
    const n = Number(stats[0]?.n ?? -1);
    if (n !== slice.take) {
      throw new OutputError(
        'OUTPUT_FAILED',
        `${o.dataset}: ${dataFileName(index, 'parquet')} holds ${n} rows, expected ${slice.take} from ${slice.files.join(', ')} (a staged file is shorter than its pointer says)`,
      );
    }
    const dates = withDates
      ? {
          min_period_end: (stats[0]?.lo as string | null) ?? null,
          max_period_end: (stats[0]?.hi as string | null) ?? null,
        }
      : {};
    rows += n;

    if (o.formats.includes('ndjson')) {
      const ndjsonPath = join(o.dir, dataFileName(index, 'ndjson'));
      await o.duck.run(
        `COPY (${ndjsonSelect(o.schema, `read_parquet(${sqlString(parquetPath)})`)}) TO ${sqlString(ndjsonPath)} (FORMAT json, COMPRESSION gzip)`,
      );
      files.push(await finishFile(ndjsonPath, dataFileName(index, 'ndjson'), 'ndjson', n, dates));
    }
    if (o.formats.includes('parquet')) {
      files.push(await finishFile(parquetPath, dataFileName(index, 'parquet'), 'parquet', n, dates));
    } else {
      await rm(parquetPath, { force: true });
    }

    const sized = files.filter((f) => f.format === sizing);
    outputSoFar += sized[sized.length - 1]?.bytes ?? 0;
    stagedSoFar += slice.stagedBytes;
    if (stagedSoFar > 0 && outputSoFar > 0) ratio = outputSoFar / stagedSoFar;
  }
  // Files in layout order: part-00000.parquet, part-00000.ndjson.gz, part-00001…
  files.sort((a, b) => (a.name < b.name ? -1 : 1));
  return { files, rows, tolerantFiles };
}

/** Fewest row groups per range: below this, a second conversion costs more than it saves. */
const MIN_RANGE_ROW_GROUPS = 4;
/** DuckDB fills row groups in whole vectors: a row group holds `rowGroupRows` rounded up to these. */
const DUCKDB_VECTOR_ROWS = 2048;
/**
 * What skipping a row costs against converting it: decompressing and splitting its line, ~1.8 of
 * ~7.6 s per million facts rows (docs/decisions.md). A range that starts later skips more rows,
 * so it gets fewer, and the ranges end together.
 */
const SKIP_COST = 0.25;

/**
 * Splits `take` rows from `skip` into at most `ways` ranges of whole row groups (the last takes the
 * rest), so the concatenated file has as many row groups as one conversion writes, of the same
 * size give or take the rows of a chunk. Each range reads the file from its start (a gzip file
 * cannot be entered midway) and skips the rows before it unparsed; sizes shrink range by range so
 * that skipping plus converting costs each about the same.
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
  // Range i costs SKIP_COST × (rows before it) + its rows; equal costs put boundary i at
  // groups × (1 − keep^i) / (1 − keep^n), keep = 1 − SKIP_COST.
  const keep = 1 - skipCost;
  const ranges: { skip: number; take: number }[] = [];
  let prev = 0;
  for (let i = 1; i <= n; i++) {
    const share = keep === 1 ? i / n : (1 - keep ** i) / (1 - keep ** n);
    const ideal = Math.round(groups * share);
    const at = i === n ? groups : Math.min(groups - (n - i), Math.max(prev + 1, ideal));
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
  members: readonly { row: number; offset: number }[],
  r: { skip: number; take: number },
  total: number,
): { offset: number; end: number | undefined; row: number; rows: number } | undefined {
  let start = { row: 0, offset: 0 };
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

/** The line reader's limit for a slice: the longest line of its staged files (unknown → the safe default). */
function maxLineBytesOf(
  lineChars: ReadonlyMap<string, number | undefined>,
  files: readonly string[],
): number {
  let max = 0;
  for (const f of files) max = Math.max(max, maxLineBytesFor(lineChars.get(f)));
  return max;
}

async function finishFile(
  path: string,
  name: string,
  format: OutputFormat,
  rows: number,
  dates: Pick<BuiltFile, 'min_period_end' | 'max_period_end'>,
): Promise<BuiltFile> {
  await fsyncFile(path);
  const { sha256, bytes } = await hashFile(path);
  const size = (await stat(path)).size;
  if (size !== bytes) throw new OutputError('OUTPUT_FAILED', `${path} changed while it was hashed`);
  return { name, format, rows, bytes, sha256, ...dates };
}
