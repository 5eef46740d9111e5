/**
 * Publishes a snapshot: combines the staged parts of every dataset into sized, typed files in the
 * Hive layout, then writes the manifest (last, after every file is fsynced) and `_SUCCESS`.
 *
 * Idempotent: a published snapshot is returned as it is; an unpublished one (for example after a
 * crash between the files and the manifest) is rebuilt from its staged parts, which stay until the
 * snapshot is published. Publishing one snapshot from two processes at once is not supported: the
 * pipeline's parent job is its single publisher.
 */
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { coerceError, InputError, OutputError } from '../../errors.js';
import { silentLogger, type Logger } from '../../log.js';
import { packagePath } from '../../package-root.js';
import {
  DATASETS,
  OUTPUT_FORMATS,
  systemClock,
  type Clock,
  type OutputFormat,
  type PartPointer,
  type PartStatus,
  type DatasetName,
} from '../../types.js';
import { CHANGE_SOURCES, writeChanges } from './changes.js';
import { openDuck, type DuckDbOptions, type DuckSession, type ParquetCompression } from '../convert/index.js';
import { DEFAULT_ROW_GROUP_ROWS } from '../staged-part/index.js';
import { writeFileAtomic, isAbsent, retryRead } from '../storage/index.js';
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
  manifestPath,
  snapshotDir,
  stagingSnapshotDir,
  successPath,
  toPosix,
} from '../catalog/index.js';
import type { DatasetSchema } from '../../datasets/index.js';
import { type DatasetPublishContext, type DatasetPublished } from './publish-dataset.js';
import { publishInLanes } from './dataset-lanes.js';
import { reusedFromFiles, type ReuseSource } from './reuse-plan.js';
import { localReuseSource } from './reused-files.js';

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
  compression?: ParquetCompression;
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
  /**
   * Where the parts reused from an earlier snapshot's files find them (a bucket's publisher gives
   * its own). @defaultValue that snapshot under `root`, its files hard-linked
   */
  reuseSource?: ReuseSource;
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
  let changesDone: Promise<ChangesOutcome> | undefined;
  try {
    // Their spill folders sit inside the first session's, removed with it.
    for (let i = 1; i < (o.conversions ?? 1); i++)
      rangeDucks.push(await openDuck({ tempDirectory: join(tmp, String(i)), threads: 1, ...o.duckdb }));
    const context: DatasetPublishContext = {
      ...contextOf(o, formats, staging, log),
      duck,
      rangeDucks,
      now: new Date(clock.now()),
      reuse: await reuseSourceOf(o),
    };
    await publishDatasets(o, context, tmp, { warnings, schemaChanges, files, datasets }, (started) => {
      changesDone = started;
    });

    const { changes, changesMissing } = await (changesDone ?? changesStep(o, duck, datasets, files));
    if (o.changesAgainst !== undefined && changesMissing !== undefined) {
      warnings.push(`changes against ${o.changesAgainst} not written: ${changesMissing}`);
      log.warn({ against: o.changesAgainst, reason: changesMissing }, 'changes not written');
    }
    // No staged rows are kept: the next night reuses the published files themselves.
    const manifest = buildManifest(o, formats, datasets, files, warnings, schemaChanges, clock);
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
    // A failed dataset leaves a started `changes` running: let it end before its folder goes.
    await changesDone?.catch(() => undefined);
    closeDucks();
    await rm(tmp, { recursive: true, force: true }).catch(() => undefined);
    await rm(join(staging, '_scratch'), { recursive: true, force: true }).catch(() => undefined);
  }
}

/** What publishDatasets fills in, in dataset order. */
interface Published {
  warnings: string[];
  schemaChanges: Manifest['schema_changes'];
  files: ManifestFile[];
  datasets: Manifest['datasets'];
}

/**
 * Every dataset's files. An incremental night publishes two datasets at once, and `changes` (only
 * the changed companies' facts) as soon as the facts datasets are written, each in a session of its
 * own (`onChanges` gets it; the manifest waits for all). A full night does one thing at a time
 * (changes compares every row there), so its publishing memory stays one session's.
 */
async function publishDatasets(
  o: PublishOptions,
  context: DatasetPublishContext,
  tmp: string,
  into: Published,
  onChanges: (started: Promise<ChangesOutcome>) => void,
): Promise<void> {
  const incremental = o.parts.some((p) => p.reusedFrom !== undefined);
  const partsOf = new Map<DatasetName, PartPointer[]>();
  for (const d of DATASETS) {
    const parts = o.parts.filter((p) => p.dataset === d);
    if (parts.length > 0) partsOf.set(d, parts);
  }
  const compared = [...partsOf.keys()].filter((d) => CHANGE_SOURCES.includes(d));
  const entry = (d: DatasetName, done: DatasetPublished): ManifestDataset =>
    datasetEntry(done.schema, done.rel, done.rows, done.files, done.extraFields, partsOf.get(d)!);
  let started = false;
  const published = await publishInLanes(context, longestFirst(partsOf), {
    lanes: incremental ? 2 : 1,
    openSession: (i) => openDuck({ tempDirectory: join(tmp, `lane${i}`), threads: 1, ...o.duckdb }),
    onDone(written) {
      if (!incremental || started || compared.some((d) => !written.has(d))) return;
      started = true;
      const sources = compared.map((d) => [d, written.get(d)!] as const);
      onChanges(
        changesInOwnSession(
          o,
          join(tmp, 'changes'),
          Object.fromEntries(sources.map(([d, done]) => [d, entry(d, done)])),
          sources.flatMap(([, done]) => done.files),
        ),
      );
    },
  });
  for (const dataset of partsOf.keys()) {
    const done = published.get(dataset)!;
    into.warnings.push(...done.warnings);
    if (done.added.length > 0)
      into.schemaChanges.push({ dataset, schema_version: done.schema.version, added: done.added });
    into.files.push(...done.files);
    into.datasets[dataset] = entry(dataset, done);
  }
}

