/**
 * Adapts the output module (src/output) to the jobs' helpers (job-helpers.ts): the staged part (a
 * writer that stages one part, its size, its pieces converted while staging), and the publisher that
 * builds the snapshot's files, manifest and _SUCCESS. The publisher
 * (DuckDB, ~30 MB of native code) loads on the first publish only: a parts-only worker never
 * carries it, and commands that do not export never load either.
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError } from '../errors.js';
import type { Manifest } from '../output/catalog/index.js';
import type { PublishOptions } from '../output/index.js';
import { type Storage, isS3Root } from '../output/storage/index.js';
import type { OutputHelpers } from './job-helpers.js';
import type {
  PartWriterFactory,
  PieceConverter,
  PublishRequest,
  ReusePorts,
  SnapshotPublisher,
  StagedPartPorts,
} from './part/index.js';

export interface OutputPortOptions {
  /** DuckDB memory limit while publishing, MB. @defaultValue the output module's */
  publishMemoryMb?: number;
  /** DuckDB threads while publishing. @defaultValue the output module's */
  publishThreads?: number;
  /** Conversions sharing one big output file (row ranges on their own threads). @defaultValue 1 */
  publishConversions?: number;
  /** Parquet row-group size in rows. @defaultValue the output module's (DEFAULT_ROW_GROUP_ROWS) */
  rowGroupRows?: number;
  /** Target size of each published file, bytes. @defaultValue the output module's (128 MiB) */
  targetFileBytes?: number;
  /** Opens the storage of an `s3://` root (settings and credentials). Required for such roots. */
  openStorage?: (root: string) => Storage;
  /** Parent of the local temp dirs of s3:// roots. @defaultValue os.tmpdir() */
  tmpDir?: string;
  /** DuckDB hands freed memory back at once (DuckDbOptions.releaseFreedMemory). @defaultValue false */
  releaseFreedMemory?: boolean;
}

/** The output's helpers as outputPorts() builds them: every port present (pieces under a local root only). */
export type OutputPorts = Required<OutputHelpers> & { staged: Required<StagedPartPorts> };

export async function outputPorts(opts: OutputPortOptions = {}): Promise<OutputPorts> {
  const storages = storagePool(opts);
  return {
    reuse: reusePorts(storages, opts),
    closeOutput: storages.close,
    staged: {
      createWriter: await writerFactory(storages, opts),
      bytes: stagedBytesPort(storages),
      convertPiece: pieceConverter(opts),
      discardPiece: async (req) => {
        const { discardPiece } = await import('../output/staged-part/index.js');
        await discardPiece(req, !isS3Root(req.root));
      },
    },
    publish: publisher(storages, opts),
  };
}

/** The storages of the output roots a worker touches, opened on first use and closed together. */
interface StoragePool {
  /** The storage of an `s3://` root; a ConfigError without `openStorage`. */
  remote(root: string): Storage;
  /** The storage of any root: local roots go through the same port to read earlier snapshots. */
  any(root: string): Promise<Storage>;
  close(): Promise<void>;
}

function storagePool(opts: OutputPortOptions): StoragePool {
  // One storage (one connection pool) per remote root for the life of the worker.
  const storages = new Map<string, Storage>();
  const remote = (root: string): Storage => {
    if (opts.openStorage === undefined) throw new ConfigError(`output root ${root}: no storage configured`);
    let st = storages.get(root);
    if (st === undefined) storages.set(root, (st = opts.openStorage(root)));
    return st;
  };
  return {
    remote,
    any: async (root) => {
      if (isS3Root(root)) return remote(root);
      let st = storages.get(root);
      if (st === undefined) {
        const { LocalStorage } = await import('../output/storage/index.js');
        storages.set(root, (st = new LocalStorage(root)));
      }
      return st;
    },
    close: async () => {
      const open = [...storages.values()];
      storages.clear();
      await Promise.all(open.map((st) => st.close()));
    },
  };
}

/** Reading earlier snapshots and carrying their parts over (incremental nights). */
function reusePorts(storages: StoragePool, opts: OutputPortOptions): ReusePorts {
  const manifests = new Map<string, Promise<Manifest>>();
  return {
    previousManifest: (root, snapshotId) => {
      const k = `${root}\n${snapshotId}`;
      let m = manifests.get(k);
      if (m === undefined) {
        m = storages
          .any(root)
          .then(async (st) => (await import('../output/catalog/index.js')).readStoredManifest(st, snapshotId))
          .catch((err: unknown) => {
            manifests.delete(k); // not cached: the next part asks again
            throw err;
          });
        manifests.set(k, m);
      }
      return m;
    },
    carryOver: async (root, req) => {
      const { carryOverPart } = await import('../output/index.js');
      return carryOverPart(await storages.any(root), {
        ...req,
        ...(opts.tmpDir !== undefined && req.tmpDir === undefined ? { tmpDir: opts.tmpDir } : {}),
      });
    },
    checkSourceFiles: async (root, files) => {
      const { checkSourceFiles } = await import('../output/index.js');
      return checkSourceFiles(await storages.any(root), files);
    },
  };
}

