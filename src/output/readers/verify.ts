/**
 * Verifies a published snapshot against its manifest by re-reading every file with DuckDB: the
 * file exists, its size and sha256 match, it reads, its columns and types are the manifest's, its
 * row count matches, and on every row value_num = value_scaled_int × 10^scale (exact, in text).
 * Also flags files in the snapshot's partition folders that the manifest does not list, and checks
 * the `changes` files (bytes, sha256, rows per change kind), and the snapshot's Iceberg commit
 * (its data files exactly the manifest's).
 */
import { companyRowProblems, reusedFileProblems, type SourceManifests } from './verify-reused.js';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { coerceError } from '../../errors.js';
import type { DatasetName } from '../../types.js';
import {
  openDuck,
  sqlIdent,
  sqlString,
  type DuckDbOptions,
  type DuckSession,
  EXACT_DECIMAL_MACROS,
  valueMismatchCondition,
} from '../convert/index.js';
import { hashFile, isAbsent, LocalStorage, retryRead, type ReadRetryOptions } from '../storage/index.js';
import { commitProblems } from '../iceberg/index.js';
import {
  CHANGE_KINDS,
  isPublished,
  readManifest,
  type ChangesFile,
  type Manifest,
  type ManifestDataset,
  type ManifestFile,
  successPath,
} from '../catalog/index.js';
import type { ColumnType } from '../../datasets/index.js';
import { counted, plural } from '../../counted.js';

export interface VerifyOptions {
  /** Check value_num = value_scaled_int × 10^scale on every row. @defaultValue true */
  checkValues?: boolean;
  duckdb?: DuckDbOptions;
  /** How a failed stat of a file is retried before it is reported unreadable. @defaultValue retryRead's */
  readRetry?: ReadRetryOptions;
}

export interface FileCheck {
  path: string;
  dataset: DatasetName | null;
  format: string;
  ok: boolean;
  rows: number | null;
  problems: string[];
}

export interface VerifyReport {
  snapshotId: string;
  ok: boolean;
  published: boolean;
  /** Problems not tied to one file (manifest, _SUCCESS, totals, stray files). */
  problems: string[];
  files: FileCheck[];
  rowsChecked: number;
  /** Rows whose value identity was checked. */
  valuesChecked: number;
}

/** DuckDB's DESCRIBE spelling of each column type. */
const DESCRIBED: Record<ColumnType, string> = {
  VARCHAR: 'VARCHAR',
  BOOLEAN: 'BOOLEAN',
  INTEGER: 'INTEGER',
  BIGINT: 'BIGINT',
  DOUBLE: 'DOUBLE',
  DATE: 'DATE',
  TIMESTAMPTZ: 'TIMESTAMP WITH TIME ZONE',
  'DECIMAL(38,0)': 'DECIMAL(38,0)',
  'VARCHAR[]': 'VARCHAR[]',
  JSON: 'JSON',
};

/** How an NDJSON file is read back: exact decimals and timestamps stay text. */
function ndjsonReadType(t: ColumnType): string {
  return t === 'DECIMAL(38,0)' || t === 'TIMESTAMPTZ' ? 'VARCHAR' : t;
}

