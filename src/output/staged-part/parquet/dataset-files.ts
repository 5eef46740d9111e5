/**
 * Builds the output files of one dataset of a snapshot from its staged parts: typed Parquet (zstd,
 * row groups of a set size) and/or gzip NDJSON with the same rows, sized by file-plan.ts, in a
 * build folder that publish.ts renames into the Hive layout when every file is complete. Each
 * file is converted by convert-file.ts.
 */
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../../../log.js';
import { coerceError, OutputError } from '../../../errors.js';
import type { DatasetName, OutputFormat } from '../../../types.js';
import {
  finishFile,
  maxLineBytesFor,
  ndjsonSelect,
  sqlString,
  type BuiltFile,
  type ConvertInput,
  type ConvertSource,
  type DuckSession,
  type ParquetCompression,
} from '../../convert/index.js';
import { convertFile } from './convert-file.js';
import { writeWholeText } from './all-rows-text.js';
import { nextSlice, sliceCompanies, type Cursor, type FileSlice, type PlannedPart } from './file-plan.js';
import { concatFiles, gzipAsOneMember } from '../../storage/index.js';
import { dataFileName } from '../../catalog/index.js';
import { conversionSignature } from './convert-piece.js';
import { joinedMembers, usablePieces, type PieceFile } from '../row-cuts.js';
import { hasPeriodEnd, type DatasetSchema } from '../../../datasets/index.js';

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
  compression: ParquetCompression;
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

export interface DatasetWriteResult {
  files: BuiltFile[];
  rows: number;
  /** Files that needed the tolerant conversion (a value did not fit its column; kept in `_extra`). */
  tolerantFiles: { file: string; reason: string }[];
  /** Segments converted while staging that went into the files (convert-piece.ts). */
  piecesUsed: number;
}

/** First guesses of output bytes per staged byte, corrected after every file. */
const INITIAL_RATIO: Record<OutputFormat, number> = { parquet: 0.6, ndjson: 0.9 };

export async function writeDatasetFiles(o: DatasetWriteOptions): Promise<DatasetWriteResult> {
  await rm(o.dir, { recursive: true, force: true });
  await mkdir(o.dir, { recursive: true });
  const plan = planDataset(o);
  const files: BuiltFile[] = [];
  const tolerantFiles: DatasetWriteResult['tolerantFiles'] = [];
  let ratio = INITIAL_RATIO[plan.sizing];
  let stagedSoFar = 0;
  let outputSoFar = 0;
  let cursor: Cursor = { part: 0, row: 0 };
  let piecesUsed = 0;
  let rows = 0;

  for (let index = 0; ; index++) {
    const slice = nextSlice(o.parts, cursor, o.targetFileBytes / ratio);
    if (slice === undefined) break;
    cursor = slice.next;
    const built = await writeSliceFiles(o, plan, index, slice);
    piecesUsed += built.piecesUsed;
    if (built.tolerantReason !== undefined)
      tolerantFiles.push({ file: dataFileName(index, plan.sizing), reason: built.tolerantReason });
    rows += built.rows;
    files.push(...built.files);

    const sized = files.filter((f) => f.format === plan.sizing);
    outputSoFar += sized[sized.length - 1]?.bytes ?? 0;
    stagedSoFar += slice.stagedBytes;
    if (stagedSoFar > 0 && outputSoFar > 0) ratio = outputSoFar / stagedSoFar;
  }
  // Files in layout order: part-00000.parquet, part-00000.ndjson.gz, part-00001…
  files.sort((a, b) => (a.name < b.name ? -1 : 1));
  if (plan.signature !== undefined)
    o.logger.info(
      {
        dataset: o.dataset,
        piecesUsed,
        piecesFound: o.parts.reduce((n, p) => n + (p.segments?.length ?? 0), 0),
      },
      'segments converted while staging',
    );
  return { files, rows, tolerantFiles, piecesUsed };
}

/** What every output file of one dataset shares, worked out once from the options. */
interface DatasetPlan {
  /** The format whose bytes size the next file (Parquet when written). */
  sizing: OutputFormat;
  withDates: boolean;
  lineChars: ReadonlyMap<string, number | undefined>;
  byPath: ReadonlyMap<string, PlannedPart>;
  convertInput: Omit<ConvertInput, 'mode'>;
  /** Signature of the statement the files are converted with; undefined when no part has segments. */
  signature: string | undefined;
}

