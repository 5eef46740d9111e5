/**
 * One published snapshot → one Iceberg snapshot per dataset: operation `overwrite`, replacing the
 * whole table with exactly that snapshot's Parquet files as its manifest lists them. Idempotent (a
 * snapshot already in the table is not committed twice) and in publish order (a snapshot older
 * than the table's newest is not committed on top of it).
 */
import { coerceError, OutputError } from '../../errors.js';
import { randomUUID } from 'node:crypto';
import type { DatasetName } from '../../types.js';
import { publishedAfter, type Manifest, type ManifestDataset } from '../catalog/index.js';
import type { Storage } from '../storage/index.js';
import type { ManifestEntry } from './avro.js';
import { currentEntries, entriesFor, icebergSnapshotId, writeSnapshotFiles } from './data-files.js';
import {
  nextMetadataLog,
  PREVIOUS_VERSIONS_MAX,
  readTable,
  SUMMARY_PUBLISHED_AT,
  SUMMARY_SNAPSHOT_DATE,
  SUMMARY_SNAPSHOT_ID,
  type IcebergSnapshot,
  type TableMetadata,
  type TableVersion,
  writeTable,
} from './metadata.js';
import { idsDisagreeing, nameMapping, schemaFor, type IcebergSchema } from './schema.js';

/** What committing a snapshot did to one dataset's table. */
export interface TableCommit {
  dataset: DatasetName;
  /** `committed`: a new version; `present`: the snapshot was in the table already; `older`: the table holds a newer one. */
  outcome: 'committed' | 'present' | 'older';
  /** The table's version after the commit (`vN.metadata.json`). */
  version: number;
  icebergSnapshotId: number;
}

/** The Iceberg snapshot that holds our snapshot `id`, if the table has it. */
export function snapshotOf(metadata: TableMetadata, id: string): IcebergSnapshot | undefined {
  return metadata.snapshots.find((s) => s.summary[SUMMARY_SNAPSHOT_ID] === id);
}

/**
 * Commits a published snapshot to every dataset table it has: what the publisher calls once after
 * `_SUCCESS`, and `iceberg rebuild` for every retained snapshot, oldest first.
 */
export async function commitSnapshot(storage: Storage, manifest: Manifest): Promise<TableCommit[]> {
  const datasets = Object.entries(manifest.datasets) as [DatasetName, ManifestDataset][];
  // Tables share no file, so they commit at once: a commit is mostly waiting on small durable
  // writes. Every table settles before a failure is thrown, so no write outlives the call.
  const settled = await Promise.allSettled(
    datasets
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([dataset, ds]) => commitDataset(storage, manifest, dataset, ds)),
  );
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed !== undefined) throw coerceError(failed.reason);
  return settled.map((r) => (r as PromiseFulfilledResult<TableCommit>).value);
}

async function commitDataset(
  storage: Storage,
  manifest: Manifest,
  dataset: DatasetName,
  ds: ManifestDataset,
): Promise<TableCommit> {
  const previous = await readTable(storage, dataset);
  const id = icebergSnapshotId(manifest.snapshot_id);
  const prev = previous?.metadata;
  const base = { dataset, version: previous?.version ?? 0 };
  if (prev !== undefined && snapshotOf(prev, manifest.snapshot_id) !== undefined)
    return { ...base, outcome: 'present', icebergSnapshotId: id };
  const current = prev?.snapshots.find((s) => s['snapshot-id'] === prev['current-snapshot-id']);
  if (current !== undefined && publishedAfter(stampOf(current), manifest))
    return { ...base, outcome: 'older', icebergSnapshotId: current['snapshot-id'] };

  const sequence = (prev?.['last-sequence-number'] ?? 0) + 1;
  const { schema, lastColumnId } = schemaFor(
    ds.columns,
    prev?.schemas ?? [],
    prev?.['current-schema-id'] ?? -1,
  );
  const disagreeing = idsDisagreeing(schema, ds.columns);
  if (disagreeing.length > 0)
    throw new OutputError(
      'OUTPUT_FAILED',
      `the ${dataset} table gives ${disagreeing.join(', ')} other field ids than ${manifest.snapshot_id}'s Parquet files carry (data columns changed other than at their end): not committed, so that no reader takes one column for another (docs/iceberg.md, "Field ids")`,
    );
  const before = await currentEntries(storage, prev);
  const files = manifest.files.filter((f) => f.dataset === dataset && f.format === 'parquet');
  const entries = entriesFor(storage, files, before, id, sequence);
  const written = await writeSnapshotFiles(storage, dataset, schema, entries, {
    id,
    parent: prev?.['current-snapshot-id'],
    sequence,
  });
  const snapshot: IcebergSnapshot = {
    'snapshot-id': id,
    ...(prev !== undefined ? { 'parent-snapshot-id': prev['current-snapshot-id'] } : {}),
    'sequence-number': sequence,
    'timestamp-ms': Math.max(Date.parse(manifest.published_at), prev?.['last-updated-ms'] ?? 0),
    'manifest-list': written.manifestListUrl,
    summary: { ...summaryOf(manifest, entries, before), ...totals(entries) },
    'schema-id': schema['schema-id'],
  };
  const metadata = nextMetadata(storage, dataset, previous, { schema, lastColumnId, snapshot });
  const next = await writeTable(storage, dataset, previous, metadata);
  return { dataset, outcome: 'committed', version: next.version, icebergSnapshotId: id };
}

