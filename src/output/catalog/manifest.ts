/**
 * The snapshot manifest: the one file a loader needs to trust a snapshot. Written last (after every
 * data file is complete and fsynced), then `_SUCCESS`; a snapshot without both is not published.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { InputError } from '../../errors.js';
import type { DatasetName, OutputFormat, PartStatus } from '../../types.js';
import { assertSnapshotId, manifestPath, SNAPSHOTS_DIR, successPath } from './paths.js';
import { isAbsent, retryRead } from '../storage/index.js';
import { inPublishOrder } from './publish-order.js';
import type { ColumnDef } from '../../datasets/index.js';

export const MANIFEST_VERSION = 1;

/** What a row of the `changes` dataset says (src/output/publish/changes.ts). */
export const CHANGE_KINDS = ['added', 'changed', 'removed'] as const;
export type ChangeKind = (typeof CHANGE_KINDS)[number];

export interface ChangesFile {
  path: string;
  source_dataset: DatasetName;
  rows: number;
  bytes: number;
  sha256: string;
  counts: Record<ChangeKind, number>;
}

/** The manifest's `changes` block. */
export interface ManifestChanges {
  /** The published snapshot compared against. */
  against: string;
  files: ChangesFile[];
  counts: Record<ChangeKind, number>;
}

export interface ManifestFile {
  /** Relative to the output root, `/`-separated. */
  path: string;
  dataset: DatasetName;
  format: OutputFormat;
  rows: number;
  bytes: number;
  sha256: string;
  /** Earliest and latest period_end in the file (datasets with period_end only; null when all null). */
  min_period_end?: string | null;
  max_period_end?: string | null;
  /**
   * The companies whose rows the file holds, in row order, with their rows' place in the file
   * (rows are ordered by requested company; a company may span files). What the next night
   * reuses the file by; absent in snapshots written before files were reused.
   */
  companies?: FileCompany[];
  /** A file reused whole from an earlier snapshot: the same bytes (sha256) as that file. */
  reused_from?: { snapshot_id: string; path: string };
}

/** Rows [first_row, first_row + rows) of a file belong to `ticker` (its part key). */
export interface FileCompany {
  ticker: string;
  first_row: number;
  rows: number;
}

export interface ManifestPart {
  dataset: DatasetName;
  ticker: string;
  status: PartStatus;
  rows: number;
  message?: string;
  /** series_catalog parts: fingerprint of the company's catalog, compared by the next night. */
  fingerprint?: string;
  /** `reused`: the rows were carried over from `reused_from` without a request. */
  reused?: boolean;
  reused_from?: string;
  /** Copy of the part's staged rows kept with the snapshot (`_snapshots/<id>/parts/…`), for reuse. */
  archive?: string;
  bytes?: number;
  sha256?: string;
}

export interface ManifestDataset {
  schema_version: number;
  /** True when the columns were inferred from the API's rows (series_catalog, dims_catalog). */
  schema_inferred: boolean;
  /** The columns of every file of the dataset in this snapshot, in file order. */
  columns: Pick<ColumnDef, 'name' | 'type' | 'role'>[];
  /** Partition folder relative to the root. */
  path: string;
  rows: number;
  files: number;
  bytes: number;
  /** Fields outside the schema seen in this snapshot (kept in `_extra`). */
  extra_fields: string[];
  parts: Record<PartStatus, number>;
}

export interface QuotaWaitSummary {
  waited: boolean;
  /** Total time spent waiting for a quota reset, when known. */
  total_ms: number | null;
  /** The waits as the pipeline recorded them (message, since, until, …). */
  waits: unknown[];
}

export interface Manifest {
  manifest_version: number;
  snapshot_id: string;
  snapshot_date: string;
  /** Always `published` in a manifest on disk (a snapshot without one is not published). */
  status: 'published';
  /** Every part is done or not_found (no failed or bad_request parts). */
  complete: boolean;
  published_at: string;
  formats: OutputFormat[];
  /** Where files live: `<dataset>/snapshot_date=<date>/snapshot_id=<id>/part-NNNNN.<ext>`. */
  layout: string;
  datasets: Partial<Record<DatasetName, ManifestDataset>>;
  files: ManifestFile[];
  parts: ManifestPart[];
  totals: {
    rows: number;
    files: number;
    bytes: number;
    requests: number | null;
    rate_limited_429: number | null;
    retries: number | null;
    started_at: string | null;
    finished_at: string;
    wall_time_ms: number | null;
  };
  quota_wait: QuotaWaitSummary;
  /** Anything a reader should know: type conflicts, values that did not fit and are kept in `_extra`. */
  warnings: string[];
  /** Columns this snapshot added to inferred schemas (series_catalog, dims_catalog). */
  schema_changes: { dataset: DatasetName; schema_version: number; added: string[] }[];
  /** Name and version of the writer. */
  writer: { name: string; version: string; engine: string };
  /** What an incremental night saved; absent in snapshots written before incremental nights. */
  incremental?: ManifestIncremental;
  /** The `changes` dataset against the previous published snapshot (src/output/publish/changes.ts); absent when none. */
  changes?: ManifestChanges;
  /**
   * Set when `changes` against a previous snapshot was asked for but not written: which snapshot,
   * and why (it is gone, or could not be read). Absent when `changes` is there or was not asked for.
   */
  changes_missing?: { against: string; reason: string };
}