function planDataset(o: DatasetWriteOptions): DatasetPlan {
  const convertInput = {
    schema: o.schema,
    kinds: o.kinds,
    extraFields: o.extraFields,
    snapshotId: o.snapshotId,
  };
  return {
    sizing: o.formats.includes('parquet') ? 'parquet' : 'ndjson',
    withDates: hasPeriodEnd(o.schema),
    lineChars: new Map(o.parts.map((p) => [p.path, p.maxLineChars])),
    byPath: new Map(o.parts.map((p) => [p.path, p])),
    convertInput,
    // Only the segments made with the statement this dataset's files are converted with are used.
    signature: o.parts.some((p) => (p.segments ?? []).length > 0)
      ? conversionSignature(convertInput, o.compression, o.rowGroupRows)
      : undefined,
  };
}

/** The files of output file `index`, with its row count and what its conversion used. */
interface SliceFiles {
  files: BuiltFile[];
  rows: number;
  piecesUsed: number;
  tolerantReason?: string;
}

/** Converts one slice to Parquet, checks its rows, and finishes it in each format asked for. */
async function writeSliceFiles(
  o: DatasetWriteOptions,
  plan: DatasetPlan,
  index: number,
  slice: FileSlice,
): Promise<SliceFiles> {
  const parquetPath = join(o.dir, dataFileName(index, 'parquet'));
  let converted = await convertSlice(o, plan, index, slice, parquetPath, 'as-staged');
  let counted = await countSliceRows(o, plan, parquetPath);
  if (counted.n < slice.take) {
    // DuckDB's gzip reader can stop at a member boundary without an error (all-rows-text.ts).
    o.logger.warn(
      { dataset: o.dataset, file: dataFileName(index, 'parquet'), rows: counted.n, expected: slice.take },
      'DuckDB read fewer rows than the staged files hold (its gzip reader can stop at a gzip member); converting the file again from one gzip member',
    );
    converted = await convertSlice(o, plan, index, slice, parquetPath, 'one-member');
    counted = await countSliceRows(o, plan, parquetPath);
  }
  const { n, dates } = checkSliceRows(o, plan, index, slice, counted);
  const files: BuiltFile[] = [];
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
  return { files, rows: n, ...converted };
}

/**
 * How the slice's staged gzip files reach DuckDB: `as-staged` (one file, or the files
 * concatenated byte for byte: fast, gzip members intact), or `one-member` (decompressed and
 * compressed again as one gzip member, for a file DuckDB read short).
 */
type SliceInput = 'as-staged' | 'one-member';

/** Writes the slice's rows into `parquetPath`, reusing the segments converted while staging. */
async function convertSlice(
  o: DatasetWriteOptions,
  plan: DatasetPlan,
  index: number,
  slice: FileSlice,
  parquetPath: string,
  how: SliceInput,
): Promise<{ piecesUsed: number; tolerantReason?: string }> {
  const input = await sliceInput(o, index, slice, how);
  const source: ConvertSource = {
    file: input,
    skip: slice.skip,
    take: slice.take,
    total: slice.total,
    maxLineBytes: maxLineBytesOf(plan.lineChars, slice.files),
  };
  // Where the slice's parts start in its input, and where its gzip members start.
  const joined = joinedMembers(slice.files.map((f) => plan.byPath.get(f)!));
  const ready = readyPieceFiles(plan, slice, joined.firstRows);
  try {
    const converted = await convertFile({
      input: plan.convertInput,
      source,
      ready,
      members: how === 'as-staged' ? joined.members : [],
      holes: joined.holes,
      ...(joined.holes.length > 0
        ? {
            wholeText: (to: string) =>
              writeWholeText(
                slice.files.map((f) => ({ file: f, plain: plan.byPath.get(f)?.plainText })),
                to,
              ),
          }
        : {}),
      to: parquetPath,
      scratch: (i) => join(o.scratchDir, `range-${index}-${i}.ndjson.gz`),
      duck: o.duck,
      rangeDucks: o.rangeDucks ?? [],
      compression: o.compression,
      rowGroupRows: o.rowGroupRows,
      dataset: o.dataset,
      logger: o.logger,
    });
    return {
      piecesUsed: ready.length,
      ...(converted.tolerantReason !== undefined ? { tolerantReason: converted.tolerantReason } : {}),
    };
  } catch (err: unknown) {
    throw err instanceof OutputError
      ? err
      : new OutputError(
          'OUTPUT_FAILED',
          `${o.dataset}: converting staged rows (${slice.files.join(', ')}) failed: ${coerceError(err).message}`,
          { cause: err },
        );
  } finally {
    if (input !== slice.files[0]) await rm(input, { force: true });
  }
}

