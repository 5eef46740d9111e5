/**
 * The on-disk layout, in one place (docs/output.md describes it for users):
 *
 *   <root>/_staging/<snapshot_id>/…                                    staged parts (src/output/staged-part/layout.ts)
 *   <root>/_staging/<snapshot_id>/_build/<dataset>/part-NNNNN.*       files being built
 *   <root>/<dataset>/snapshot_date=YYYY-MM-DD/snapshot_id=<id>/part-NNNNN.parquet|.ndjson.gz
 *   <root>/_snapshots/<snapshot_id>/manifest.json, _SUCCESS           written last
 *   <root>/_schemas/<dataset>.json                                     schema registry
 */
import { join } from 'node:path';
import { InputError } from '../../errors.js';
import { isDatasetName, type DatasetName, type OutputFormat } from '../../types.js';

/** Safe in a path, a Hive partition value and a SQL literal without escaping. */
const SNAPSHOT_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

export function assertSnapshotId(id: unknown): asserts id is string {
  if (typeof id !== 'string' || !SNAPSHOT_ID.test(id) || id.includes('..')) {
    throw new InputError(
      `snapshot id ${JSON.stringify(id)} is invalid: use 1-128 characters A-Z a-z 0-9 . _ - starting with a letter or digit (for example nightly-2026-11-21)`,
    );
  }
}

export function assertSnapshotDate(date: unknown): asserts date is string {
  if (typeof date !== 'string' || !DATE.test(date) || Number.isNaN(Date.parse(`${date}T00:00:00Z`))) {
    throw new InputError(`snapshot date ${JSON.stringify(date)} is invalid: expected YYYY-MM-DD`);
  }
  if (new Date(`${date}T00:00:00Z`).toISOString().slice(0, 10) !== date) {
    throw new InputError(`snapshot date ${JSON.stringify(date)} is not a calendar date`);
  }
}

export function assertDataset(dataset: unknown): asserts dataset is DatasetName {
  if (!isDatasetName(dataset)) throw new InputError(`unknown dataset ${JSON.stringify(dataset)}`);
}

export const STAGING_DIR = '_staging';
export const SNAPSHOTS_DIR = '_snapshots';
export const SCHEMAS_DIR = '_schemas';
export const MANIFEST_FILE = 'manifest.json';
export const SUCCESS_FILE = '_SUCCESS';

export function stagingSnapshotDir(root: string, snapshotId: string): string {
  return join(root, STAGING_DIR, snapshotId);
}

export function buildDir(root: string, snapshotId: string, dataset: DatasetName): string {
  return join(root, STAGING_DIR, snapshotId, '_build', dataset);
}

/** Partition folder of one dataset of one snapshot, relative to the root. */
export function partitionRelDir(dataset: DatasetName, snapshotDate: string, snapshotId: string): string {
  return join(dataset, `snapshot_date=${snapshotDate}`, `snapshot_id=${snapshotId}`);
}

export function extensionOf(format: OutputFormat): string {
  return format === 'parquet' ? '.parquet' : '.ndjson.gz';
}

export function dataFileName(index: number, format: OutputFormat): string {
  return `part-${String(index).padStart(5, '0')}${extensionOf(format)}`;
}

export function snapshotDir(root: string, snapshotId: string): string {
  return join(root, SNAPSHOTS_DIR, snapshotId);
}

export function manifestPath(root: string, snapshotId: string): string {
  return join(snapshotDir(root, snapshotId), MANIFEST_FILE);
}

export function successPath(root: string, snapshotId: string): string {
  return join(snapshotDir(root, snapshotId), SUCCESS_FILE);
}

export function schemaRegistryPath(root: string, dataset: DatasetName): string {
  return join(root, SCHEMAS_DIR, `${dataset}.json`);
}

/** Relative paths in the manifest use `/` whatever the platform. */
export function toPosix(rel: string): string {
  return rel.split('\\').join('/');
}
