/**
 * Publishes a snapshot: combines the staged parts of every dataset into sized, typed files in the
 * Hive layout, then writes the manifest (last, after every file is fsynced) and `_SUCCESS`.
 *
 * Idempotent: a published snapshot is returned as it is; an unpublished one (for example after a
 * crash between the files and the manifest) is rebuilt from its staged parts, which stay until the
 * snapshot is published. Publishing one snapshot from two processes at once is not supported: the
 * pipeline's parent job is its single publisher.
 */
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import { coerceError, InputError, OutputError, StorageError } from '../../errors.js';
import { silentLogger, type Logger } from '../../log.js';
import { packagePath } from '../../package-root.js';
import {
  DATASETS,
  OUTPUT_FORMATS,
  systemClock,
  type Clock,
  type DatasetName,
  type OutputFormat,
  type PartPointer,
  type PartStatus,
} from '../../types.js';
import { writeChanges } from './changes.js';
import {
  writeDatasetFiles,
  listSegments,
  type SegmentFile,
  openDuck,
  type DuckDbOptions,
  type DuckSession,
  resolveSchema,
} from '../convert/index.js';
import {
  DEFAULT_ROW_GROUP_ROWS,
  mergeFieldKinds,
  kindsToNames,
  checkStagedPart,
  type CheckedPart,
} from '../staging/index.js';
import { fsyncDir, writeFileAtomic, LocalStorage, isAbsent, retryRead } from '../storage/index.js';
import {
  isPublished,
  MANIFEST_VERSION,
  readManifest,
  type Manifest,
  type ManifestChanges,
  type ManifestDataset,
  type ManifestFile,
  type ManifestPart,
  type QuotaWaitSummary,
  assertDataset,
  assertSnapshotDate,
  assertSnapshotId,
  buildDir,
  fieldsSidecarPath,
  manifestPath,
  partitionRelDir,
  snapshotDir,
  SNAPSHOTS_DIR,
  stagingSnapshotDir,
  successPath,
  toPosix,
} from '../catalog/index.js';
import type { DatasetSchema } from '../../datasets/index.js';

/** What the export spent and went through; every field optional (unknown ones are recorded as null). */
export interface SnapshotStats {
  /** API requests sent for the snapshot (all attempts). */
  requests?: number;
  /** 429 responses received. */
  rateLimited429?: number;
  /** Attempts beyond the first, over all parts. */
  retries?: number;
  startedAt?: string | number | Date;
  /** @defaultValue the publish time */
  finishedAt?: string | number | Date;
  /** Quota waits: a summary `{ ms?, … }` or the pipeline's list of waits `{ since, until, message }`. */
  waitedForQuota?: { ms?: number; [k: string]: unknown } | boolean;
  waits?: unknown[];
}

export interface PublishOptions {
  root: string;
  snapshotId: string;
  /** YYYY-MM-DD: the Hive partition `snapshot_date`. */
  snapshotDate: string;
  formats: OutputFormat[];
  /** Every part of the snapshot, whatever its status. */
  parts: PartPointer[];
  stats?: SnapshotStats;
  /** Target size of each output file (Parquet when written, else NDJSON). @defaultValue 128 MiB */
  targetFileBytes?: number;
  /**
   * Parquet row-group size in rows. The writer holds one row group in memory (about 1.8 KB per
   * facts row while converting), so this bounds publishing memory, not the file size.
   * @defaultValue 24576 (docs/decisions.md: "Output: publishing memory")
   */
  rowGroupRows?: number;
  /** @defaultValue `zstd` */
  compression?: 'zstd' | 'snappy';
  /** Keep `_staging/<snapshot_id>` after publishing (it is removed by default). @defaultValue false */
  keepStaging?: boolean;
  /** Re-hash staged parts against their pointers before using them. @defaultValue true */
  verifyStagedHashes?: boolean;
  /** DuckDB session of the conversion. @defaultValue `{ threads: 1, memoryLimit: '512MB' }` */
  duckdb?: DuckDbOptions;
  /**
   * Conversions that share one big output file, each a DuckDB session on its own thread converting
   * a row range, concatenated without re-encoding. Each beyond the first adds a row group's worth
   * of memory (~70 MB at 24,576 facts rows) and takes its share off the time after the last
   * staged byte (docs/decisions.md, "Publishing: row ranges on several cores"). @defaultValue 1
   */
  conversions?: number;
  logger?: Logger;
  clock?: Clock;
  /**
   * An incremental snapshot: the snapshot its reused parts come from, and the date of the last full
   * refresh of that chain. @defaultValue a full snapshot (full_refresh_date = snapshotDate)
   */
  incremental?: { reusedFrom: string; fullRefreshDate: string };
  /**
   * Write the `changes` dataset against this published snapshot (its manifest and facts Parquet
   * must be under `root`). @defaultValue none
   */
  changesAgainst?: string;
  /**
   * Why `changesAgainst` could not be brought under `root` (a remote root's publisher sets it): the
   * snapshot then publishes without `changes`, and its manifest's `changes_missing` says this.
   */
  changesUnavailable?: string;
}

