/**
 * Expiring snapshots before prune deletes their files: a new table version without them, and no
 * older version left that a reader could open and that still names them. Then their Avro files go.
 */
import { InputError } from '../../errors.js';
import { DATASETS, type DatasetName } from '../../types.js';
import type { Storage } from '../storage/index.js';
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
        `the ${dataset} table's current snapshot is ${m.snapshots.find((s) => s['snapshot-id'] === m['current-snapshot-id'])?.summary[SUMMARY_SNAPSHOT_ID]}: it cannot be expired`,
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
