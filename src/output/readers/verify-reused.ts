/**
 * What `verify` checks of a file reused whole from an earlier snapshot: its sha256 is the one the
 * source's manifest recorded for `reused_from.path`, and, while the source file is still there,
 * the source's bytes hash the same. A pruned source is no problem: the reuser holds its own copy
 * (a hard link or a server-side copy), so only its own bytes are checked then. And of every file
 * listing its `companies` (what the next night reuses, packs or rebuilds it by): each company's
 * rows are where the manifest says.
 */
import { join } from 'node:path';
import { coerceError } from '../../errors.js';
import { readManifest, type Manifest, type ManifestFile } from '../catalog/index.js';
import { sqlString, type DuckSession } from '../convert/index.js';
import { hashFile, isAbsent } from '../storage/index.js';

/** Source manifests read once per verify (undefined: the source is gone). */
export type SourceManifests = Map<string, Promise<Manifest | undefined>>;

export async function reusedFileProblems(
  root: string,
  f: ManifestFile,
  sha256: string,
  sources: SourceManifests,
): Promise<string[]> {
  const from = f.reused_from;
  if (from === undefined) return [];
  let source = sources.get(from.snapshot_id);
  if (source === undefined) {
    source = readManifest(root, from.snapshot_id).catch(() => undefined);
    sources.set(from.snapshot_id, source);
  }
  const manifest = await source;
  if (manifest === undefined) return []; // pruned: this snapshot's own copy stands alone
  const entry = manifest.files.find((g) => g.path === from.path);
  if (entry === undefined) return [`reused from ${from.snapshot_id}, whose manifest lists no ${from.path}`];
  const problems: string[] = [];
  if (entry.sha256 !== f.sha256)
    problems.push(`sha256 ${f.sha256} is not ${from.snapshot_id}'s ${entry.sha256} for ${from.path}`);
  try {
    const there = await hashFile(join(root, from.path));
    if (there.sha256 !== sha256)
      problems.push(`${from.path} of ${from.snapshot_id} hashes ${there.sha256}, not this file's ${sha256}`);
  } catch (err: unknown) {
    if (!isAbsent(err))
      problems.push(`${from.path} of ${from.snapshot_id} could not be read: ${coerceError(err).message}`);
  }
  return problems;
}

/**
 * A file's `companies` against its rows, by the `_requested_ticker` lineage column: each company
 * holds its `rows` rows, and in Parquet they are rows [first_row, first_row + rows) of the file;
 * no other company's rows are there. Nothing to check in a file without `companies` (older
 * manifests) or a dataset without the column.
 */
export async function companyRowProblems(
  duck: DuckSession,
  path: string,
  f: ManifestFile,
  columns: readonly { name: string }[],
): Promise<string[]> {
  if (f.companies === undefined || !columns.some((c) => c.name === '_requested_ticker')) return [];
  const lit = sqlString(path);
  const rows =
    f.format === 'parquet'
      ? await duck.all(
          `SELECT _requested_ticker AS t, count(*)::BIGINT AS n, min(file_row_number)::BIGINT AS lo, max(file_row_number)::BIGINT AS hi FROM read_parquet(${lit}, file_row_number = true, hive_partitioning = false) GROUP BY t`,
        )
      : await duck.all(
          `SELECT _requested_ticker AS t, count(*)::BIGINT AS n FROM read_ndjson(${lit}, columns = {'_requested_ticker': 'VARCHAR'}, format = 'newline_delimited', compression = 'gzip', hive_partitioning = false) GROUP BY t`,
        );
  const got = new Map(rows.map((r) => [String(r.t), r]));
  const problems: string[] = [];
  const listed = new Map<string, { rows: number; first: number; entries: number }>();
  for (const c of f.companies) {
    const l = listed.get(c.ticker) ?? { rows: 0, first: c.first_row, entries: 0 };
    listed.set(c.ticker, { rows: l.rows + c.rows, first: l.first, entries: l.entries + 1 });
  }
  for (const [ticker, want] of listed) {
    const r = got.get(ticker);
    const n = Number(r?.n ?? 0);
    if (n !== want.rows) problems.push(`${ticker} holds ${n} rows, its companies entry says ${want.rows}`);
    else if (r?.lo !== undefined && want.entries === 1) {
      const [lo, hi] = [Number(r.lo), Number(r.hi)];
      if (lo !== want.first || hi !== want.first + want.rows - 1)
        problems.push(`${ticker}'s rows are ${lo}..${hi}, its companies entry says from ${want.first}`);
    }
  }
  for (const t of got.keys())
    if (!listed.has(t)) problems.push(`rows of ${t}, which its companies entry does not list`);
  return problems;
}