export const DEFAULT_TARGET_FILE_BYTES = 128 * 1024 * 1024;
export { DEFAULT_ROW_GROUP_ROWS };

const WRITER_VERSION = readWriterVersion();

function readWriterVersion(): { name: string; version: string; engine: string } {
  const require = createRequire(import.meta.url);
  let version = 'unknown';
  let engine = 'duckdb';
  try {
    version = (require(packagePath('package.json')) as { version: string }).version;
  } catch {
    // an unreadable package.json: keep "unknown"
  }
  try {
    engine = `duckdb ${(require('@duckdb/node-api/package.json') as { version: string }).version}`;
  } catch {
    // resolution blocked by exports: keep the bare name
  }
  return { name: 'filings-export', version, engine };
}

function iso(value: string | number | Date | undefined, what: string): string | null {
  if (value === undefined) return null;
  const d = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(d.getTime()))
    throw new InputError(`stats.${what} ${JSON.stringify(value)} is not a timestamp`);
  return d.toISOString();
}

function validateOptions(o: PublishOptions): void {
  assertSnapshotId(o.snapshotId);
  assertSnapshotDate(o.snapshotDate);
  if (!Array.isArray(o.formats) || o.formats.length === 0)
    throw new InputError('formats: give at least one of parquet, ndjson');
  for (const f of o.formats) {
    if (!(OUTPUT_FORMATS as readonly string[]).includes(f))
      throw new InputError(`formats: unknown format ${JSON.stringify(f)}`);
  }
  if (o.targetFileBytes !== undefined && !(o.targetFileBytes > 0))
    throw new InputError('targetFileBytes must be > 0');
  if (o.rowGroupRows !== undefined && !(Number.isInteger(o.rowGroupRows) && o.rowGroupRows > 0)) {
    throw new InputError('rowGroupRows must be a positive integer');
  }
  const k = o.conversions;
  if (k !== undefined && !(Number.isInteger(k) && k >= 1 && k <= 64))
    throw new InputError(`conversions must be an integer from 1 to 64 (got ${String(k)})`);
  const seen = new Set<string>();
  for (const p of o.parts) {
    assertDataset(p.dataset);
    const key = `${p.dataset}/${p.ticker.toUpperCase()}`;
    if (seen.has(key)) throw new InputError(`parts: ${key} is listed twice`);
    seen.add(key);
    if (p.status === 'pending') {
      throw new InputError(`parts: ${key} is still pending; publish a snapshot once every part has finished`);
    }
  }
}

