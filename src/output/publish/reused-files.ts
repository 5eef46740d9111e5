/**
 * The files of an incremental snapshot that come from the source snapshot's published files
 * (reuse-plan.ts): a file reused whole keeps its bytes (a hard link on a local root; a server-side
 * copy on a bucket, done by the upload), small ones are packed into new files by copying their
 * bytes, and the reused rows of any other file are rebuilt from its Parquet with DuckDB, cast to
 * this snapshot's columns. A source file that is missing or not
 * what its manifest says fails the publish with a retryable REUSE_SOURCE_CHANGED: nothing is ever
 * published short, and the retry decides those parts again (and fetches them).
 */
import { copyFile, link, mkdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { OutputError } from '../../errors.js';
import { hasPeriodEnd, type DatasetSchema } from '../../datasets/index.js';
import type { OutputFormat } from '../../types.js';
import { extensionOf, type FileCompany, type Manifest, type ManifestFile } from '../catalog/index.js';
import {
  concatCompatible,
  concatParquet,
  finishFile,
  parquetRowGroups,
  ndjsonSelect,
  parquetCodec,
  parquetFieldIds,
  sqlIdent,
  sqlString,
  type BuiltFile,
  type ConcatInput,
  type DuckSession,
  type ParquetCompression,
} from '../convert/index.js';
import { gzipAsOneMember } from '../storage/index.js';
import {
  checkedSources,
  sourceChanged,
  type KeptRange,
  type ReusePlan,
  type ReuseSource,
  type WholeFile,
} from './reuse-plan.js';

/** The gzip level of a packed NDJSON file: miniz's default, which DuckDB's COPY writes the others with. */
const NDJSON_GZIP_LEVEL = 6;

/** The source snapshot under the same local root: files are hard-linked where they lie. */
export function localReuseSource(root: string, manifest: Manifest): ReuseSource {
  const sizeChecked = async (f: ManifestFile): Promise<string> => {
    const path = join(root, ...f.path.split('/'));
    const size = await stat(path).then(
      (s) => s.size,
      () => null,
    );
    if (size === null) throw sourceChanged(manifest.snapshot_id, f.path, 'is missing');
    if (size !== f.bytes)
      throw sourceChanged(manifest.snapshot_id, f.path, `holds ${size} bytes, its manifest says ${f.bytes}`);
    return path;
  };
  return {
    manifest,
    async placeWhole(f, dst) {
      const path = await sizeChecked(f);
      await mkdir(dirname(dst), { recursive: true });
      // A link, never a reference: pruning the source leaves this snapshot's file whole.
      await link(path, dst).catch(() => copyFile(path, dst));
      return true;
    },
    readable: sizeChecked,
  };
}

/** One output file's worth of files (one per format), before it gets its name. */
export interface Unit {
  /** Row order: the first company's ticker and its first row in the source. */
  order: { ticker: string; row: number };
  /** Per format: the built file (its `name` is its path in the build folder). */
  files: (BuiltFile & { reused_from?: { snapshot_id: string; path: string } })[];
}

export interface RebuildOptions {
  schema: DatasetSchema;
  /** The source's columns of the dataset (any not among them are NULL). */
  sourceColumns: readonly string[];
  formats: readonly OutputFormat[];
  compression: ParquetCompression;
  rowGroupRows: number;
  duck: DuckSession;
  /**
   * The source's columns are this snapshot's, names and types alike: row groups wholly inside kept
   * rows are copied byte for byte (parquet-concat.ts) instead of re-encoded.
   */
  sameColumns: boolean;
}

/** A file reused whole: placed (or left to the upload's copy), with the source's bytes and sha256. */
export async function wholeUnit(
  source: ReuseSource,
  files: readonly ManifestFile[],
  companies: FileCompany[],
  dir: string,
  index: number,
): Promise<Unit> {
  const out: Unit['files'] = [];
  for (const f of files) {
    const name = `reused-${index}${extensionOf(f.format)}`;
    await source.placeWhole(f, join(dir, name));
    const { path: _p, dataset: _d, companies: _c, reused_from: _r, ...rest } = f;
    out.push({
      ...rest,
      name,
      companies,
      reused_from: { snapshot_id: source.manifest.snapshot_id, path: f.path },
    });
  }
  return { order: { ticker: companies[0]!.ticker, row: companies[0]!.first_row }, files: out };
}

/**
 * The packed groups of a plan as units: each group one new file per format (packedUnit), or, when
 * its Parquet footers cannot be concatenated, each of its files reused whole as before.
 */
export async function packedUnits(
  source: ReuseSource,
  plan: Pick<ReusePlan, 'whole' | 'packed'>,
  formats: readonly OutputFormat[],
  dir: string,
): Promise<Unit[]> {
  const units: Unit[] = [];
  let next = plan.whole.length; // wholeUnit indexes after the plan's own whole files
  for (const [i, group] of plan.packed.entries()) {
    const unit = await packedUnit(source, group, formats, dir, i);
    if (unit !== undefined) units.push(unit);
    else for (const w of group) units.push(await wholeUnit(source, w.files, w.companies, dir, next++));
  }
  return units;
}

/**
 * Packs small source files reused whole into one new file per format, copying their bytes: the
 * Parquet files' row groups whole with parquet-concat (no re-encoding), the NDJSON.gz files' text
 * as one gzip member (fs-util.ts `gzipAsOneMember`: DuckDB can drop a later member; each of ours
 * ends its last line). Rows, dates and
 * companies come from the source's manifest entries. Undefined when the Parquet footers differ
 * (another writer, other metadata): nothing is written then, and the caller links them whole.
 */
export async function packedUnit(
  source: ReuseSource,
  group: readonly WholeFile[],
  formats: readonly OutputFormat[],
  dir: string,
  index: number,
): Promise<Unit | undefined> {
  await mkdir(dir, { recursive: true });
  const sources = checkedSources(source);
  return sources.run(async () => {
    const paths: string[][] = [];
    for (const w of group) {
      const local: string[] = [];
      for (const f of w.files) local.push(await sources.path(f));
      paths.push(local);
    }
    return packPaths(group, paths, formats, dir, index);
  });
}

/** packedUnit once its sources are local. */
async function packPaths(
  group: readonly WholeFile[],
  paths: readonly string[][],
  formats: readonly OutputFormat[],
  dir: string,
  index: number,
): Promise<Unit | undefined> {
  const at = formats.indexOf('parquet');
  if (at >= 0 && !(await concatCompatible(paths.map((p) => p[at]!)))) return undefined;
  const companies: FileCompany[] = [];
  let rows = 0;
  for (const w of group) {
    const base = w.companies[0]!.first_row;
    for (const c of w.companies) companies.push({ ...c, first_row: rows + c.first_row - base });
    rows += w.files[0]!.rows;
  }
  const dates = { ...packedDates(group.map((w) => w.files[0]!)), companies };
  const files: Unit['files'] = [];
  for (const [k, format] of formats.entries()) {
    const name = `packed-${index}${extensionOf(format)}`;
    const out = join(dir, name);
    const inputs = paths.map((p) => p[k]!);
    if (format === 'parquet') {
      const done = await concatParquet(inputs, out);
      if (done.rows !== rows)
        throw new OutputError('OUTPUT_FAILED', `${name} holds ${done.rows} rows, its sources ${rows}`);
    } else await gzipAsOneMember(inputs, out, NDJSON_GZIP_LEVEL);
    files.push(await finishFile(out, name, format, rows, dates));
  }
  return { order: { ticker: companies[0]!.ticker, row: group[0]!.companies[0]!.first_row }, files };
}

/** The period_end span of files put end to end (absent when a source entry does not record it). */
function packedDates(
  files: readonly ManifestFile[],
): Pick<ManifestFile, 'min_period_end' | 'max_period_end'> {
  if (files.some((f) => f.min_period_end === undefined || f.max_period_end === undefined)) return {};
  const lo = files.flatMap((f) => (f.min_period_end === null ? [] : [f.min_period_end!])).sort();
  const hi = files.flatMap((f) => (f.max_period_end === null ? [] : [f.max_period_end!])).sort();
  return { min_period_end: lo[0] ?? null, max_period_end: hi[hi.length - 1] ?? null };
}

/**
 * Rebuilds the kept rows of source Parquet files into one new file (and its NDJSON). Row groups
 * wholly inside kept rows are copied byte for byte when the columns are unchanged; the rest (a
 * row group straddling a kept/dropped boundary, or every row when the columns changed) DuckDB
 * reads by row number (`file_row_number`) and casts to this snapshot's columns. So a file losing
 * one company costs that company's neighbours in at most two row groups, not the whole file.
 */
export async function rebuiltUnit(
  source: ReuseSource,
  group: readonly KeptRange[],
  o: RebuildOptions,
  dir: string,
  index: number,
): Promise<Unit> {
  await mkdir(dir, { recursive: true });
  // Each source file fetched and hashed once, however many kept ranges (or attempts) read it; the
  // hashes run beside the copy and the re-encoding, and are all awaited before the unit is returned.
  const sources = checkedSources(source);
  return sources.run(() => rebuild(sources.path, group, o, dir, index));
}

/** rebuiltUnit with its source files at hand (`readable`). */
async function rebuild(
  readable: (f: ManifestFile) => Promise<string>,
  group: readonly KeptRange[],
  o: RebuildOptions,
  dir: string,
  index: number,
): Promise<Unit> {
  let { inputs, encoded } = await keptPieces(readable, group, o, dir, index, o.sameColumns);
  // Copied row groups keep their writer's footer; one that differs from this DuckDB's (a file
  // carried over from an older version) cannot join the re-encoded pieces: re-encode it all.
  const sources = inputs.map((i) => (typeof i === 'string' ? i : i.path));
  if (encoded.length < inputs.length && !(await concatCompatible(sources))) {
    for (const piece of encoded) await rm(piece, { force: true });
    ({ inputs, encoded } = await keptPieces(readable, group, o, dir, index, false));
  }
  const parquetPath = join(dir, `rebuilt-${index}.parquet`);
  const only = inputs.length === 1 ? inputs[0] : undefined;
  if (typeof only === 'string') await rename(only, parquetPath);
  else {
    await concatParquet(inputs, parquetPath);
    for (const piece of encoded) await rm(piece, { force: true });
  }
  const companies: FileCompany[] = [];
  let at = 0;
  for (const k of group)
    for (const c of k.companies) {
      companies.push({ ticker: c.ticker, first_row: at, rows: c.rows });
      at += c.rows;
    }
  const withDates = hasPeriodEnd(o.schema);
  const stats = await writtenStats(o.duck, parquetPath, withDates);
  const n = stats.rows;
  if (n !== at)
    throw new OutputError('OUTPUT_FAILED', `rebuilt-${index}.parquet holds ${n} rows, expected ${at}`);
  const dates = {
    ...(withDates ? { min_period_end: stats.lo ?? null, max_period_end: stats.hi ?? null } : {}),
    companies,
  };
  const files: Unit['files'] = [];
  if (o.formats.includes('ndjson')) {
    const ndjsonPath = join(dir, `rebuilt-${index}.ndjson.gz`);
    await o.duck.run(
      `COPY (${ndjsonSelect(o.schema, `read_parquet(${sqlString(parquetPath)})`)}) TO ${sqlString(ndjsonPath)} (FORMAT json, COMPRESSION gzip)`,
    );
    files.push(await finishFile(ndjsonPath, `rebuilt-${index}.ndjson.gz`, 'ndjson', n, dates));
  }
  if (o.formats.includes('parquet'))
    files.push(await finishFile(parquetPath, `rebuilt-${index}.parquet`, 'parquet', n, dates));
  else await rm(parquetPath, { force: true });
  return { order: { ticker: companies[0]!.ticker, row: group[0]!.first_row }, files };
}

/**
 * The rows and the period_end span of a Parquet file this publish wrote, from its footer: the row
 * groups' counts and their period_end statistics (DuckDB writes them; a row group of NULLs only has
 * none, and says so by its null count). Reading the footer instead of scanning the file again
 * keeps the rebuild's cost off the file's size; a row group without statistics falls back to a scan.
 */
async function writtenStats(
  duck: DuckSession,
  path: string,
  withDates: boolean,
): Promise<{ rows: number; lo?: string | null; hi?: string | null }> {
  const file = sqlString(path);
  if (!withDates) {
    const [r] = await duck.all(`SELECT num_rows::BIGINT AS n FROM parquet_file_metadata(${file})`);
    return { rows: Number(r?.n ?? -1) };
  }
  const [meta] = await duck.all(
    `SELECT CAST(min(stats_min_value::DATE) AS VARCHAR) AS lo, CAST(max(stats_max_value::DATE) AS VARCHAR) AS hi, count(*) FILTER (WHERE stats_min_value IS NULL AND stats_null_count IS DISTINCT FROM row_group_num_rows)::BIGINT AS unknown, count(*)::BIGINT AS groups FROM parquet_metadata(${file}) WHERE path_in_schema = 'period_end'`,
  );
  const [total] = await duck.all(`SELECT num_rows::BIGINT AS n FROM parquet_file_metadata(${file})`);
  const rows = Number(total?.n ?? -1);
  if (Number(meta?.unknown ?? 1) === 0 && (Number(meta?.groups ?? 0) > 0 || rows === 0))
    return { rows, lo: (meta?.lo as string | null) ?? null, hi: (meta?.hi as string | null) ?? null };
  const [scan] = await duck.all(
    `SELECT count(*)::BIGINT AS n, CAST(min(period_end) AS VARCHAR) AS lo, CAST(max(period_end) AS VARCHAR) AS hi FROM read_parquet(${file}, hive_partitioning = false)`,
  );
  return {
    rows: Number(scan?.n ?? -1),
    lo: (scan?.lo as string | null) ?? null,
    hi: (scan?.hi as string | null) ?? null,
  };
}

/**
 * The pieces of a rebuilt file, in row order: row groups of a source file to copy (`copy`: its
 * columns are this snapshot's) and the files DuckDB re-encoded (`encoded`, to remove after).
 */
async function keptPieces(
  readable: (f: ManifestFile) => Promise<string>,
  group: readonly KeptRange[],
  o: RebuildOptions,
  dir: string,
  index: number,
  copy: boolean,
): Promise<{ inputs: ConcatInput[]; encoded: string[] }> {
  const inputs: ConcatInput[] = [];
  const encoded: string[] = [];
  const encode = async (path: string, first: number, rows: number): Promise<void> => {
    const piece = join(dir, `rebuilt-${index}-${encoded.length}.parquet`);
    await encodeRows(o, path, first, rows, piece);
    encoded.push(piece);
    inputs.push(piece);
  };
  for (const k of group) {
    const path = await readable(k.file);
    if (!copy) {
      await encode(path, k.first_row, k.rows);
      continue;
    }
    for (const span of rowGroupSpans(await parquetRowGroups(path), k.first_row, k.rows)) {
      if (span.whole === undefined) await encode(path, span.first, span.rows);
      else {
        const last = inputs[inputs.length - 1];
        if (typeof last === 'object' && last.path === path) last.rowGroups = [...last.rowGroups, span.whole];
        else inputs.push({ path, rowGroups: [span.whole] });
      }
    }
  }
  return { inputs, encoded };
}

/**
 * Writes rows [first, first + rows) of a source Parquet file, cast to this snapshot's columns. One
 * filtered scan keeps the rows in file order and streams (an ORDER BY would hold them all).
 */
async function encodeRows(o: RebuildOptions, path: string, first: number, rows: number, out: string) {
  const have = new Set(o.sourceColumns);
  const cols = o.schema.columns
    .map((c) =>
      have.has(c.name)
        ? `CAST(${sqlIdent(c.name)} AS ${c.type}) AS ${sqlIdent(c.name)}`
        : `CAST(NULL AS ${c.type}) AS ${sqlIdent(c.name)}`,
    )
    .join(', ');
  await o.duck.run(
    `COPY (SELECT ${cols} FROM read_parquet(${sqlString(path)}, file_row_number = true, hive_partitioning = false) WHERE file_row_number >= ${first} AND file_row_number < ${first + rows}) TO ${sqlString(out)} (FORMAT parquet, ${parquetCodec(o.compression)}, ROW_GROUP_SIZE ${o.rowGroupRows}, ${parquetFieldIds(o.schema.columns)})`,
  );
}

/** A piece of kept rows: a whole row group to copy (its index), or rows to re-encode. */
export interface RowGroupSpan {
  first: number;
  rows: number;
  whole?: number;
}

/**
 * Cuts rows [first, first + rows) of a file whose row groups hold `sizes` rows along its row
 * groups: each row group inside the range is `whole`; a row group it only partly covers (at most
 * the first and the last) gives the rows it covers.
 */
export function rowGroupSpans(sizes: readonly number[], first: number, rows: number): RowGroupSpan[] {
  const out: RowGroupSpan[] = [];
  const end = first + rows;
  let start = 0;
  for (const [g, size] of sizes.entries()) {
    const from = Math.max(start, first);
    const to = Math.min(start + size, end);
    if (from < to)
      out.push(
        from === start && to === start + size
          ? { first: from, rows: size, whole: g }
          : { first: from, rows: to - from },
      );
    start += size;
  }
  if (start < end)
    throw new OutputError('OUTPUT_FAILED', `rows up to ${end} were kept, but the file holds only ${start}`);
  return out;
}