export async function verifySnapshot(
  root: string,
  snapshotId: string,
  opts: VerifyOptions = {},
): Promise<VerifyReport> {
  const report: VerifyReport = {
    snapshotId,
    ok: false,
    published: false,
    problems: [],
    files: [],
    rowsChecked: 0,
    valuesChecked: 0,
  };
  let manifest: Manifest;
  try {
    manifest = await readManifest(root, snapshotId);
  } catch (err: unknown) {
    report.problems.push(coerceError(err).message);
    return report;
  }
  report.published = await isPublished(root, snapshotId);
  if (!report.published)
    report.problems.push(`${successPath(root, snapshotId)} is missing: the snapshot is not published`);

  const duck = await openDuck(opts.duckdb);
  try {
    for (const m of EXACT_DECIMAL_MACROS) await duck.run(m);
    const rowsPerDataset = new Map<string, number>();
    const sources: SourceManifests = new Map();
    for (const f of manifest.files) {
      const ds = manifest.datasets[f.dataset];
      const check = await verifyFile(duck, root, f, ds, opts, report, sources);
      report.files.push(check);
      if (check.rows !== null) {
        const key = `${f.dataset}/${f.format}`;
        rowsPerDataset.set(key, (rowsPerDataset.get(key) ?? 0) + check.rows);
      }
    }
    for (const [name, ds] of Object.entries(manifest.datasets)) {
      for (const format of manifest.formats) {
        const got = rowsPerDataset.get(`${name}/${format}`) ?? 0;
        if (ds !== undefined && got !== ds.rows && report.files.every((c) => c.ok)) {
          report.problems.push(`${name}: ${format} files hold ${got} rows, the manifest says ${ds.rows}`);
        }
      }
    }
    const fileRows = manifest.files.reduce((s, f) => s + (f.format === manifest.formats[0] ? f.rows : 0), 0);
    if (fileRows !== manifest.totals.rows) {
      report.problems.push(
        `totals.rows is ${manifest.totals.rows}, the files of one format hold ${fileRows}`,
      );
    }
    for (const c of manifest.changes?.files ?? []) report.files.push(await verifyChangesFile(duck, root, c));
    report.problems.push(...(await strayFiles(root, manifest, opts.readRetry)));
    if (report.published) report.problems.push(...(await commitProblems(new LocalStorage(root), manifest)));
  } finally {
    duck.close();
  }
  report.ok = report.published && report.problems.length === 0 && report.files.every((f) => f.ok);
  return report;
}

async function verifyFile(
  duck: DuckSession,
  root: string,
  f: ManifestFile,
  ds: ManifestDataset | undefined,
  opts: VerifyOptions,
  report: VerifyReport,
  sources: SourceManifests,
): Promise<FileCheck> {
  const check: FileCheck = {
    path: f.path,
    dataset: f.dataset,
    format: f.format,
    ok: false,
    rows: null,
    problems: [],
  };
  const abs = join(root, f.path);
  if (!(await checkFileBytes(check, abs, root, f, opts, sources))) return check;
  if (ds === undefined) {
    check.problems.push(`dataset ${f.dataset} is not described in the manifest`);
    return check;
  }
  const read: FileRead = { abs, source: readSource(abs, f.format, ds.columns), columns: ds.columns };
  try {
    await checkColumns(duck, check, f, read);
    const n = await checkRows(duck, check, f, read, report);
    if (opts.checkValues !== false) await checkValues(duck, check, read, () => (report.valuesChecked += n));
  } catch (err: unknown) {
    check.problems.push(`unreadable: ${coerceError(err).message.split('\n')[0]}`);
  }
  check.ok = check.problems.length === 0;
  return check;
}

/** A data file as DuckDB reads it: its path, the table function over it, the manifest's columns. */
interface FileRead {
  abs: string;
  source: string;
  columns: ManifestDataset['columns'];
}

/** DuckDB's table function reading one file with the manifest's columns. */
function readSource(
  abs: string,
  format: ManifestFile['format'],
  columns: ManifestDataset['columns'],
): string {
  const lit = sqlString(abs);
  return format === 'parquet'
    ? `read_parquet(${lit}, hive_partitioning = false)`
    : `read_ndjson(${lit}, columns = {${columns.map((c) => `${sqlString(c.name)}: '${ndjsonReadType(c.type)}'`).join(', ')}}, format = 'newline_delimited', compression = 'gzip', hive_partitioning = false)`;
}

/** Size, sha256 and the reused-file links; false when the file cannot be read at all. */
async function checkFileBytes(
  check: FileCheck,
  abs: string,
  root: string,
  f: ManifestFile,
  opts: VerifyOptions,
  sources: SourceManifests,
): Promise<boolean> {
  let size: number;
  try {
    size = (await retryRead(abs, () => stat(abs), opts.readRetry)).size;
  } catch (err: unknown) {
    // Missing is an answer; anything else is reported with its cause, never as "missing".
    check.problems.push(isAbsent(err) ? 'missing' : `could not be read: ${coerceError(err).message}`);
    return false;
  }
  if (size !== f.bytes) check.problems.push(`size ${size} bytes, manifest says ${f.bytes}`);
  const { sha256 } = await hashFile(abs);
  if (sha256 !== f.sha256) check.problems.push(`sha256 ${sha256} differs from the manifest's ${f.sha256}`);
  check.problems.push(...(await reusedFileProblems(root, f, sha256, sources)));
  return true;
}