export async function publishSnapshot(o: PublishOptions): Promise<Manifest> {
  validateOptions(o);
  const logger = o.logger ?? silentLogger();
  const clock = o.clock ?? systemClock;
  const log = logger.child({ snapshot: o.snapshotId });
  if (await isPublished(o.root, o.snapshotId)) {
    log.info('snapshot already published; returning its manifest');
    return readManifest(o.root, o.snapshotId);
  }

  const formats = OUTPUT_FORMATS.filter((f) => o.formats.includes(f));
  const targetFileBytes = o.targetFileBytes ?? DEFAULT_TARGET_FILE_BYTES;
  const rowGroupRows = o.rowGroupRows ?? DEFAULT_ROW_GROUP_ROWS;
  const staging = stagingSnapshotDir(o.root, o.snapshotId);
  await removeSnapshotOutput(o.root, o.snapshotId);
  await mkdir(staging, { recursive: true });
  const tmp = join(staging, '_duckdb_tmp');
  // One thread: as fast on two shared cores (gzip input is decompressed serially anyway), and peak
  // memory then follows the row-group size instead of growing with the file (docs/decisions.md).
  const duck = await openDuck({ tempDirectory: tmp, threads: 1, ...o.duckdb });
  const rangeDucks: DuckSession[] = [];
  const closeDucks = (): void => {
    duck.close();
    for (const d of rangeDucks) d.close();
  };

  const files: ManifestFile[] = [];
  const datasets: Manifest['datasets'] = {};
  const warnings: string[] = [];
  const schemaChanges: Manifest['schema_changes'] = [];
  try {
    // Their spill folders sit inside the first session's, removed with it.
    for (let i = 1; i < (o.conversions ?? 1); i++)
      rangeDucks.push(await openDuck({ tempDirectory: join(tmp, String(i)), threads: 1, ...o.duckdb }));
    const byDataset = new Map<DatasetName, PartPointer[]>();
    for (const p of o.parts) byDataset.set(p.dataset, [...(byDataset.get(p.dataset) ?? []), p]);

    for (const dataset of DATASETS) {
      const parts = byDataset.get(dataset);
      if (parts === undefined) continue;
      const done = parts
        .filter((p) => p.status === 'done' && p.rows > 0)
        .sort((a, b) => (a.ticker < b.ticker ? -1 : a.ticker > b.ticker ? 1 : 0));
      const checked: CheckedPart[] = [];
      for (const p of done)
        checked.push(await checkStagedPart(o.root, p, { verifyHashes: o.verifyStagedHashes }));
      const observed = mergeFieldKinds(checked.map((c) => c.fields));
      const resolved = await resolveSchema(o.root, dataset, observed, o.snapshotId, new Date(clock.now()));
      for (const c of resolved.typeConflicts) {
        warnings.push(
          `${dataset}.${c.field}: seen as ${kindsToNames(c.kinds).join('/')}, column type is ${c.type}; values that do not fit are kept in _extra`,
        );
      }
      if (resolved.added.length > 0) {
        schemaChanges.push({ dataset, schema_version: resolved.schema.version, added: resolved.added });
      }

      const segmentsOf = new Map<string, SegmentFile[]>();
      for (const c of checked)
        if (c.stagingId !== undefined) segmentsOf.set(c.path, await listSegments(c.path, c.stagingId));
      const rel = partitionRelDir(dataset, o.snapshotDate, o.snapshotId);
      const dir = buildDir(o.root, o.snapshotId, dataset);
      const started = Date.now();
      const built = await writeDatasetFiles({
        dataset,
        snapshotId: o.snapshotId,
        schema: resolved.schema,
        kinds: observed,
        extraFields: [...resolved.extraFields.keys()],
        parts: checked.map((c) => ({
          path: c.path,
          rows: c.rows,
          bytes: c.bytes,
          maxLineChars: c.maxLineChars,
          members: c.members,
          segments: segmentsOf.get(c.path),
        })),
        formats,
        dir,
        scratchDir: join(staging, '_scratch'),
        targetFileBytes,
        rowGroupRows,
        compression: o.compression ?? 'zstd',
        duck,
        rangeDucks,
        logger: log,
      });
      for (const t of built.tolerantFiles) {
        warnings.push(
          `${dataset}/${t.file}: a value did not fit its column type and is kept in _extra (${t.reason})`,
        );
      }
      const expected = checked.reduce((s, c) => s + c.rows, 0);
      if (built.rows !== expected) {
        throw new OutputError(
          'OUTPUT_FAILED',
          `${dataset}: wrote ${built.rows} rows, the parts hold ${expected}`,
        );
      }
      if (built.files.length > 0) {
        const final = join(o.root, rel);
        await rm(final, { recursive: true, force: true });
        await mkdir(dirname(final), { recursive: true });
        await rename(dir, final);
        await fsyncDir(dirname(final));
      }
      log.info(
        { dataset, rows: built.rows, files: built.files.length, ms: Date.now() - started },
        'dataset files written',
      );

      for (const f of built.files) {
        files.push({ path: toPosix(join(rel, f.name)), dataset, ...withoutName(f) });
      }
      datasets[dataset] = datasetEntry(
        resolved.schema,
        rel,
        built.rows,
        built.files,
        resolved.extraFields,
        parts,
      );
    }

    let changes: ManifestChanges | null = null;
    let changesMissing: string | undefined = o.changesUnavailable;
    if (o.changesAgainst !== undefined && changesMissing === undefined) {
      // The snapshot stands without its changes, and its manifest says why (changes_missing).
      try {
        const previous = await readManifest(o.root, o.changesAgainst);
        changes = await writeChanges(duck, {
          root: o.root,
          snapshotId: o.snapshotId,
          snapshotDate: o.snapshotDate,
          datasets: [...new Set(o.parts.map((p) => p.dataset))],
          companies: Object.fromEntries(
            DATASETS.map((d) => [d, o.parts.filter((p) => p.dataset === d).map((p) => p.ticker)]),
          ),
          columns: Object.fromEntries(
            Object.entries(datasets).map(([d, e]) => [d, (e?.columns ?? []).map((c) => c.name)]),
          ),
          files,
          previous,
        });
      } catch (err: unknown) {
        changesMissing = coerceError(err).message;
      }
    }
    if (o.changesAgainst !== undefined && changesMissing !== undefined) {
      warnings.push(`changes against ${o.changesAgainst} not written: ${changesMissing}`);
      log.warn({ against: o.changesAgainst, reason: changesMissing }, 'changes not written');
    }
    // Each part's staged rows stay with the snapshot, so the next night can carry them over.
    const archives = await archiveParts(o.root, o.snapshotId, o.parts);
    const manifest = buildManifest(o, formats, datasets, files, warnings, schemaChanges, clock, archives);
    if (changes !== null) manifest.changes = changes;
    if (o.changesAgainst !== undefined && changesMissing !== undefined)
      manifest.changes_missing = { against: o.changesAgainst, reason: changesMissing };
    await mkdir(snapshotDir(o.root, o.snapshotId), { recursive: true });
    await writeFileAtomic(manifestPath(o.root, o.snapshotId), `${JSON.stringify(manifest, null, 2)}\n`);
    await writeFileAtomic(successPath(o.root, o.snapshotId), '');
    log.info({ rows: manifest.totals.rows, files: manifest.totals.files }, 'snapshot published');
    closeDucks();
    if (o.keepStaging !== true) await rm(staging, { recursive: true, force: true });
    else await rm(join(staging, '_build'), { recursive: true, force: true });
    return manifest;
  } catch (err: unknown) {
    throw err instanceof OutputError || err instanceof InputError
      ? err
      : new OutputError('OUTPUT_FAILED', `publishing ${o.snapshotId} failed: ${coerceError(err).message}`, {
          cause: err,
        });
  } finally {
    closeDucks();
    await rm(tmp, { recursive: true, force: true }).catch(() => undefined);
    await rm(join(staging, '_scratch'), { recursive: true, force: true }).catch(() => undefined);
  }
}

