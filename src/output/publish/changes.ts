/**
 * The `changes` dataset: at publish, for each facts dataset this snapshot and the previous
 * published one both have as Parquet, the fact rows added, changed (same `fact_key` and
 * `_requested_ticker`, any other field different) and removed, with a `change` column and
 * `source_dataset`, typed like the facts, in the same Hive layout:
 * `changes/snapshot_date=D/snapshot_id=ID/part-<dataset>.parquet`. Lineage (`_snapshot_id`,
 * `_fetched_at`) is not compared: a carried-over row is not a change. A warehouse MERGEs it
 * (`filings-export ddl` prints the statement) instead of reloading the dataset.
 */
import { mkdir, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { DatasetName } from '../../types.js';
import { parquetCodec, sqlIdent, sqlPathList, sqlString, type DuckSession } from '../convert/index.js';
import { fsyncDir, hashFile } from '../storage/index.js';
import {
  CHANGE_KINDS,
  type ChangeKind,
  type ChangesFile,
  type Manifest,
  type ManifestChanges,
  type ManifestFile,
  toPosix,
} from '../catalog/index.js';

export const CHANGES_DIR = 'changes';
/** The facts datasets compared; they share one schema, so one `changes` table holds them all. */
export const CHANGE_SOURCES: readonly DatasetName[] = ['facts_full', 'facts_core', 'facts_latest'];

/** What identifies a fact row in `changes` (and in a table MERGEd from it). */
export const CHANGE_KEY: readonly string[] = ['fact_key', '_requested_ticker'];

/** Lineage that differs between two exports of the same fact; never a change. */
const NOT_COMPARED = ['_snapshot_id', '_fetched_at'];

function allParquet(files: readonly ManifestFile[], d: DatasetName): string[] {
  return files.filter((f) => f.dataset === d && f.format === 'parquet').map((f) => f.path);
}

/**
 * The SQL condition "row n differs from row o" over the columns both snapshots have, lineage aside
 * (a schema change adds columns to one side). A column of the same type on both sides is compared
 * as a value (IS DISTINCT FROM: no serialisation, NULLs equal); one whose type changed is compared
 * by its JSON text, so a value that reads differently is a change and no cast can fail.
 */
function rowsDiffer(
  now: readonly { name: string; type: string }[],
  before: readonly { name: string; type: string }[],
): string {
  const typeBefore = new Map(before.map((c) => [c.name, c.type]));
  const compared = now.filter((c) => typeBefore.has(c.name) && !NOT_COMPARED.includes(c.name));
  if (compared.length === 0) return 'false';
  return compared
    .map((c) => {
      const col = sqlIdent(c.name);
      return typeBefore.get(c.name) === c.type
        ? `n.${col} IS DISTINCT FROM o.${col}`
        : `to_json(n.${col})::VARCHAR IS DISTINCT FROM to_json(o.${col})::VARCHAR`;
    })
    .join(' OR ');
}

export function changesRelDir(snapshotDate: string, snapshotId: string): string {
  return toPosix(join(CHANGES_DIR, `snapshot_date=${snapshotDate}`, `snapshot_id=${snapshotId}`));
}

/**
 * Writes the changes of `current` against `previous` under `root` (both snapshots' Parquet files
 * must be there). Returns null when no facts dataset is in both as Parquet.
 */
/** What `writeChanges` compares: this snapshot's files against the previous snapshot's. */
export interface ChangesInput {
  root: string;
  snapshotId: string;
  snapshotDate: string;
  /** This snapshot's datasets, their column names, and files. */
  datasets: readonly DatasetName[];
  /** This snapshot's companies (part keys) per dataset. */
  companies: Partial<Record<DatasetName, readonly string[]>>;
  /**
   * The companies whose rows may differ (fetched, not carried over from `previous`): only their
   * rows are read and compared. @defaultValue every company of `companies`
   */
  fetched?: Partial<Record<DatasetName, readonly string[]>>;
  /** This snapshot's columns per dataset, with their types. */
  columns: Partial<Record<DatasetName, readonly { name: string; type: string }[]>>;
  files: readonly ManifestFile[];
  previous: Manifest;
}

export async function writeChanges(duck: DuckSession, o: ChangesInput): Promise<ManifestChanges | null> {
  const rel = changesRelDir(o.snapshotDate, o.snapshotId);
  const dir = join(o.root, rel);
  await rm(dir, { recursive: true, force: true });
  const out: ChangesFile[] = [];
  for (const dataset of CHANGE_SOURCES) {
    const file = await writeDatasetChanges(duck, o, dataset, { dir, rel });
    if (file !== undefined) out.push(file);
  }
  if (out.length === 0) return null;
  if ((await stat(dir).catch(() => null)) !== null) await fsyncDir(dir);
  const counts: Record<ChangeKind, number> = { added: 0, changed: 0, removed: 0 };
  for (const f of out) for (const k of CHANGE_KINDS) counts[k] += f.counts[k];
  return { against: o.previous.snapshot_id, files: out, counts };
}

/** One dataset's changes file, or undefined when the two snapshots give it no baseline. */
async function writeDatasetChanges(
  duck: DuckSession,
  o: ChangesInput,
  dataset: DatasetName,
  at: { dir: string; rel: string },
): Promise<ChangesFile | undefined> {
  const parquet = (files: readonly ManifestFile[]): string[] => {
    const only = new Set(o.fetched?.[dataset] ?? o.companies[dataset] ?? []);
    // Files that record their companies are read only when they hold one that may have changed.
    return files
      .filter((f) => f.dataset === dataset && f.format === 'parquet')
      .filter((f) => f.companies === undefined || f.companies.some((c) => only.has(c.ticker)))
      .map((f) => join(o.root, f.path));
  };
  // Both snapshots export it as Parquet (a dataset left out of this one is not "all removed").
  const both =
    o.datasets.includes(dataset) &&
    o.previous.datasets[dataset] !== undefined &&
    o.previous.formats.includes('parquet');
  const anyFile = [...allParquet(o.previous.files, dataset), ...allParquet(o.files, dataset)];
  if (!both || anyFile.length === 0) return undefined;
  // Only a company both snapshots asked for can have changed: the previous snapshot's other
  // companies were not asked for now (not removed), and with no company in common there is no
  // baseline at all. A company new to this snapshot counts as added (a MERGE then inserts it).
  const asked = o.companies[dataset] ?? [];
  const askedBefore = new Set(o.previous.parts.filter((p) => p.dataset === dataset).map((p) => p.ticker));
  if (!asked.some((t) => askedBefore.has(t))) return undefined;
  const path = join(at.dir, `part-${dataset}.parquet`);
  await mkdir(dirname(path), { recursive: true });
  const fetched = o.fetched?.[dataset] ?? asked;
  const inFetched = `_requested_ticker IN (${['', ...fetched].map(sqlString).join(', ')})`;
  const read = (files: string[]): string =>
    files.length === 0
      ? `(SELECT * FROM read_parquet(${sqlString(join(o.root, anyFile[0]!))}) LIMIT 0)`
      : `(SELECT * FROM read_parquet(${sqlPathList(files)}, union_by_name = true) WHERE ${inFetched})`;
  const differs = rowsDiffer(o.columns[dataset] ?? [], o.previous.datasets[dataset]?.columns ?? []);
  const keys = CHANGE_KEY.join(', ');
  const head = (kind: ChangeKind, alias: string): string =>
    `SELECT ${sqlString(kind)} AS change, ${sqlString(dataset)} AS source_dataset, ${sqlString(o.snapshotId)} AS _snapshot_id, ${alias}.* EXCLUDE (_snapshot_id)`;
  await duck.run(`COPY (
  WITH n AS ${read(parquet(o.files))}, o AS ${read(parquet(o.previous.files))}
  ${head('added', 'n')} FROM n ANTI JOIN o USING (${keys})
  UNION ALL BY NAME ${head('removed', 'o')} FROM o ANTI JOIN n USING (${keys})
  UNION ALL BY NAME ${head('changed', 'n')} FROM n JOIN o USING (${keys}) WHERE ${differs}
  ORDER BY change, _requested_ticker, fact_key
) TO ${sqlString(path)} (FORMAT parquet, ${parquetCodec('zstd')})`);
  return changesFile(duck, path, `${at.rel}/part-${dataset}.parquet`, dataset);
}

/** The manifest entry of a written changes file: its counts per kind, size and sha256. */
async function changesFile(
  duck: DuckSession,
  path: string,
  rel: string,
  dataset: DatasetName,
): Promise<ChangesFile> {
  const counted = await duck.all(
    `SELECT change, count(*)::BIGINT AS n FROM read_parquet(${sqlString(path)}) GROUP BY change`,
  );
  const counts: Record<ChangeKind, number> = { added: 0, changed: 0, removed: 0 };
  for (const r of counted) counts[r.change as ChangeKind] = Number(r.n);
  const { sha256, bytes } = await hashFile(path);
  return {
    path: rel,
    source_dataset: dataset,
    rows: counts.added + counts.changed + counts.removed,
    bytes,
    sha256,
    counts,
  };
}