/** Schema: names, order and types (Parquet), or every line's keys (NDJSON). */
async function checkColumns(
  duck: DuckSession,
  check: FileCheck,
  f: ManifestFile,
  read: FileRead,
): Promise<void> {
  const { columns, source } = read;
  if (f.format === 'parquet') {
    const described = await duck.all(`DESCRIBE SELECT * FROM ${source}`);
    const got = described.map((d) => `${String(d.column_name)} ${String(d.column_type)}`);
    const want = columns.map((c) => `${c.name} ${DESCRIBED[c.type]}`);
    if (got.join(', ') !== want.join(', '))
      check.problems.push(`columns differ from the manifest: ${listDiff(got, want)}`);
    return;
  }
  const shapes = await duck.all(
    `SELECT DISTINCT CAST(json_keys(json) AS VARCHAR[]) AS k FROM read_ndjson_objects(${sqlString(read.abs)}, format = 'newline_delimited', compression = 'gzip')`,
  );
  const want = columns.map((c) => c.name);
  for (const s of shapes) {
    const keys = s.k as string[];
    if (keys.join(',') !== want.join(','))
      check.problems.push(`a line's keys differ from the manifest: ${listDiff(keys, want)}`);
  }
}

/** Row count, each company's rows and the period_end range against the manifest; returns the rows counted. */
async function checkRows(
  duck: DuckSession,
  check: FileCheck,
  f: ManifestFile,
  read: FileRead,
  report: VerifyReport,
): Promise<number> {
  const hasDates = read.columns.some((c) => c.name === 'period_end');
  const stats = await duck.all(
    `SELECT count(*)::BIGINT AS n${hasDates ? ', CAST(min(period_end) AS VARCHAR) AS lo, CAST(max(period_end) AS VARCHAR) AS hi' : ''} FROM ${read.source}`,
  );
  const n = Number(stats[0]?.n);
  check.rows = n;
  report.rowsChecked += n;
  if (n !== f.rows) check.problems.push(`${n} rows, manifest says ${f.rows}`);
  check.problems.push(...(await companyRowProblems(duck, read.abs, f, read.columns)));
  if (hasDates && f.min_period_end !== undefined) {
    const lo = (stats[0]?.lo as string | null) ?? null;
    const hi = (stats[0]?.hi as string | null) ?? null;
    if (lo !== f.min_period_end || hi !== f.max_period_end) {
      check.problems.push(
        `period_end spans ${lo}..${hi}, manifest says ${f.min_period_end}..${f.max_period_end}`,
      );
    }
  }
  return n;
}

/**
 * value_num against value_scaled_int x 10^scale, with up to three examples of a mismatch, when the
 * dataset has those columns; `counted` is called once the mismatches are counted.
 */
async function checkValues(
  duck: DuckSession,
  check: FileCheck,
  read: FileRead,
  counted: () => void,
): Promise<void> {
  const names = new Set(read.columns.map((c) => c.name));
  if (!(names.has('value_num') && names.has('value_scaled_int') && names.has('scale'))) return;
  const { source } = read;
  const scaled = names.has('value_scaled_int_text')
    ? `coalesce(CAST(value_scaled_int AS VARCHAR), value_scaled_int_text)`
    : `CAST(value_scaled_int AS VARCHAR)`;
  const cond = valueMismatchCondition('value_num', scaled, 'scale');
  const key = names.has('fact_key') ? sqlIdent('fact_key') : 'NULL';
  const bads = await duck.all(`SELECT count(*)::BIGINT AS bad FROM ${source} WHERE ${cond}`);
  counted();
  const badRows = Number(bads[0]?.bad ?? 0);
  if (badRows > 0) {
    const bad = await duck.all(
      `SELECT ${key} AS fact_key, value_num, ${scaled} AS value_scaled_int, scale FROM ${source} WHERE ${cond} LIMIT 3`,
    );
    const examples = bad
      .map(
        (b) =>
          `${String(b.fact_key)}: value_num ${String(b.value_num)} vs ${String(b.value_scaled_int)} x 10^${String(b.scale)}`,
      )
      .join('; ');
    check.problems.push(
      `${badRows} ${plural(badRows, 'row')} where value_num != value_scaled_int x 10^scale (${examples})`,
    );
  }
}