function stagedBytesPort(storages: StoragePool): NonNullable<StagedPartPorts['bytes']> {
  return async (root, file) => {
    // Absent: the part is fetched again. Unreadable (after retries): the attempt fails with its cause.
    const { isAbsent, retryRead } = await import('../output/storage/index.js');
    if (isS3Root(root)) {
      const st = storages.remote(root);
      return (await retryRead(st.url(file), () => st.head(file)))?.bytes ?? null;
    }
    const path = join(root, file);
    const size = await retryRead(path, async () => (await stat(path)).size).catch((err: unknown) => {
      if (isAbsent(err)) return null;
      throw err;
    });
    return size;
  };
}

/** Part writers stay synchronous for the processors, so their modules load here, once. */
async function writerFactory(storages: StoragePool, opts: OutputPortOptions): Promise<PartWriterFactory> {
  const { createPartWriter, createRemotePartWriter, stagingOptionsOf } =
    await import('../output/staged-part/index.js');
  return (req) => {
    const writerOpts = {
      snapshotId: req.snapshotId,
      dataset: req.dataset,
      ticker: req.ticker,
      lineage: { snapshotId: req.snapshotId, fetchedAt: req.fetchedAt, requestedTicker: req.ticker },
    };
    return isS3Root(req.root)
      ? createRemotePartWriter(storages.remote(req.root), writerOpts, opts.tmpDir)
      : createPartWriter({
          ...writerOpts,
          root: req.root,
          ...stagingOptionsOf(req.dataset, req.plan),
        });
  };
}

function pieceConverter(opts: OutputPortOptions): PieceConverter {
  return async (req) => {
    if (isS3Root(req.root))
      return { status: 'skipped', reason: 'parts under a bucket are staged on their worker' };
    const { convertPiece } = await import('../output/index.js');
    return convertPiece(req, {
      ...(opts.rowGroupRows !== undefined ? { rowGroupRows: opts.rowGroupRows } : {}),
      duckdb: {
        ...(opts.publishMemoryMb !== undefined ? { memoryLimit: `${opts.publishMemoryMb}MB` } : {}),
        ...(opts.releaseFreedMemory === true ? { releaseFreedMemory: true } : {}),
      },
    });
  };
}

function publisher(storages: StoragePool, opts: OutputPortOptions): SnapshotPublisher {
  return async (req) => {
    const { publishToStorage } = await import('../output/index.js');
    const remote = isS3Root(req.root);
    const publishOpts = publishOptionsOf(req, opts);
    const manifest = remote
      ? await publishToStorage(storages.remote(req.root), {
          ...publishOpts,
          ...(opts.tmpDir !== undefined ? { tmpDir: opts.tmpDir } : {}),
        })
      : await publishLocal(req.root, publishOpts);
    const rows: Record<string, number> = {};
    for (const d of req.datasets) rows[d] = manifest.datasets[d]?.rows ?? 0;
    const manifestPath = remote
      ? storages.remote(req.root).url(`_snapshots/${req.snapshotId}/manifest.json`)
      : join(req.root, '_snapshots', req.snapshotId, 'manifest.json');
    const missing = manifest.changes_missing?.reason;
    return { manifestPath, rows, ...(missing !== undefined ? { changesMissing: missing } : {}) };
  };
}

/** The output module's publish options for a request, with the worker's settings where given. */
function publishOptionsOf(req: PublishRequest, opts: OutputPortOptions): Omit<PublishOptions, 'root'> {
  return {
    snapshotId: req.snapshotId,
    snapshotDate: req.snapshotDate,
    formats: req.formats,
    parts: req.parts,
    stats: {
      waits: req.waits,
      startedAt: req.startedAt,
      requests: req.requests,
      retries: req.retries,
      rateLimited429: req.rateLimited429,
    },
    ...(opts.rowGroupRows !== undefined ? { rowGroupRows: opts.rowGroupRows } : {}),
    ...(opts.targetFileBytes !== undefined ? { targetFileBytes: opts.targetFileBytes } : {}),
    ...(opts.publishConversions !== undefined ? { conversions: opts.publishConversions } : {}),
    ...(req.incremental !== undefined ? { incremental: req.incremental } : {}),
    ...(req.changesAgainst !== undefined ? { changesAgainst: req.changesAgainst } : {}),
    duckdb: {
      ...(opts.publishMemoryMb !== undefined ? { memoryLimit: `${opts.publishMemoryMb}MB` } : {}),
      ...(opts.publishThreads !== undefined ? { threads: opts.publishThreads } : {}),
      ...(opts.releaseFreedMemory === true ? { releaseFreedMemory: true } : {}),
    },
  };
}

/** Publishes to a local root, then points its `latest` object at the snapshot (after `_SUCCESS`). */
async function publishLocal(root: string, o: Omit<PublishOptions, 'root'>): Promise<Manifest> {
  const { publishSnapshot } = await import('../output/index.js');
  const { writeLatest } = await import('../output/catalog/index.js');
  const { LocalStorage } = await import('../output/storage/index.js');
  const manifest = await publishSnapshot({ ...o, root });
  await writeLatest(new LocalStorage(root), manifest);
  return manifest;
}
