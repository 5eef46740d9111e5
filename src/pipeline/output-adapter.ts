/**
 * Adapts the output module (src/output) to the processors' ports: part writers that stage one
 * part, and the publisher that builds the snapshot's files, manifest and _SUCCESS. The publisher
 * (DuckDB, ~30 MB of native code) loads on the first publish only: a parts-only worker never
 * carries it, and commands that do not export never load either.
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError } from '../errors.js';
import type { Manifest } from '../output/catalog/index.js';
import type { PublishOptions } from '../output/index.js';
import { type Storage, isS3Root } from '../output/storage/index.js';
import type { PartWriterFactory, ReusePorts, SegmentConverter, SnapshotPublisher } from './part/index.js';

export interface OutputPorts extends ReusePorts {
  createWriter: PartWriterFactory;
  /** Size of a staged part (stat locally, head on a bucket), null when absent. */
  stagedBytes: (root: string, file: string) => Promise<number | null>;
  /** Closes the storages opened for remote roots. */
  closeOutput(): Promise<void>;
  publish: SnapshotPublisher;
  /** Converts a segment of a part being staged under a local root (early-segments.ts). */
  convertSegment: SegmentConverter;
}

export interface OutputPortOptions {
  /** DuckDB memory limit while publishing, MB. @defaultValue the output module's */
  publishMemoryMb?: number;
  /** DuckDB threads while publishing. @defaultValue the output module's */
  publishThreads?: number;
  /** Conversions sharing one big output file (row ranges on their own threads). @defaultValue 1 */
  publishConversions?: number;
  /** Parquet row-group size in rows. @defaultValue the output module's (DEFAULT_ROW_GROUP_ROWS) */
  rowGroupRows?: number;
  /** Opens the storage of an `s3://` root (settings and credentials). Required for such roots. */
  openStorage?: (root: string) => Storage;
  /** Parent of the local temp dirs of s3:// roots. @defaultValue os.tmpdir() */
  tmpDir?: string;
  /** DuckDB hands freed memory back at once (DuckDbOptions.releaseFreedMemory). @defaultValue false */
  releaseFreedMemory?: boolean;
}

export async function outputPorts(opts: OutputPortOptions = {}): Promise<OutputPorts> {
  const { createPartWriter } = await import('../output/staging/index.js');
  const { createRemotePartWriter } = await import('../output/index.js');
  // One storage (one connection pool) per remote root for the life of the worker.
  const storages = new Map<string, Storage>();
  const storageOf = (root: string): Storage => {
    if (opts.openStorage === undefined) throw new ConfigError(`output root ${root}: no storage configured`);
    let st = storages.get(root);
    if (st === undefined) storages.set(root, (st = opts.openStorage(root)));
    return st;
  };
  // Local roots go through the same port for reading earlier snapshots and carrying parts over.
  const anyStorage = async (root: string): Promise<Storage> => {
    if (isS3Root(root)) return storageOf(root);
    let st = storages.get(root);
    if (st === undefined) {
      const { LocalStorage } = await import('../output/storage/index.js');
      storages.set(root, (st = new LocalStorage(root)));
    }
    return st;
  };
  const manifests = new Map<string, Promise<Manifest>>();
  return {
    previousManifest: (root, snapshotId) => {
      const k = `${root}\n${snapshotId}`;
      let m = manifests.get(k);
      if (m === undefined) {
        m = anyStorage(root)
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
      return carryOverPart(await anyStorage(root), {
        ...req,
        ...(opts.tmpDir !== undefined && req.tmpDir === undefined ? { tmpDir: opts.tmpDir } : {}),
      });
    },
    closeOutput: async () => {
      const open = [...storages.values()];
      storages.clear();
      await Promise.all(open.map((st) => st.close()));
    },
    stagedBytes: async (root, file) => {
      // Absent: the part is fetched again. Unreadable (after retries): the attempt fails with its cause.
      const { isAbsent, retryRead } = await import('../output/storage/index.js');
      if (isS3Root(root)) {
        const st = storageOf(root);
        return (await retryRead(st.url(file), () => st.head(file)))?.bytes ?? null;
      }
      const path = join(root, file);
      const size = await retryRead(path, async () => (await stat(path)).size).catch((err: unknown) => {
        if (isAbsent(err)) return null;
        throw err;
      });
      return size;
    },
    createWriter: (req) => {
      const writerOpts = {
        snapshotId: req.snapshotId,
        dataset: req.dataset,
        ticker: req.ticker,
        lineage: { snapshotId: req.snapshotId, fetchedAt: req.fetchedAt, requestedTicker: req.ticker },
      };
      return isS3Root(req.root)
        ? createRemotePartWriter(storageOf(req.root), writerOpts, opts.tmpDir)
        : createPartWriter({ ...writerOpts, root: req.root });
    },
    convertSegment: async (req) => {
      if (isS3Root(req.root))
        return { status: 'skipped', reason: 'parts under a bucket are staged on their worker' };
      const { convertSegment } = await import('../output/index.js');
      return convertSegment(req, {
        ...(opts.rowGroupRows !== undefined ? { rowGroupRows: opts.rowGroupRows } : {}),
        duckdb: {
          ...(opts.publishMemoryMb !== undefined ? { memoryLimit: `${opts.publishMemoryMb}MB` } : {}),
          ...(opts.releaseFreedMemory === true ? { releaseFreedMemory: true } : {}),
        },
      });
    },
    publish: async (req) => {
      const { publishToStorage } = await import('../output/index.js');
      const remote = isS3Root(req.root);
      const publishOpts = {
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
        ...(opts.publishConversions !== undefined ? { conversions: opts.publishConversions } : {}),
        ...(req.incremental !== undefined ? { incremental: req.incremental } : {}),
        ...(req.changesAgainst !== undefined ? { changesAgainst: req.changesAgainst } : {}),
        duckdb: {
          ...(opts.publishMemoryMb !== undefined ? { memoryLimit: `${opts.publishMemoryMb}MB` } : {}),
          ...(opts.publishThreads !== undefined ? { threads: opts.publishThreads } : {}),
          ...(opts.releaseFreedMemory === true ? { releaseFreedMemory: true } : {}),
        },
      };
      const manifest = remote
        ? await publishToStorage(storageOf(req.root), {
            ...publishOpts,
            ...(opts.tmpDir !== undefined ? { tmpDir: opts.tmpDir } : {}),
          })
        : await publishLocal(req.root, publishOpts);
      const rows: Record<string, number> = {};
      for (const d of req.datasets) rows[d] = manifest.datasets[d]?.rows ?? 0;
      const manifestPath = remote
        ? storageOf(req.root).url(`_snapshots/${req.snapshotId}/manifest.json`)
        : join(req.root, '_snapshots', req.snapshotId, 'manifest.json');
      const missing = manifest.changes_missing?.reason;
      return { manifestPath, rows, ...(missing !== undefined ? { changesMissing: missing } : {}) };
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
