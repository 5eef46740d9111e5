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
import { coerceError, InputError, OutputError } from '../../errors.js';
import { silentLogger, type Logger } from '../../log.js';
import {
  DATASETS,
  OUTPUT_FORMATS,
  systemClock,
  type OutputFormat,
  type PartPointer,
  type DatasetName,
} from '../../types.js';
import { CHANGE_SOURCES, writeChanges } from './changes.js';
import { openDuck, type DuckSession } from '../convert/index.js';
import { DEFAULT_ROW_GROUP_ROWS } from '../staged-part/index.js';
import { writeFileAtomic, isAbsent, retryRead } from '../storage/index.js';
import {
  isPublished,
  readManifest,
  type Manifest,
  type ManifestChanges,
  type ManifestDataset,
  type ManifestFile,
  assertDataset,
  assertSnapshotDate,
  assertSnapshotId,
  manifestPath,
  snapshotDir,
  stagingSnapshotDir,
  successPath,
} from '../catalog/index.js';
import { type DatasetPublishContext, type DatasetPublished } from './publish-dataset.js';
import { publishInLanes } from './dataset-lanes.js';
import { buildManifest, datasetEntry } from './manifest-entries.js';
import { reusedFromFiles, type ReuseSource } from './reuse-plan.js';
import { localReuseSource } from './reused-files.js';

export type { PublishOptions, SnapshotStats } from './publish-options.js';
import type { PublishOptions } from './publish-options.js';

export const DEFAULT_TARGET_FILE_BYTES = 128 * 1024 * 1024;
export { DEFAULT_ROW_GROUP_ROWS };

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