function withoutName(
  f: { name: string } & Omit<ManifestFile, 'path' | 'dataset'>,
): Omit<ManifestFile, 'path' | 'dataset'> {
  const { name: _name, ...rest } = f;
  return rest;
}

function datasetEntry(
  schema: DatasetSchema,
  rel: string,
  rows: number,
  built: readonly { bytes: number; format: OutputFormat }[],
  extra: ReadonlyMap<string, number>,
  parts: readonly PartPointer[],
): ManifestDataset {
  const counts: Record<PartStatus, number> = { pending: 0, done: 0, not_found: 0, bad_request: 0, failed: 0 };
  for (const p of parts) counts[p.status]++;
  return {
    schema_version: schema.version,
    schema_inferred: schema.inferred,
    columns: schema.columns.map((c) => ({ name: c.name, type: c.type, role: c.role })),
    path: toPosix(rel),
    rows,
    files: built.length,
    bytes: built.reduce((s, f) => s + f.bytes, 0),
    extra_fields: [...extra.keys()],
    parts: counts,
  };
}

function quotaSummary(stats: SnapshotStats | undefined): QuotaWaitSummary {
  const waits = Array.isArray(stats?.waits) ? [...stats.waits] : [];
  let total: number | null = null;
  const w = stats?.waitedForQuota;
  if (typeof w === 'object' && w !== null) {
    if (typeof w.ms === 'number') total = w.ms;
    waits.push(w);
  }
  if (total === null && waits.length > 0) {
    let sum = 0;
    let known = false;
    for (const x of waits) {
      const since = Date.parse(String((x as { since?: unknown }).since ?? ''));
      const until = Date.parse(String((x as { until?: unknown }).until ?? ''));
      if (Number.isFinite(since) && Number.isFinite(until) && until >= since) {
        sum += until - since;
        known = true;
      }
    }
    if (known) total = sum;
  }
  return { waited: waits.length > 0 || w === true, total_ms: total, waits };
}