export interface ManifestIncremental {
  /** The published snapshot parts were carried over from; null: everything fetched. */
  reused_from: string | null;
  /** Date of the last snapshot of this chain that fetched everything (the next full refresh counts from it). */
  full_refresh_date: string;
  reused_parts: number;
  fetched_parts: number;
}

export interface SnapshotInfo {
  snapshot_id: string;
  snapshot_date: string | null;
  published: boolean;
  published_at: string | null;
  /** Why a snapshot folder is not published (no manifest, no _SUCCESS). */
  reason?: string;
}

/** Whether the file exists; a stat that fails otherwise is retried, then thrown with its cause. */
async function exists(path: string): Promise<boolean> {
  try {
    await retryRead(path, () => stat(path));
    return true;
  } catch (err: unknown) {
    if (isAbsent(err)) return false;
    throw err;
  }
}

/** The manifest of a snapshot. Throws InputError naming the file when it is missing or invalid. */
export async function readManifest(root: string, snapshotId: string): Promise<Manifest> {
  assertSnapshotId(snapshotId);
  const path = manifestPath(root, snapshotId);
  let text: string;
  try {
    text = await retryRead(path, () => readFile(path, 'utf8'));
  } catch (err: unknown) {
    if (isAbsent(err)) {
      throw new InputError(`snapshot ${snapshotId} has no manifest at ${path}: it is not published`);
    }
    throw err;
  }
  return parseManifest(text, path, snapshotId);
}

/** Parses a manifest's text read from `where` (a path or URL, for the error). */
export function parseManifest(text: string, where: string, snapshotId: string): Manifest {
  let m: Manifest;
  try {
    m = JSON.parse(text) as Manifest;
  } catch (err: unknown) {
    throw new InputError(`${where}: not valid JSON (${(err as Error).message})`, { code: 'DATA_INVALID' });
  }
  if (m.manifest_version !== MANIFEST_VERSION || m.snapshot_id !== snapshotId || !Array.isArray(m.files)) {
    throw new InputError(
      `${where}: not a manifest of snapshot ${snapshotId} (version ${m.manifest_version})`,
      {
        code: 'DATA_INVALID',
      },
    );
  }
  return m;
}

/** Whether both the manifest and `_SUCCESS` exist. */
export async function isPublished(root: string, snapshotId: string): Promise<boolean> {
  return (await exists(manifestPath(root, snapshotId))) && (await exists(successPath(root, snapshotId)));
}

/** Every snapshot folder under `<root>/_snapshots`, oldest first in publish order (unpublished ones first). */
export async function listSnapshots(root: string): Promise<SnapshotInfo[]> {
  let names: string[];
  try {
    names = (await readdir(join(root, SNAPSHOTS_DIR), { withFileTypes: true }))
      .filter((d) => d.isDirectory())
      .map((d) => d.name);
  } catch (err: unknown) {
    if ((err as { code?: string }).code === 'ENOENT') return [];
    throw err;
  }
  const out: SnapshotInfo[] = [];
  for (const id of names) {
    const hasManifest = await exists(manifestPath(root, id));
    const hasSuccess = await exists(successPath(root, id));
    let date: string | null = null;
    let at: string | null = null;
    let invalid: string | undefined;
    if (hasManifest) {
      try {
        const m = await readManifest(root, id);
        date = m.snapshot_date;
        at = m.published_at;
      } catch (err: unknown) {
        // An invalid manifest is listed as not published, with why; a file that cannot be read stops the listing.
        if (!(err instanceof InputError)) throw err;
        invalid = err.message;
      }
    }
    const published = hasManifest && hasSuccess && at !== null;
    out.push({
      snapshot_id: id,
      snapshot_date: date,
      published,
      published_at: at,
      ...(published
        ? {}
        : {
            reason: !hasManifest
              ? 'no manifest.json'
              : !hasSuccess
                ? 'no _SUCCESS'
                : `invalid manifest${invalid !== undefined ? `: ${invalid}` : ''}`,
          }),
    });
  }
  return inPublishOrder(out, (s) => s);
}
