/**
 * `iceberg rebuild`: every dataset's table written again from the retained published snapshots,
 * oldest first, for a root published before tables existed or one whose metadata was lost.
 */
import { listStoredSnapshots } from '../catalog/index.js';
import { type Storage } from '../storage/index.js';
import { commitSnapshot, type TableCommit } from './commit.js';
import { METADATA_DIR } from './metadata.js';
import { DATASETS } from '../../types.js';
import { counted } from '../../counted.js';

export interface RebuildReport {
  /** Our snapshot ids committed, oldest first. */
  snapshots: string[];
  commits: TableCommit[];
}

/** Deletes every table's metadata, then commits each published snapshot in publish order. */
export async function rebuildTables(storage: Storage): Promise<RebuildReport> {
  const listing = await listStoredSnapshots(storage);
  const published = listing.filter((s) => s.published && s.manifest !== null);
  for (const dataset of DATASETS) {
    const keys = (await storage.list(`${dataset}/${METADATA_DIR}/`)).map((o) => o.key);
    await storage.delete(keys);
  }
  const commits: TableCommit[] = [];
  for (const s of published)
    if (s.manifest !== null) commits.push(...(await commitSnapshot(storage, s.manifest)));
  return { snapshots: published.map((s) => s.snapshotId), commits };
}

/** One line per table: its version and how many snapshots it holds. */
export function formatRebuild(r: RebuildReport): string {
  const byTable = new Map<string, number>();
  for (const c of r.commits) if (c.outcome === 'committed') byTable.set(c.dataset, c.version);
  const lines = [...byTable].map(([d, v]) => `  ${d}: v${v}.metadata.json`);
  const head = `rebuilt ${counted(byTable.size, 'table')} from ${counted(r.snapshots.length, 'published snapshot')}`;
  return [head, ...lines].join('\n');
}