function buildManifest(
  o: PublishOptions,
  formats: OutputFormat[],
  datasets: Manifest['datasets'],
  files: ManifestFile[],
  warnings: string[],
  schemaChanges: Manifest['schema_changes'],
  clock: Clock,
  archives: ReadonlyMap<PartPointer, string>,
): Manifest {
  const now = new Date(clock.now()).toISOString();
  const startedAt = iso(o.stats?.startedAt, 'startedAt');
  const finishedAt = iso(o.stats?.finishedAt, 'finishedAt') ?? now;
  const parts: ManifestPart[] = [...o.parts]
    .sort((a, b) =>
      a.dataset === b.dataset
        ? a.ticker < b.ticker
          ? -1
          : 1
        : DATASETS.indexOf(a.dataset) - DATASETS.indexOf(b.dataset),
    )
    .map((p) => ({
      dataset: p.dataset,
      ticker: p.ticker,
      status: p.status,
      rows: p.status === 'done' ? p.rows : 0,
      ...(p.message === undefined ? {} : { message: p.message }),
      ...(p.fingerprint === undefined ? {} : { fingerprint: p.fingerprint }),
      ...(p.reusedFrom === undefined ? {} : { reused: true, reused_from: p.reusedFrom }),
      ...(archives.has(p) ? { archive: archives.get(p), bytes: p.bytes, sha256: p.sha256 } : {}),
    }));
  const reusedParts = o.parts.filter((p) => p.reusedFrom !== undefined).length;
  const rows = Object.values(datasets).reduce((s, d) => s + (d?.rows ?? 0), 0);
  return {
    manifest_version: MANIFEST_VERSION,
    snapshot_id: o.snapshotId,
    snapshot_date: o.snapshotDate,
    status: 'published',
    complete: o.parts.every((p) => p.status === 'done' || p.status === 'not_found'),
    published_at: now,
    formats,
    layout: '<dataset>/snapshot_date=<YYYY-MM-DD>/snapshot_id=<snapshot_id>/part-<NNNNN>.(parquet|ndjson.gz)',
    datasets,
    files,
    parts,
    totals: {
      rows,
      files: files.length,
      bytes: files.reduce((s, f) => s + f.bytes, 0),
      requests: o.stats?.requests ?? null,
      rate_limited_429: o.stats?.rateLimited429 ?? null,
      retries: o.stats?.retries ?? null,
      started_at: startedAt,
      finished_at: finishedAt,
      wall_time_ms: startedAt === null ? null : Math.max(0, Date.parse(finishedAt) - Date.parse(startedAt)),
    },
    quota_wait: quotaSummary(o.stats),
    warnings,
    schema_changes: schemaChanges,
    writer: WRITER_VERSION,
    incremental: {
      reused_from: reusedParts > 0 ? (o.incremental?.reusedFrom ?? null) : null,
      full_refresh_date:
        reusedParts > 0 ? (o.incremental?.fullRefreshDate ?? o.snapshotDate) : o.snapshotDate,
      reused_parts: reusedParts,
      fetched_parts: o.parts.length - reusedParts,
    },
  };
}

/**
 * Keeps each done part's staged rows (and field sidecar) under `_snapshots/<id>/parts/`: a hard link
 * where the file system allows, else a copy. Returns the archive key of each part.
 */
async function archiveParts(
  root: string,
  snapshotId: string,
  parts: readonly PartPointer[],
): Promise<Map<PartPointer, string>> {
  const out = new Map<PartPointer, string>();
  const storage = new LocalStorage(root);
  for (const p of parts) {
    if (p.status !== 'done' || p.file === undefined || p.rows === 0) continue;
    const key = toPosix(join(SNAPSHOTS_DIR, snapshotId, 'parts', p.dataset, basename(p.file)));
    for (const [from, to] of [
      [p.file, key],
      [fieldsSidecarPath(p.file), fieldsSidecarPath(key)],
    ] as const) {
      try {
        await storage.linkFile(toPosix(from), toPosix(to));
      } catch (err: unknown) {
        // No sidecar: the publisher scanned the part.
        if (from !== p.file && err instanceof StorageError && err.code === 'STORAGE_NOT_FOUND') continue;
        throw err;
      }
    }
    out.set(p, key);
  }
  return out;
}

/** Removes what an earlier, unfinished publish of this snapshot left in the layout. */
async function removeSnapshotOutput(root: string, snapshotId: string): Promise<void> {
  for (const dataset of DATASETS) {
    let dates: string[];
    // Absent folders hold nothing to remove; one that cannot be read fails the publish with its cause.
    try {
      dates = await retryRead(join(root, dataset), () => readdir(join(root, dataset)));
    } catch (err: unknown) {
      if (isAbsent(err)) continue;
      throw err;
    }
    for (const d of dates) {
      if (!d.startsWith('snapshot_date=')) continue;
      const dir = join(root, dataset, d, `snapshot_id=${snapshotId}`);
      try {
        await retryRead(dir, () => stat(dir));
      } catch (err: unknown) {
        if (isAbsent(err)) continue;
        throw err;
      }
      await rm(dir, { recursive: true, force: true });
    }
  }
  await rm(join(stagingSnapshotDir(root, snapshotId), '_build'), { recursive: true, force: true });
}
