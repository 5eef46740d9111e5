/**
 * Expiring snapshots before prune deletes their files: a new table version without them, and no
 * older version left that a reader could open and that still names them. Then their Avro files go.
 */
import { InputError } from '../../errors.js';
import { DATASETS, type DatasetName } from '../../types.js';
import type { Manifest } from '../catalog/index.js';
import type { Storage } from '../storage/index.js';
import { commitSnapshot } from './commit.js';
import { keyOfUrl, metadataKey, readTable, SUMMARY_SNAPSHOT_ID, writeTable } from './metadata.js';

export interface TableExpiry {
  dataset: DatasetName;
  /** Our snapshot ids expired from the table. */
  expired: string[];
  /** The table's version after the expiry. */
  version: number;
}

/**
 * Expires our snapshots `ids` from every dataset table that holds any of them. Refuses to expire a
 * table's current snapshot (prune keeps the newest). Call before deleting the snapshots' files.
 */
export async function expireSnapshots(storage: Storage, ids: readonly string[]): Promise<TableExpiry[]> {
  const gone = new Set(ids);
  const out: TableExpiry[] = [];
  for (const dataset of DATASETS) {
    const table = await readTable(storage, dataset);
    if (table === null) continue;
    const m = table.metadata;
    const expired = m.snapshots.filter((s) => gone.has(s.summary[SUMMARY_SNAPSHOT_ID] ?? ''));
    if (expired.length === 0) continue;
    if (expired.some((s) => s['snapshot-id'] === m['current-snapshot-id']))
      throw new InputError(
        `the ${dataset} table's current snapshot is ${m.snapshots.find((s) => s['snapshot-id'] === m['current-snapshot-id'])?.summary[SUMMARY_SNAPSHOT_ID]}, which is to be deleted, and no kept snapshot has ${dataset}: nothing was removed; keep that snapshot (a larger --keep)`,
      );
    const ex = new Set(expired.map((s) => s['snapshot-id']));
    // An empty metadata log: every older version names an expired snapshot, so writeTable deletes them all.
    const next = await writeTable(storage, dataset, table, {
      ...m,
      snapshots: m.snapshots.filter((s) => !ex.has(s['snapshot-id'])),
      'snapshot-log': m['snapshot-log'].filter((l) => !ex.has(l['snapshot-id'])),
      'metadata-log': [],
    });
    await storage.delete(
      expired.flatMap((s) => [
        keyOfUrl(storage, s['manifest-list']),
        metadataKey(dataset, `${s['snapshot-id']}-m0.avro`),
      ]),
    );
    out.push({
      dataset,
      expired: expired.map((s) => s.summary[SUMMARY_SNAPSHOT_ID] ?? ''),
      version: next.version,
    });
  }
  return out;
}

/**
 * What prune calls before it deletes the files of our snapshots `ids`. A table whose current
 * snapshot is among them (the kept nights' commits still pending) first takes the kept nights,
 * `kept` oldest first, as their publisher would: a table never ends without a current snapshot.
 * Then the expiry. A root without tables (setting off, or published before them) is left as it is.
 */
export async function expireBeforePrune(
  storage: Storage,
  ids: readonly string[],
  kept: readonly Manifest[],
): Promise<TableExpiry[]> {
  if (ids.length === 0) return [];
  const gone = new Set(ids);
  let behind = false;
  for (const dataset of DATASETS) {
    const m = (await readTable(storage, dataset))?.metadata;
    const current = m?.snapshots.find((s) => s['snapshot-id'] === m['current-snapshot-id']);
    if (current !== undefined && gone.has(current.summary[SUMMARY_SNAPSHOT_ID] ?? '')) behind = true;
  }
  if (behind) for (const manifest of kept) await commitSnapshot(storage, manifest);
  return expireSnapshots(storage, ids);
}
