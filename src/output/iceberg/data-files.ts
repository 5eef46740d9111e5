/**
 * The data files of a table version: reading the entries of its current snapshot back from the
 * Avro manifests, and writing a new snapshot's manifest and manifest list. A file the previous
 * version holds stays as it was (EXISTING, with the snapshot and sequence numbers that added it);
 * a file new to the table is ADDED by this snapshot. Files are referenced where they are.
 */
import { createHash } from 'node:crypto';
import type { ManifestFile } from '../catalog/index.js';
import type { Storage } from '../storage/index.js';
import {
  decodeAvro,
  encodeAvro,
  MANIFEST_ENTRY_SCHEMA,
  MANIFEST_FILE_SCHEMA,
  type ManifestEntry,
  type ManifestFileRecord,
} from './avro.js';
import { keyOfUrl, metadataKey, type IcebergSnapshot, type TableMetadata } from './metadata.js';
import type { IcebergSchema } from './schema.js';

/** A positive Iceberg snapshot id derived from ours: a re-run writes the same one, and JSON keeps it exact. */
export function icebergSnapshotId(snapshotId: string): number {
  const h = createHash('sha256').update(snapshotId).digest();
  return Number(h.readBigUInt64BE(0) & BigInt(Number.MAX_SAFE_INTEGER)) || 1;
}

/** The entries of the table's current snapshot (none for a new table or an empty snapshot). */
export async function currentEntries(
  storage: Storage,
  metadata: TableMetadata | undefined,
): Promise<ManifestEntry[]> {
  const current = metadata?.snapshots.find((s) => s['snapshot-id'] === metadata['current-snapshot-id']);
  return current === undefined ? [] : snapshotEntries(storage, current);
}

/** The live (not DELETED) entries of one snapshot, read from its manifest list and manifests. */
export async function snapshotEntries(storage: Storage, snapshot: IcebergSnapshot): Promise<ManifestEntry[]> {
  const list = await decodeAvro<ManifestFileRecord>(
    await storage.getStream(keyOfUrl(storage, snapshot['manifest-list'])),
  );
  const entries: ManifestEntry[] = [];
  for (const m of list.records) {
    const { records } = await decodeAvro<ManifestEntry>(
      await storage.getStream(keyOfUrl(storage, m.manifest_path)),
    );
    entries.push(
      ...records.filter((e) => e.status !== 2).map((e) => ({ ...e, data_file: { ...e.data_file } })),
    );
  }
  return entries;
}

/** This snapshot's entries: the previous version's where the file is the same, ADDED otherwise. */
export function entriesFor(
  storage: Storage,
  files: readonly ManifestFile[],
  previous: readonly ManifestEntry[],
  snapshotId: number,
  sequence: number,
): ManifestEntry[] {
  const before = new Map(previous.map((e) => [e.data_file.file_path, e]));
  return files.map((f): ManifestEntry => {
    const path = storage.url(f.path);
    const kept = before.get(path);
    if (kept !== undefined && Number(kept.data_file.file_size_in_bytes) === f.bytes)
      return { ...kept, status: 0 };
    return {
      status: 1,
      snapshot_id: snapshotId,
      sequence_number: sequence,
      file_sequence_number: sequence,
      data_file: {
        content: 0,
        file_path: path,
        file_format: 'PARQUET',
        partition: {},
        record_count: f.rows,
        file_size_in_bytes: f.bytes,
        sort_order_id: null,
      },
    };
  });
}

export interface WrittenSnapshotFiles {
  manifestListUrl: string;
  /** Keys of the Avro files written, for expiry. */
  keys: string[];
}

/** Writes the manifest (when there are files) and the manifest list of one snapshot. */
export async function writeSnapshotFiles(
  storage: Storage,
  dataset: string,
  schema: IcebergSchema,
  entries: readonly ManifestEntry[],
  snapshot: { id: number; parent: number | undefined; sequence: number },
): Promise<WrittenSnapshotFiles> {
  const manifests: ManifestFileRecord[] = [];
  const keys: string[] = [];
  if (entries.length > 0) {
    const key = metadataKey(dataset, `${snapshot.id}-m0.avro`);
    const bytes = await encodeAvro(MANIFEST_ENTRY_SCHEMA, entries, {
      schema: JSON.stringify(schema),
      'schema-id': String(schema['schema-id']),
      'partition-spec': '[]',
      'partition-spec-id': '0',
      'format-version': '2',
      content: 'data',
    });
    await storage.putBytes(key, bytes);
    keys.push(key);
    manifests.push(manifestRecord(storage.url(key), bytes.byteLength, entries, snapshot));
  }
  const listKey = metadataKey(dataset, `snap-${snapshot.id}.avro`);
  const list = await encodeAvro(MANIFEST_FILE_SCHEMA, manifests, {
    'snapshot-id': String(snapshot.id),
    'parent-snapshot-id': snapshot.parent === undefined ? 'null' : String(snapshot.parent),
    'sequence-number': String(snapshot.sequence),
    'format-version': '2',
  });
  await storage.putBytes(listKey, list);
  keys.push(listKey);
  return { manifestListUrl: storage.url(listKey), keys };
}

function manifestRecord(
  path: string,
  length: number,
  entries: readonly ManifestEntry[],
  snapshot: { id: number; sequence: number },
): ManifestFileRecord {
  const count = (status: 0 | 1): { files: number; rows: number } => {
    const of = entries.filter((e) => e.status === status);
    return { files: of.length, rows: of.reduce((n, e) => n + Number(e.data_file.record_count), 0) };
  };
  const added = count(1);
  const existing = count(0);
  return {
    manifest_path: path,
    manifest_length: length,
    partition_spec_id: 0,
    content: 0,
    sequence_number: snapshot.sequence,
    min_sequence_number: entries.reduce(
      (m, e) => Math.min(m, Number(e.sequence_number ?? snapshot.sequence)),
      snapshot.sequence,
    ),
    added_snapshot_id: snapshot.id,
    added_files_count: added.files,
    existing_files_count: existing.files,
    deleted_files_count: 0,
    added_rows_count: added.rows,
    existing_rows_count: existing.rows,
    deleted_rows_count: 0,
  };
}