/** A file of the `changes` dataset: bytes and sha256, then its rows per change kind. */
async function verifyChangesFile(duck: DuckSession, root: string, c: ChangesFile): Promise<FileCheck> {
  const check: FileCheck = {
    path: c.path,
    dataset: null,
    format: 'parquet',
    ok: false,
    rows: null,
    problems: [],
  };
  const abs = join(root, c.path);
  const size = await stat(abs).then(
    (st) => st.size,
    () => null,
  );
  if (size === null) {
    check.problems.push('missing');
    return check;
  }
  if (size !== c.bytes) check.problems.push(`size ${size} bytes, manifest says ${c.bytes}`);
  const { sha256 } = await hashFile(abs);
  if (sha256 !== c.sha256) check.problems.push(`sha256 ${sha256} differs from the manifest's ${c.sha256}`);
  try {
    const counted = await duck.all(
      `SELECT change, count(*)::BIGINT AS n FROM read_parquet(${sqlString(abs)}, hive_partitioning = false) GROUP BY change`,
    );
    const got: Record<string, number> = Object.fromEntries(
      counted.map((r) => [String(r.change), Number(r.n)]),
    );
    check.rows = Object.values(got).reduce((s, n) => s + n, 0);
    for (const kind of new Set([...CHANGE_KINDS, ...Object.keys(got)])) {
      const want = (c.counts as Record<string, number>)[kind] ?? 0;
      if ((got[kind] ?? 0) !== want)
        check.problems.push(`${got[kind] ?? 0} ${kind} rows, manifest says ${want}`);
    }
    if (check.rows !== c.rows) check.problems.push(`${check.rows} rows, manifest says ${c.rows}`);
  } catch (err: unknown) {
    check.problems.push(`unreadable: ${coerceError(err).message.split('\n')[0]}`);
  }
  check.ok = check.problems.length === 0;
  return check;
}

/** What differs between two column lists, briefly. */
function listDiff(got: readonly string[], want: readonly string[]): string {
  const g = new Set(got);
  const w = new Set(want);
  const extra = got.filter((x) => !w.has(x));
  const missing = want.filter((x) => !g.has(x));
  const parts: string[] = [];
  if (missing.length > 0) parts.push(`missing or retyped [${missing.join(', ')}]`);
  if (extra.length > 0) parts.push(`unexpected [${extra.join(', ')}]`);
  if (parts.length === 0) parts.push('same columns in another order');
  return parts.join(', ');
}

/** Files in the snapshot's partition folders that the manifest does not list. */
async function strayFiles(root: string, m: Manifest, retry?: ReadRetryOptions): Promise<string[]> {
  const listed = new Set(m.files.map((f) => f.path));
  const problems: string[] = [];
  for (const ds of Object.values(m.datasets)) {
    if (ds === undefined || ds.files === 0) continue;
    let names: string[];
    try {
      names = await retryRead(join(root, ds.path), () => readdir(join(root, ds.path)), retry);
    } catch (err: unknown) {
      // Absent: every listed file is reported missing already. Unreadable: say so, with the cause.
      if (!isAbsent(err)) problems.push(`${ds.path}: could not be listed: ${coerceError(err).message}`);
      continue;
    }
    for (const n of names) {
      const rel = `${ds.path}/${n}`;
      if (!listed.has(rel))
        problems.push(`${rel} is not listed in the manifest (readers globbing the folder would read it)`);
    }
  }
  return problems;
}

/** The report as text for a terminal. */
export function formatVerifyReport(r: VerifyReport): string {
  const lines: string[] = [];
  lines.push(`snapshot ${r.snapshotId}: ${r.ok ? 'OK' : 'FAILED'}`);
  for (const f of r.files) {
    const rows = f.rows === null ? '' : ` ${counted(f.rows, 'row')}`;
    lines.push(`  ${f.ok ? 'ok  ' : 'FAIL'} ${f.path}${rows}${f.ok ? '' : `: ${f.problems.join('; ')}`}`);
  }
  for (const p of r.problems) lines.push(`  FAIL ${p}`);
  lines.push(
    `${counted(r.files.length, 'file')}, ${r.files.filter((f) => !f.ok).length} with problems; ${counted(r.rowsChecked, 'row')} read, ${counted(r.valuesChecked, 'value identity', 'value identities')} checked`,
  );
  return lines.join('\n');
}
