/**
 * Manifests and manifest lists as Avro object container files (avsc), with the Iceberg spec's
 * (format v2) Avro schemas: every field carries its `field-id`, and the header the metadata the
 * spec lists. Unpartitioned tables: a data file's partition is the empty record `r102`.
 */
import { Readable } from 'node:stream';
import avro from 'avsc';
import type { EncoderOptions, Schema } from 'avsc';

const optional = (type: unknown): unknown[] => ['null', type];

/** data_file (field 2 of manifest_entry): the fields a reader needs for a Parquet data file. */
const DATA_FILE = {
  type: 'record',
  name: 'r2',
  fields: [
    { name: 'content', type: 'int', 'field-id': 134, doc: 'Contents of the file: 0=data' },
    { name: 'file_path', type: 'string', 'field-id': 100, doc: 'Location URI with FS scheme' },
    { name: 'file_format', type: 'string', 'field-id': 101, doc: 'File format name: avro, orc, or parquet' },
    { name: 'partition', type: { type: 'record', name: 'r102', fields: [] }, 'field-id': 102 },
    { name: 'record_count', type: 'long', 'field-id': 103, doc: 'Number of records in the file' },
    { name: 'file_size_in_bytes', type: 'long', 'field-id': 104, doc: 'Total file size in bytes' },
    { name: 'sort_order_id', type: optional('int'), default: null, 'field-id': 140 },
  ],
};

/** manifest_entry: one data file and the snapshot that added it. */
export const MANIFEST_ENTRY_SCHEMA = {
  type: 'record',
  name: 'manifest_entry',
  fields: [
    { name: 'status', type: 'int', 'field-id': 0 },
    { name: 'snapshot_id', type: optional('long'), default: null, 'field-id': 1 },
    { name: 'sequence_number', type: optional('long'), default: null, 'field-id': 3 },
    { name: 'file_sequence_number', type: optional('long'), default: null, 'field-id': 4 },
    { name: 'data_file', type: DATA_FILE, 'field-id': 2 },
  ],
} as const;

/** manifest_file: one manifest of a snapshot's manifest list. */
export const MANIFEST_FILE_SCHEMA = {
  type: 'record',
  name: 'manifest_file',
  fields: [
    { name: 'manifest_path', type: 'string', 'field-id': 500 },
    { name: 'manifest_length', type: 'long', 'field-id': 501 },
    { name: 'partition_spec_id', type: 'int', 'field-id': 502 },
    { name: 'content', type: 'int', 'field-id': 517 },
    { name: 'sequence_number', type: 'long', 'field-id': 515 },
    { name: 'min_sequence_number', type: 'long', 'field-id': 516 },
    { name: 'added_snapshot_id', type: 'long', 'field-id': 503 },
    { name: 'added_files_count', type: 'int', 'field-id': 504 },
    { name: 'existing_files_count', type: 'int', 'field-id': 505 },
    { name: 'deleted_files_count', type: 'int', 'field-id': 506 },
    { name: 'added_rows_count', type: 'long', 'field-id': 512 },
    { name: 'existing_rows_count', type: 'long', 'field-id': 513 },
    { name: 'deleted_rows_count', type: 'long', 'field-id': 514 },
  ],
} as const;

/** Status of a manifest entry (spec: 0 existing, 1 added, 2 deleted). */
export type EntryStatus = 0 | 1 | 2;

export interface ManifestEntry {
  status: EntryStatus;
  snapshot_id: number | null;
  sequence_number: number | null;
  file_sequence_number: number | null;
  data_file: {
    content: 0;
    file_path: string;
    file_format: 'PARQUET';
    partition: Record<string, never>;
    record_count: number;
    file_size_in_bytes: number;
    sort_order_id: number | null;
  };
}

export interface ManifestFileRecord {
  manifest_path: string;
  manifest_length: number;
  partition_spec_id: number;
  content: 0;
  sequence_number: number;
  min_sequence_number: number;
  added_snapshot_id: number;
  added_files_count: number;
  existing_files_count: number;
  deleted_files_count: number;
  added_rows_count: number;
  existing_rows_count: number;
  deleted_rows_count: number;
}

/** An Avro object container file of `records` with `metadata` in its header, in memory. */
export async function encodeAvro(
  schema: object,
  records: readonly object[],
  metadata: Record<string, string>,
): Promise<Buffer> {
  // avsc takes header metadata (`metadata`) that its type declarations leave out.
  const options = {
    codec: 'deflate',
    metadata: Object.fromEntries(Object.entries(metadata).map(([k, v]) => [k, Buffer.from(v)])),
  } as Partial<EncoderOptions>;
  const encoder = new avro.streams.BlockEncoder(schema as Schema, options);
  const chunks: Buffer[] = [];
  const done = new Promise<void>((resolve, reject) => {
    encoder.on('data', (c: Buffer) => chunks.push(c));
    encoder.on('end', resolve);
    encoder.on('error', reject);
  });
  for (const r of records) encoder.write(r);
  encoder.end();
  await done;
  return Buffer.concat(chunks);
}

/** The records and header metadata of an Avro object container file. */
export async function decodeAvro<T>(
  stream: NodeJS.ReadableStream,
): Promise<{ records: T[]; metadata: Record<string, string> }> {
  const decoder = new avro.streams.BlockDecoder();
  const records: T[] = [];
  const metadata: Record<string, string> = {};
  const done = new Promise<void>((resolve, reject) => {
    decoder.on('metadata', (_type: unknown, _codec: unknown, header: { meta: Record<string, Buffer> }) => {
      for (const [k, v] of Object.entries(header.meta)) metadata[k] = v.toString('utf8');
    });
    decoder.on('data', (r: T) => records.push(r));
    decoder.on('end', resolve);
    decoder.on('error', reject);
  });
  Readable.from(stream as AsyncIterable<Buffer>).pipe(decoder);
  await done;
  return { records, metadata };
}