const stampOf = (s: IcebergSnapshot): { snapshot_id: string; published_at: string | undefined } => ({
  snapshot_id: s.summary[SUMMARY_SNAPSHOT_ID] ?? '',
  published_at: s.summary[SUMMARY_PUBLISHED_AT],
});

const sum = (entries: readonly ManifestEntry[], f: (e: ManifestEntry) => number | bigint): number =>
  entries.reduce((n, e) => n + Number(f(e)), 0);

function summaryOf(
  manifest: Manifest,
  entries: readonly ManifestEntry[],
  before: readonly ManifestEntry[],
): IcebergSnapshot['summary'] {
  const now = new Set(entries.map((e) => e.data_file.file_path));
  const added = entries.filter((e) => e.status === 1);
  const removed = before.filter((e) => !now.has(e.data_file.file_path));
  return {
    operation: 'overwrite',
    [SUMMARY_SNAPSHOT_ID]: manifest.snapshot_id,
    [SUMMARY_SNAPSHOT_DATE]: manifest.snapshot_date,
    [SUMMARY_PUBLISHED_AT]: manifest.published_at,
    'added-data-files': String(added.length),
    'deleted-data-files': String(removed.length),
    'added-records': String(sum(added, (e) => e.data_file.record_count)),
    'deleted-records': String(sum(removed, (e) => e.data_file.record_count)),
    'added-files-size': String(sum(added, (e) => e.data_file.file_size_in_bytes)),
    'removed-files-size': String(sum(removed, (e) => e.data_file.file_size_in_bytes)),
  };
}

function totals(entries: readonly ManifestEntry[]): Record<string, string> {
  return {
    'total-data-files': String(entries.length),
    'total-records': String(sum(entries, (e) => e.data_file.record_count)),
    'total-files-size': String(sum(entries, (e) => e.data_file.file_size_in_bytes)),
    'total-delete-files': '0',
    'total-position-deletes': '0',
    'total-equality-deletes': '0',
  };
}

/** The table's next metadata: the snapshot made current, the schema added when new. */
function nextMetadata(
  storage: Storage,
  dataset: string,
  previous: TableVersion | null,
  c: { schema: IcebergSchema; lastColumnId: number; snapshot: IcebergSnapshot },
): TableMetadata {
  const prev = previous?.metadata;
  const schemas = prev?.schemas ?? [];
  const id = c.snapshot['snapshot-id'];
  const at = c.snapshot['timestamp-ms'];
  return {
    'format-version': 2,
    'table-uuid': prev?.['table-uuid'] ?? randomUUID(),
    location: storage.url(dataset),
    'last-sequence-number': c.snapshot['sequence-number'],
    'last-updated-ms': at,
    'last-column-id': Math.max(c.lastColumnId, prev?.['last-column-id'] ?? 0),
    'current-schema-id': c.schema['schema-id'],
    schemas: schemas.includes(c.schema) ? schemas : [...schemas, c.schema],
    'default-spec-id': 0,
    'partition-specs': [{ 'spec-id': 0, fields: [] }],
    'last-partition-id': 999,
    'default-sort-order-id': 0,
    'sort-orders': [{ 'order-id': 0, fields: [] }],
    properties: {
      'write.format.default': 'parquet',
      'write.metadata.previous-versions-max': String(PREVIOUS_VERSIONS_MAX),
      'write.metadata.delete-after-commit.enabled': 'true',
      'schema.name-mapping.default': nameMapping(c.schema),
    },
    'current-snapshot-id': id,
    refs: { main: { 'snapshot-id': id, type: 'branch' } },
    snapshots: [...(prev?.snapshots ?? []), c.snapshot],
    'snapshot-log': [...(prev?.['snapshot-log'] ?? []), { 'timestamp-ms': at, 'snapshot-id': id }],
    'metadata-log': nextMetadataLog(storage, dataset, previous),
  };
}