/** The gzip file DuckDB reads the slice's staged rows from (removed by the caller when not a staged file). */
async function sliceInput(
  o: DatasetWriteOptions,
  index: number,
  slice: FileSlice,
  how: SliceInput,
): Promise<string> {
  if (how === 'as-staged' && slice.files.length === 1) return slice.files[0]!;
  await mkdir(o.scratchDir, { recursive: true });
  const input = join(o.scratchDir, `${how}-${index}.ndjson.gz`);
  switch (how) {
    case 'as-staged':
      // DuckDB's CSV reader keeps every buffer of a compressed file when one scan reads several
      // files (up to a whole part, uncompressed, in memory): several parts are read as one gzip.
      await concatFiles(slice.files, input);
      return input;
    case 'one-member':
      // Level 1, as staging writes: this input lives only until DuckDB has read it.
      await gzipAsOneMember(slice.files, input, 1);
      return input;
    default: {
      const never: never = how;
      throw new Error(`unknown slice input ${String(never)}`);
    }
  }
}

/** The slice's segments converted while staging that its conversion can use, in input rows. */
function readyPieceFiles(plan: DatasetPlan, slice: FileSlice, firstRows: readonly number[]): PieceFile[] {
  if (plan.signature === undefined) return [];
  return usablePieces(
    slice.files.flatMap((f, i) =>
      (plan.byPath.get(f)?.segments ?? []).map((seg) => ({ ...seg, skip: seg.skip + firstRows[i]! })),
    ),
    plan.signature,
    slice.skip,
    slice.skip + slice.take,
  );
}

/** The converted file's row count, and its period_end range when the dataset has one. */
async function countSliceRows(
  o: DatasetWriteOptions,
  plan: DatasetPlan,
  parquetPath: string,
): Promise<{ n: number; lo: string | null; hi: string | null }> {
  const stats = await o.duck.all(
    plan.withDates
      ? `SELECT count(*)::BIGINT AS n, CAST(min(period_end) AS VARCHAR) AS lo, CAST(max(period_end) AS VARCHAR) AS hi FROM read_parquet(${sqlString(parquetPath)}, hive_partitioning = false)`
      : `SELECT count(*)::BIGINT AS n FROM read_parquet(${sqlString(parquetPath)}, hive_partitioning = false)`,
  );
  return {
    n: Number(stats[0]?.n ?? -1),
    lo: (stats[0]?.lo as string | null | undefined) ?? null,
    hi: (stats[0]?.hi as string | null | undefined) ?? null,
  };
}

/** Checks the converted file's rows against the slice (a short staged file fails here); its dates. */
function checkSliceRows(
  o: DatasetWriteOptions,
  plan: DatasetPlan,
  index: number,
  slice: FileSlice,
  { n, lo, hi }: { n: number; lo: string | null; hi: string | null },
): { n: number; dates: Pick<BuiltFile, 'min_period_end' | 'max_period_end' | 'companies'> } {
  if (n !== slice.take) {
    throw new OutputError(
      'OUTPUT_FAILED',
      `${o.dataset}: ${dataFileName(index, 'parquet')} holds ${n} rows, expected ${slice.take} from ${slice.files.join(', ')} (a staged file is shorter than its pointer says)`,
    );
  }
  const companies = sliceCompanies(o.parts, slice);
  const dates = {
    ...(plan.withDates ? { min_period_end: lo, max_period_end: hi } : {}),
    ...(companies.length > 0 ? { companies } : {}),
  };
  return { n, dates };
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
