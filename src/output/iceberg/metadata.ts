/**
 * Table metadata in the file-system ("Hadoop") layout: `metadata/vN.metadata.json` and
 * `metadata/version-hint.text` holding N, written through the storage port. A new version is a new
 * file (never rewritten in place), and the hint moves last, so a reader that follows the hint always
 * opens a complete version; old versions beyond `write.metadata.previous-versions-max` are deleted.
 */
import { InputError, StorageError } from '../../errors.js';
import { joinKey, type Storage } from '../storage/index.js';
import { readStoredText } from '../catalog/index.js';
import type { IcebergSchema } from './schema.js';

export const METADATA_DIR = 'metadata';
export const VERSION_HINT = 'version-hint.text';
/** Metadata versions kept besides the current one (the spec's property, written into the table). */
export const PREVIOUS_VERSIONS_MAX = 20;
/** Summary keys naming our snapshot in an Iceberg snapshot. */
export const SUMMARY_SNAPSHOT_ID = 'filings_export.snapshot_id';
export const SUMMARY_SNAPSHOT_DATE = 'filings_export.snapshot_date';
export const SUMMARY_PUBLISHED_AT = 'filings_export.published_at';

export interface IcebergSnapshot {
  'snapshot-id': number;
  'parent-snapshot-id'?: number;
  'sequence-number': number;
  'timestamp-ms': number;
  'manifest-list': string;
  summary: Record<string, string> & { operation: 'overwrite' };
  'schema-id': number;
}

export interface TableMetadata {
  'format-version': 2;
  'table-uuid': string;
  location: string;
  'last-sequence-number': number;
  'last-updated-ms': number;
  'last-column-id': number;
  'current-schema-id': number;
  schemas: IcebergSchema[];
  'default-spec-id': 0;
  'partition-specs': [{ 'spec-id': 0; fields: [] }];
  'last-partition-id': 999;
  'default-sort-order-id': 0;
  'sort-orders': [{ 'order-id': 0; fields: [] }];
  properties: Record<string, string>;
  'current-snapshot-id': number;
  refs: Record<string, { 'snapshot-id': number; type: 'branch' }>;
  snapshots: IcebergSnapshot[];
  'snapshot-log': { 'timestamp-ms': number; 'snapshot-id': number }[];
  'metadata-log': { 'timestamp-ms': number; 'metadata-file': string }[];
}

/** A table's newest version as the hint names it. */
export interface TableVersion {
  version: number;
  metadata: TableMetadata;
}

export const metadataKey = (dataset: string, name: string): string => joinKey(dataset, METADATA_DIR, name);
export const versionFile = (version: number): string => `v${version}.metadata.json`;

/** The table's current version, or null when the dataset has no table yet (no version hint). */
export async function readTable(storage: Storage, dataset: string): Promise<TableVersion | null> {
  const hintKey = metadataKey(dataset, VERSION_HINT);
  if ((await storage.head(hintKey)) === null) return null;
  const hint = (await readStoredText(storage, hintKey)).trim();
  const version = Number(hint);
  if (!Number.isSafeInteger(version) || version < 1)
    throw new InputError(
      `${storage.url(hintKey)} holds ${JSON.stringify(hint)}, not a version number: run \`filings-export iceberg rebuild\``,
      { code: 'DATA_INVALID' },
    );
  const key = metadataKey(dataset, versionFile(version));
  let text: string;
  try {
    text = await readStoredText(storage, key);
  } catch (err: unknown) {
    throw new InputError(
      `${storage.url(hintKey)} names version ${version} but ${storage.url(key)} cannot be read: run \`filings-export iceberg rebuild\``,
      { code: 'DATA_INVALID', cause: err },
    );
  }
  return { version, metadata: JSON.parse(text) as TableMetadata };
}

/**
 * Writes `metadata` as version `previous + 1`, then moves the hint to it, then deletes the
 * versions that fell out of the metadata log. Refuses when that version exists already: another
 * writer committed first (an exclusive create locally, `If-None-Match: *` on a bucket; docs/iceberg.md).
 */
export async function writeTable(
  storage: Storage,
  dataset: string,
  previous: TableVersion | null,
  metadata: TableMetadata,
): Promise<TableVersion> {
  const version = (previous?.version ?? 0) + 1;
  const key = metadataKey(dataset, versionFile(version));
  // Retryable: the retry reads the newer version and commits on top of it (or finds itself there).
  const taken = (cause?: unknown): StorageError =>
    new StorageError(
      'STORAGE_UNAVAILABLE',
      `${storage.url(key)} exists already: another writer committed to the ${dataset} table; retry the commit`,
      true,
      { cause },
    );
  // The head refuses early on every store; the conditional write closes the race where the store has one.
  const existing = (await storage.head(key)) === null ? null : await ownUnhinted(storage, key, metadata);
  if (existing === undefined) throw taken();
  if (existing === null)
    await storage
      .putBytes(key, `${JSON.stringify(metadata, null, 2)}\n`, { ifAbsent: true })
      .catch(async (err: unknown) => {
        // Refused because the version is there now: another writer's, since this write did not land.
        throw (await storage.head(key)) !== null ? taken(err) : err;
      });
  else metadata = existing;
  await storage.putBytes(metadataKey(dataset, VERSION_HINT), `${version}\n`);
  const kept = new Set([key, ...metadata['metadata-log'].map((m) => keyOfUrl(storage, m['metadata-file']))]);
  const stale = Array.from({ length: version - 1 }, (_, i) => metadataKey(dataset, versionFile(i + 1)));
  await storage.delete(stale.filter((k) => !kept.has(k)));
  return { version, metadata };
}

/**
 * The version at `key` when it is this very commit, written before a crash cut it short of moving
 * the hint (its current snapshot is ours: snapshot ids derive from our snapshot's id); undefined
 * when it is another writer's. Readers that look past the hint (Spark's HadoopCatalog) already see
 * it, so the retry adopts it and moves the hint instead of failing for ever.
 */
async function ownUnhinted(
  storage: Storage,
  key: string,
  metadata: TableMetadata,
): Promise<TableMetadata | undefined> {
  const there = JSON.parse(await readStoredText(storage, key)) as TableMetadata;
  return there['current-snapshot-id'] === metadata['current-snapshot-id'] ? there : undefined;
}

/** The storage key of a URL this storage gave (`storage.url(key)`). */
export function keyOfUrl(storage: Storage, url: string): string {
  const base = storage.url('x').slice(0, -1);
  return url.startsWith(base) ? url.slice(base.length).split(/[\\/]/).join('/') : url;
}

/** The metadata log after a commit: the previous version appended, the oldest dropped past the max. */
export function nextMetadataLog(
  storage: Storage,
  dataset: string,
  previous: TableVersion | null,
): TableMetadata['metadata-log'] {
  if (previous === null) return [];
  const log = [
    ...previous.metadata['metadata-log'],
    {
      'timestamp-ms': previous.metadata['last-updated-ms'],
      'metadata-file': storage.url(metadataKey(dataset, versionFile(previous.version))),
    },
  ];
  return log.slice(-PREVIOUS_VERSIONS_MAX);
}
