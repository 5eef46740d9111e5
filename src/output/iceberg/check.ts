/**
 * `verify`'s view of the tables: a published snapshot's Iceberg commit checked against its
 * manifest. The table must hold an Iceberg snapshot naming ours whose data files are exactly the
 * manifest's Parquet files of that dataset, with the same row counts and sizes.
 */
import { coerceError } from '../../errors.js';
import type { Manifest } from '../catalog/index.js';
import type { Storage } from '../storage/index.js';
import { snapshotOf } from './commit.js';
import { snapshotEntries } from './data-files.js';
import { keyOfUrl, readTable } from './metadata.js';

/**
 * One line per disagreement between the snapshot's manifest and its tables; none when they agree,
 * or when the root has no table for a dataset at all (tables turned off, or a root published
 * before them: `iceberg rebuild` writes them).
 */
export async function commitProblems(storage: Storage, manifest: Manifest): Promise<string[]> {
  if (!manifest.formats.includes('parquet')) return [];
  const problems: string[] = [];
  for (const dataset of Object.keys(manifest.datasets).sort()) {
    try {
      problems.push(...(await datasetProblems(storage, manifest, dataset)));
    } catch (err: unknown) {
      problems.push(`${dataset}: its Iceberg table cannot be read: ${coerceError(err).message}`);
    }
  }
  return problems;
}

async function datasetProblems(storage: Storage, manifest: Manifest, dataset: string): Promise<string[]> {
  const table = await readTable(storage, dataset);
  if (table === null) return [];
  const id = manifest.snapshot_id;
  const snapshot = snapshotOf(table.metadata, id);
  if (snapshot === undefined)
    return [
      `${dataset}: the Iceberg table (${storage.url(dataset)}, v${table.version}) has no snapshot of ${id}: its commit is pending (status says why) or was lost; \`filings-export iceberg rebuild\` writes it`,
    ];
  const listed = new Map<string, { rows: number; bytes: number }>();
  for (const e of await snapshotEntries(storage, snapshot))
    listed.set(keyOfUrl(storage, e.data_file.file_path), {
      rows: Number(e.data_file.record_count),
      bytes: Number(e.data_file.file_size_in_bytes),
    });
  const problems: string[] = [];
  const where = `${dataset}: the Iceberg snapshot of ${id}`;
  for (const f of manifest.files.filter((x) => x.dataset === dataset && x.format === 'parquet')) {
    const got = listed.get(f.path);
    listed.delete(f.path);
    if (got === undefined) problems.push(`${where} lacks ${f.path}, which the manifest lists`);
    else if (got.rows !== f.rows || got.bytes !== f.bytes)
      problems.push(
        `${where} says ${f.path} holds ${got.rows} rows in ${got.bytes} bytes; the manifest says ${f.rows} rows in ${f.bytes} bytes`,
      );
  }
  for (const path of listed.keys()) problems.push(`${where} lists ${path}, which the manifest does not`);
  return problems;
}
