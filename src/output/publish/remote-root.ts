/**
 * Staging and publishing for an output root that is not a local directory (an `s3://` bucket):
 * work happens in a local temp directory with today's code, and objects move through the
 * storage port. A part is staged locally, then put under its staging key
 * (src/output/staged-part/writer/bucket-part-writer.ts); the publisher downloads the staged parts, builds the snapshot with DuckDB in its temp
 * dir, and uploads it in reader order (uploadSnapshot). Temp dirs are removed on every path.
 */
import { mkdtempSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import pLimit from 'p-limit';
import { coerceError } from '../../errors.js';
import type { DatasetName } from '../../types.js';
import { CHANGE_SOURCES } from './changes.js';
import {
  type Manifest,
  type ManifestFile,
  MANIFEST_FILE,
  SCHEMAS_DIR,
  SNAPSHOTS_DIR,
  STAGING_DIR,
  SUCCESS_FILE,
  toPosix,
  readStoredManifest,
  uploadSnapshot,
} from '../catalog/index.js';
import { stagedPartFiles } from '../staged-part/index.js';
import type { PublishOptions } from './publish.js';
import { reusedFromFiles, sourceChanged, type ReuseSource } from './reuse-plan.js';
import {
  isAbsent,
  joinKey,
  removeTempDir,
  retryRead,
  type ReadRetryOptions,
  type Storage,
} from '../storage/index.js';

/** Objects moved at once when downloading staged parts or deleting staging. */
const CONCURRENCY = 4;

function tempRoot(tmpDir: string | undefined, what: string): string {
  return mkdtempSync(join(tmpDir ?? tmpdir(), `filings-export-${what}-`));
}

export interface RemotePublishOptions extends Omit<
  PublishOptions,
  'root' | 'keepStaging' | 'changesUnavailable'
> {
  /** Where the publisher's temp dir goes. @defaultValue os.tmpdir() */
  tmpDir?: string;
  /** How reads of staged parts and of the previous snapshot (for `changes`) are retried. @defaultValue retryRead's */
  readRetry?: ReadRetryOptions;
}

/**
 * Promise.all that rejects (with the first failure) only once every download has ended: one still
 * writing into the temp root while the caller removes a folder of it would fail that removal
 * (ENOTEMPTY) or land a file after it.
 */
async function allEnded(downloads: readonly Promise<unknown>[]): Promise<void> {
  const failed = (await Promise.allSettled(downloads)).find((r) => r.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
}

/**
 * Publishes a snapshot whose parts are staged on `storage`. Already published (its `_SUCCESS`
 * exists): returns the stored manifest. On failure the staging stays for --retry.
 */
export async function publishToStorage(storage: Storage, o: RemotePublishOptions): Promise<Manifest> {
  const id = o.snapshotId;
  if ((await storage.head(joinKey(SNAPSHOTS_DIR, id, SUCCESS_FILE))) !== null)
    return readStoredManifest(storage, id);
  const local = tempRoot(o.tmpDir, 'publish');
  try {
    const limit = pLimit(CONCURRENCY);
    const keys = o.parts.flatMap((p) =>
      p.status === 'done' && p.rows > 0 && p.file !== undefined ? stagedPartFiles(p.file).map(toPosix) : [],
    );
    const datasets = [...new Set(o.parts.map((p) => p.dataset))];
    const schemaKeys = datasets.map((d: DatasetName) => joinKey(SCHEMAS_DIR, `${d}.json`));
    await allEnded(
      [...keys, ...schemaKeys].map((key) =>
        limit(async () => {
          // A part's missing field kinds or a missing schema is fine (scanned / created); a missing part fails in the check.
          // Any other read failure is retried, then fails the publish with its cause.
          const dst = join(local, ...key.split('/'));
          await retryRead(
            storage.url(key),
            async () => {
              if ((await storage.head(key)) === null) return;
              await mkdir(dirname(dst), { recursive: true });
              await storage.download(key, dst);
            },
            o.readRetry,
          ).catch((err: unknown) => {
            if (!isAbsent(err)) throw err; // gone between head and download: as if missing
          });
        }),
      ),
    );
    // Only the files holding a company that may have changed are compared (changes.ts).
    const fetched = new Set(
      o.parts.filter((p) => p.reusedFrom !== o.changesAgainst).map((p) => `${p.dataset}/${p.ticker}`),
    );
    const unavailable =
      o.changesAgainst === undefined
        ? undefined
        : await fetchForChanges(storage, o.changesAgainst, local, limit, o.readRetry, fetched);
    const reuseFrom = o.parts.find(reusedFromFiles)?.reusedFrom;
    const reuseSource =
      reuseFrom === undefined ? undefined : await bucketReuseSource(storage, reuseFrom, local, o.readRetry);
    // DuckDB loads with the publisher only: a worker that only stages parts never carries it.
    const { publishSnapshot } = await import('./publish.js');
    const { tmpDir: _tmpDir, readRetry: _readRetry, ...publish } = o;
    const manifest = await publishSnapshot({
      ...publish,
      root: local,
      keepStaging: false,
      ...(unavailable !== undefined ? { changesUnavailable: unavailable } : {}),
      ...(reuseSource !== undefined ? { reuseSource } : {}),
    });
    // Schemas first: a reader of the manifest may look its schema version up.
    await Promise.all(
      schemaKeys.map((key) =>
        limit(async () => {
          const path = join(local, ...key.split('/'));
          await storage.putFile(key, path).catch((err: unknown) => {
            if ((err as { code?: string }).code !== 'ENOENT') throw err;
          });
        }),
      ),
    );
    await uploadSnapshot({ localRoot: local, storage, manifest, archivedFiles: stagedPartFiles });
    const staging = await storage.list(`${joinKey(STAGING_DIR, id)}/`);
    await storage.delete(staging.map((s) => s.key));
    return manifest;
  } finally {
    // The snapshot is on the bucket by now, or the publish failed for its own reason: a temp
    // folder left behind must change neither.
    await removeTempDir(local, { warn: (fields, msg) => o.logger?.warn(fields, msg) });
  }
}

/**
 * The previous snapshot's manifest and facts Parquet, copied into the publisher's temp root so the
 * `changes` dataset can be computed there. Returns why they could not be (the snapshot is gone, or
 * reads kept failing after their retries); the publisher then publishes without changes and its
 * manifest says why. Nothing partly copied is used: the reason is returned instead.
 */
async function fetchForChanges(
  storage: Storage,
  previousId: string,
  local: string,
  limit: ReturnType<typeof pLimit>,
  retry: ReadRetryOptions | undefined,
  fetched: ReadonlySet<string>,
): Promise<string | undefined> {
  let previous: Manifest;
  try {
    previous = await readStoredManifest(storage, previousId, retry);
  } catch (err: unknown) {
    return `previous snapshot ${previousId}: ${coerceError(err).message}`;
  }
  const manifestKey = joinKey(SNAPSHOTS_DIR, previousId, MANIFEST_FILE);
  const keys = [
    manifestKey,
    ...previous.files
      .filter((f) => f.format === 'parquet' && CHANGE_SOURCES.includes(f.dataset))
      .filter(
        (f) => f.companies === undefined || f.companies.some((c) => fetched.has(`${f.dataset}/${c.ticker}`)),
      )
      .map((f) => f.path),
  ];
  try {
    await allEnded(
      keys.map((key) =>
        limit(async () => {
          const dst = join(local, ...key.split('/'));
          await mkdir(dirname(dst), { recursive: true });
          await retryRead(storage.url(key), () => storage.download(key, dst), retry);
        }),
      ),
    );
  } catch (err: unknown) {
    await rm(join(local, SNAPSHOTS_DIR, previousId), { recursive: true, force: true });
    return `previous snapshot ${previousId}: ${coerceError(err).message}`;
  }
  return undefined;
}

/**
 * The source snapshot on the bucket: a file reused whole is only checked here (HEAD, its size)
 * and copied server-side by the upload; a file rebuilt from is downloaded once, sized, and hashed
 * by the rebuild (checkedSources).
 */
async function bucketReuseSource(
  storage: Storage,
  snapshotId: string,
  local: string,
  retry: ReadRetryOptions | undefined,
): Promise<ReuseSource> {
  let manifest: Manifest;
  try {
    manifest = await readStoredManifest(storage, snapshotId, retry);
  } catch (err: unknown) {
    throw sourceChanged(
      snapshotId,
      joinKey(SNAPSHOTS_DIR, snapshotId, MANIFEST_FILE),
      `cannot be read (${coerceError(err).message})`,
    );
  }
  const sized = async (f: ManifestFile): Promise<void> => {
    const stored = await retryRead(storage.url(f.path), () => storage.head(f.path), retry);
    if (stored === null) throw sourceChanged(snapshotId, f.path, 'is missing');
    if (stored.bytes !== f.bytes)
      throw sourceChanged(snapshotId, f.path, `holds ${stored.bytes} bytes, its manifest says ${f.bytes}`);
  };
  return {
    manifest,
    placeWhole: async (f) => (await sized(f), false),
    readable: async (f) => {
      await sized(f);
      const dst = join(local, '_reuse', ...f.path.split('/'));
      await retryRead(storage.url(f.path), () => storage.download(f.path, dst), retry);
      return dst; // sized here, hashed by the rebuild beside its work (checkedSources)
    },
  };
}