/**
 * The datasets in the order the lanes take them: the most work first (what a list scheduler does to
 * end soonest), the work being the staged bytes a dataset converts (its fetched parts). On a night
 * where one company changed, series_catalog (every company's catalog, fetched every night) then
 * starts at once instead of after the changed company's facts; the rebuilds of the files that held
 * it are mostly copies. Ties keep the DATASETS order.
 */
export function longestFirst(
  partsOf: ReadonlyMap<DatasetName, readonly PartPointer[]>,
): Map<DatasetName, readonly PartPointer[]> {
  const staged = (parts: readonly PartPointer[]): number =>
    parts.reduce((s, p) => s + (p.status === 'done' && !reusedFromFiles(p) ? p.bytes : 0), 0);
  return new Map([...partsOf.entries()].sort(([, a], [, b]) => staged(b) - staged(a)));
}

interface ChangesOutcome {
  changes: ManifestChanges | null;
  changesMissing: string | undefined;
}

/** changesStep in a DuckDB session of its own (spilling under `tempDirectory`), closed when done. */
async function changesInOwnSession(
  o: PublishOptions,
  tempDirectory: string,
  datasets: Manifest['datasets'],
  files: ManifestFile[],
): Promise<ChangesOutcome> {
  if (!changesWanted(o)) return { changes: null, changesMissing: o.changesUnavailable };
  let duck: DuckSession;
  try {
    duck = await openDuck({ tempDirectory, threads: 1, ...o.duckdb });
  } catch (err: unknown) {
    return { changes: null, changesMissing: coerceError(err).message };
  }
  try {
    return await changesStep(o, duck, datasets, files);
  } finally {
    duck.close();
  }
}

/** A previous snapshot to compare with, and no reason known beforehand why that cannot be done. */
function changesWanted(o: PublishOptions): o is PublishOptions & { changesAgainst: string } {
  return o.changesAgainst !== undefined && o.changesUnavailable === undefined;
}

/** The `changes` dataset against the previous snapshot; a failure leaves it out, with the reason. */
async function changesStep(
  o: PublishOptions,
  duck: DuckSession,
  datasets: Manifest['datasets'],
  files: ManifestFile[],
): Promise<ChangesOutcome> {
  let changes: ManifestChanges | null = null;
  let changesMissing: string | undefined = o.changesUnavailable;
  if (changesWanted(o)) {
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
        // A company carried over from the compared snapshot holds its rows: no change to look for.
        fetched: Object.fromEntries(
          DATASETS.map((d) => [
            d,
            o.parts.filter((p) => p.dataset === d && p.reusedFrom !== o.changesAgainst).map((p) => p.ticker),
          ]),
        ),
        columns: Object.fromEntries(Object.entries(datasets).map(([d, e]) => [d, e?.columns ?? []])),
        files,
        previous,
      });
    } catch (err: unknown) {
      changesMissing = coerceError(err).message;
    }
  }
  return { changes, changesMissing };
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

/** The settings every dataset of the snapshot is published with. */
function contextOf(
  o: PublishOptions,
  formats: OutputFormat[],
  staging: string,
  log: Logger,
): Omit<DatasetPublishContext, 'duck' | 'rangeDucks' | 'now' | 'reuse'> {
  return {
    root: o.root,
    snapshotId: o.snapshotId,
    snapshotDate: o.snapshotDate,
    formats,
    staging,
    targetFileBytes: o.targetFileBytes ?? DEFAULT_TARGET_FILE_BYTES,
    rowGroupRows: o.rowGroupRows ?? DEFAULT_ROW_GROUP_ROWS,
    compression: o.compression ?? 'zstd',
    verifyStagedHashes: o.verifyStagedHashes,
    log,
  };
}

/** The source of the parts reused from an earlier snapshot's files (none when no part is). */
async function reuseSourceOf(o: PublishOptions): Promise<ReuseSource | undefined> {
  const from = new Set(o.parts.filter(reusedFromFiles).map((p) => p.reusedFrom!));
  if (from.size === 0) return undefined;
  if (from.size > 1)
    throw new InputError(`parts: reused from ${[...from].join(', ')}; one snapshot reuses from one source`);
  const id = [...from][0]!;
  if (o.reuseSource !== undefined) {
    if (o.reuseSource.manifest.snapshot_id !== id)
      throw new InputError(`reuseSource is ${o.reuseSource.manifest.snapshot_id}, the parts reuse ${id}`);
    return o.reuseSource;
  }
  let manifest: Manifest;
  try {
    manifest = await readManifest(o.root, id);
  } catch (err: unknown) {
    throw new OutputError(
      'REUSE_SOURCE_CHANGED',
      `${id}, whose files this snapshot reuses, cannot be read (${coerceError(err).message}); retry the snapshot (run --retry) to fetch its parts`,
      { cause: err },
    );
  }
  return localReuseSource(o.root, manifest);
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
