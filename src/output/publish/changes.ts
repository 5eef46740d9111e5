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
import { sqlIdent, sqlPathList, sqlString, type DuckSession } from '../convert/index.js';
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

export function changesRelDir(snapshotDate: string, snapshotId: string): string {
  return toPosix(join(CHANGES_DIR, `snapshot_date=${snapshotDate}`, `snapshot_id=${snapshotId}`));
}

/**
 * Writes the changes of `current` against `previous` under `root` (both snapshots' Parquet files
 * must be there). Returns null when no facts dataset is in both as Parquet.
 */
export async function writeChanges(
  duck: DuckSession,
  o: {
    root: string;
    snapshotId: string;
    snapshotDate: string;
    /** This snapshot's datasets, their column names, and files. */
    datasets: readonly DatasetName[];
    /** This snapshot's companies (part keys) per dataset. */
    companies: Partial<Record<DatasetName, readonly string[]>>;
    columns: Partial<Record<DatasetName, readonly string[]>>;
    files: readonly ManifestFile[];
    previous: Manifest;
  },
): Promise<ManifestChanges | null> {
  const parquet = (files: readonly ManifestFile[], d: DatasetName): string[] =>
    files.filter((f) => f.dataset === d && f.format === 'parquet').map((f) => join(o.root, f.path));
  const rel = changesRelDir(o.snapshotDate, o.snapshotId);
  const dir = join(o.root, rel);
  await rm(dir, { recursive: true, force: true });
  const out: ChangesFile[] = [];
  for (const dataset of CHANGE_SOURCES) {
    const now = parquet(o.files, dataset);
    const before = parquet(o.previous.files, dataset);
    // Both snapshots export it as Parquet (a dataset left out of this one is not "all removed").
    const both =
      o.datasets.includes(dataset) &&
      o.previous.datasets[dataset] !== undefined &&
      o.previous.formats.includes('parquet');
    if (!both || (now.length === 0 && before.length === 0)) continue;
    // Only a company both snapshots asked for can have changed: the previous snapshot's other
    // companies were not asked for now (not removed), and with no company in common there is no
    // baseline at all. A company new to this snapshot counts as added (a MERGE then inserts it).
    const asked = o.companies[dataset] ?? [];
    const askedBefore = new Set(o.previous.parts.filter((p) => p.dataset === dataset).map((p) => p.ticker));
    if (!asked.some((t) => askedBefore.has(t))) continue;
    const path = join(dir, `part-${dataset}.parquet`);
    await mkdir(dirname(path), { recursive: true });
    const read = (files: string[]): string =>
      files.length === 0
        ? `(SELECT * FROM read_parquet(${sqlPathList(before.length > 0 ? before : now)}) LIMIT 0)`
        : `(SELECT * FROM read_parquet(${sqlPathList(files)}, union_by_name = true))`;
    // Compared: the columns both snapshots have, lineage aside (a schema change adds columns to one side).
    const previousColumns = new Set((o.previous.datasets[dataset]?.columns ?? []).map((c) => c.name));
    const compared = (o.columns[dataset] ?? []).filter(
      (c) => previousColumns.has(c) && !NOT_COMPARED.includes(c),
    );
    const hash = (alias: string): string =>
      `md5(to_json(struct_pack(${compared.map((c) => `${sqlIdent(c)} := ${alias}.${sqlIdent(c)}`).join(', ')}))::VARCHAR)`;
    const keys = CHANGE_KEY.join(', ');
    const head = (kind: ChangeKind, alias: string): string =>
      `SELECT ${sqlString(kind)} AS change, ${sqlString(dataset)} AS source_dataset, ${sqlString(o.snapshotId)} AS _snapshot_id, ${alias}.* EXCLUDE (__h, _snapshot_id)`;
    const previousAsked = `(SELECT * FROM ${read(before)} WHERE _requested_ticker IN (${asked.map(sqlString).join(', ')}))`;
    await duck.run(`COPY (
  WITH n AS ${read(now)}, o AS ${previousAsked},
    nh AS (SELECT n.*, ${hash('n')} AS __h FROM n),
    oh AS (SELECT o.*, ${hash('o')} AS __h FROM o)
  ${head('added', 'nh')} FROM nh ANTI JOIN oh USING (${keys})
  UNION ALL BY NAME ${head('removed', 'oh')} FROM oh ANTI JOIN nh USING (${keys})
  UNION ALL BY NAME ${head('changed', 'nh')} FROM nh JOIN oh USING (${keys}) WHERE nh.__h <> oh.__h
  ORDER BY change, _requested_ticker, fact_key
) TO ${sqlString(path)} (FORMAT parquet, COMPRESSION zstd)`);
    const counted = await duck.all(
      `SELECT change, count(*)::BIGINT AS n FROM read_parquet(${sqlString(path)}) GROUP BY change`,
    );
    const counts: Record<ChangeKind, number> = { added: 0, changed: 0, removed: 0 };
    for (const r of counted) counts[r.change as ChangeKind] = Number(r.n);
    const { sha256, bytes } = await hashFile(path);
    out.push({
      path: `${rel}/part-${dataset}.parquet`,
      source_dataset: dataset,
      rows: counts.added + counts.changed + counts.removed,
      bytes,
      sha256,
      counts,
    });
  }
  if (out.length === 0) return null;
  if ((await stat(dir).catch(() => null)) !== null) await fsyncDir(dir);
  const counts: Record<ChangeKind, number> = { added: 0, changed: 0, removed: 0 };
  for (const f of out) for (const k of CHANGE_KINDS) counts[k] += f.counts[k];
  return { against: o.previous.snapshot_id, files: out, counts };
}
