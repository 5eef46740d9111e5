/**
 * The publisher's commit: a published snapshot committed to its tables after `_SUCCESS`, every
 * older published snapshot still missing from them first, oldest first, so that a night whose
 * commit failed or was cut short (a crash) lands before the next one, never after it.
 */
import type { DatasetName } from '../../types.js';
import {
  listPublishedSnapshots,
  publishedAfter,
  readStoredManifest,
  type Manifest,
} from '../catalog/index.js';
import type { Storage } from '../storage/index.js';
import { commitSnapshot, snapshotOf, type TableCommit } from './commit.js';
import { readTable, type TableMetadata } from './metadata.js';

/** What the commit did for one published snapshot: each of its tables. */
export interface SnapshotCommit {
  snapshotId: string;
  tables: TableCommit[];
}

/**
 * Commits the published snapshot `snapshotId` to its tables, after every older published snapshot
 * that a table still lacks (those a failed or interrupted commit left behind). Idempotent: a
 * snapshot already in its tables is not committed again. Returns the snapshots committed, oldest
 * first; `snapshotId`'s own is last.
 */
export async function commitPublished(storage: Storage, snapshotId: string): Promise<SnapshotCommit[]> {
  const manifest = await readStoredManifest(storage, snapshotId);
  const tables = new Map<string, TableMetadata | null>();
  const tableOf = async (dataset: string): Promise<TableMetadata | null> => {
    if (!tables.has(dataset)) tables.set(dataset, (await readTable(storage, dataset))?.metadata ?? null);
    return tables.get(dataset) ?? null;
  };
  const out: SnapshotCommit[] = [];
  // A commit done again (the publish job retried after a crash) reads the tables, never the root.
  if (!(await missingFrom(manifest, tableOf))) return [await commitOne(storage, manifest)];
  for (const older of await olderPublished(storage, manifest))
    if (await missingFrom(older, tableOf)) out.push(await commitOne(storage, older));
  out.push(await commitOne(storage, manifest));
  return out;
}

async function commitOne(storage: Storage, manifest: Manifest): Promise<SnapshotCommit> {
  return { snapshotId: manifest.snapshot_id, tables: await commitSnapshot(storage, manifest) };
}

/** Whether a table of the snapshot's datasets lacks it (or does not exist yet). */
async function missingFrom(
  manifest: Manifest,
  tableOf: (dataset: string) => Promise<TableMetadata | null>,
): Promise<boolean> {
  for (const dataset of Object.keys(manifest.datasets) as DatasetName[]) {
    const table = await tableOf(dataset);
    if (table === null || snapshotOf(table, manifest.snapshot_id) === undefined) return true;
  }
  return false;
}

/**
 * The published snapshots of the root before `manifest`'s own, oldest first. From `_snapshots/`
 * alone: a night's commit must not cost a listing of every data and staged file of the root.
 */
async function olderPublished(storage: Storage, manifest: Manifest): Promise<Manifest[]> {
  return (await listPublishedSnapshots(storage)).filter((older) => publishedAfter(manifest, older));
}
