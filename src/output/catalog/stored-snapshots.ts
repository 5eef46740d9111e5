/**
 * Snapshots as the storage port sees them, for any output root (a directory or a bucket): which
 * snapshots exist and which objects belong to each, the latest published one, and a local copy of
 * one snapshot for the DuckDB readers (verify, the demo). Works on keys only, so a bucket needs
 * nothing but the S3 API.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import pLimit from 'p-limit';
import { coerceError, InputError } from '../../errors.js';
import { parseManifest, type Manifest } from './manifest.js';
import { MANIFEST_FILE, SNAPSHOTS_DIR, STAGING_DIR, SUCCESS_FILE } from './paths.js';
import {
  LocalStorage,
  retryRead,
  type ReadRetryOptions,
  joinKey,
  type Storage,
  type StoredObject,
} from '../storage/index.js';
import { inPublishOrder, type PublishStamp, publishedAfter } from './publish-order.js';
import { LATEST_KEY, readLatest } from './upload-snapshot.js';

/** Objects moved at once when downloading a snapshot. */
const CONCURRENCY = 4;

/** Reads a small object (manifest, pointer) as text. */
export async function readStoredText(storage: Storage, key: string): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of await storage.getStream(key)) chunks.push(typeof c === 'string' ? Buffer.from(c) : c);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The manifest of a snapshot; an InputError naming the object when it is missing or invalid. A
 * read that fails otherwise is retried, then rejects with `STORAGE_UNAVAILABLE` and its cause.
 */
export async function readStoredManifest(
  storage: Storage,
  snapshotId: string,
  retry?: ReadRetryOptions,
): Promise<Manifest> {
  const key = joinKey(SNAPSHOTS_DIR, snapshotId, MANIFEST_FILE);
  const text = await retryRead(
    storage.url(key),
    async () => ((await storage.head(key)) === null ? null : readStoredText(storage, key)),
    retry,
  );
  if (text === null)
    throw new InputError(
      `snapshot ${snapshotId} has no manifest at ${storage.url(key)}: it is not published`,
    );
  return parseManifest(text, storage.url(key), snapshotId);
}

/** Everything under the root that belongs to one snapshot. */
export interface StoredSnapshot {
  snapshotId: string;
  /** Its `_SUCCESS` marker exists: published, whatever its manifest says. */
  published: boolean;
  /** The manifest, when it exists and reads (published or not). */
  manifest: Manifest | null;
  /** Why its manifest exists but could not be used (invalid, cut short); such a snapshot is kept. */
  unreadable?: string;
  /** `_snapshots/<id>/…` (manifest, `_SUCCESS`). */
  meta: StoredObject[];
  /** `<dataset>/snapshot_date=…/snapshot_id=<id>/…`: the published data objects. */
  data: StoredObject[];
  /** `_staging/<id>/…`: staged parts and build files. */
  staging: StoredObject[];
}

const DATA_KEY = /^[a-z_]+\/snapshot_date=[^/]+\/snapshot_id=([^/]+)\//;

/**
 * Every snapshot with any object under the root, oldest first in publish order (publish-order.ts;
 * those without a readable manifest first, by id). One
 * listing of the root; manifests are read for snapshots that have one. An invalid manifest marks
 * its snapshot `unreadable` with the cause; a read that keeps failing (retried as `retry` says)
 * rejects with `STORAGE_UNAVAILABLE` rather than guess what the snapshot is.
 */
export async function listStoredSnapshots(
  storage: Storage,
  retry?: ReadRetryOptions,
): Promise<StoredSnapshot[]> {
  return snapshotsUnder(storage, '', retry);
}

/**
 * The published snapshots (manifest read, `_SUCCESS` present), oldest first in publish order, from
 * `_snapshots/` alone: what a commit's catch-up needs, without listing every data and staged file.
 */
export async function listPublishedSnapshots(
  storage: Storage,
  retry?: ReadRetryOptions,
): Promise<Manifest[]> {
  const listing = await snapshotsUnder(storage, `${SNAPSHOTS_DIR}/`, retry);
  return listing.flatMap((s) => (s.published && s.manifest !== null ? [s.manifest] : []));
}

/** listStoredSnapshots of the objects under `prefix` only (`_snapshots/`: what publish order needs). */
async function snapshotsUnder(
  storage: Storage,
  prefix: string,
  retry?: ReadRetryOptions,
): Promise<StoredSnapshot[]> {
  const byId = new Map<string, StoredSnapshot>();
  const entry = (id: string): StoredSnapshot => {
    let s = byId.get(id);
    if (s === undefined) {
      s = { snapshotId: id, published: false, manifest: null, meta: [], data: [], staging: [] };
      byId.set(id, s);
    }
    return s;
  };
  for (const o of await retryRead(`the listing of ${storage.root}`, () => storage.list(prefix), retry)) {
    const [top, id] = o.key.split('/');
    if (top === SNAPSHOTS_DIR && id !== undefined) entry(id).meta.push(o);
    else if (top === STAGING_DIR && id !== undefined) entry(id).staging.push(o);
    else {
      const m = DATA_KEY.exec(o.key);
      if (m?.[1] !== undefined) entry(m[1]).data.push(o);
    }
  }
  for (const s of byId.values()) {
    const names = new Set(s.meta.map((o) => o.key.split('/').slice(2).join('/')));
    if (names.has(MANIFEST_FILE)) {
      try {
        s.manifest = await readStoredManifest(storage, s.snapshotId, retry);
      } catch (err: unknown) {
        // Only an answer about the manifest itself is recorded; a storage that cannot be read stops the listing.
        if (!(err instanceof InputError)) throw err;
        s.unreadable = `its manifest could not be used: ${coerceError(err).message}`;
      }
    }
    s.published = names.has(SUCCESS_FILE);
  }
  return inPublishOrder([...byId.values()], stampOf);
}

/** What publish order reads of a stored snapshot. */
export function stampOf(s: StoredSnapshot): PublishStamp {
  return { snapshot_id: s.snapshotId, published_at: s.manifest?.published_at };
}

/**
 * The newest published snapshot of a listing (listStoredSnapshots): the one the `latest` pointer
 * names when it is published there, else the last published in publish order. What every command
 * that lists the root calls newest, so it agrees with those that read only the pointer.
 */
export function newestInListing(
  listing: readonly StoredSnapshot[],
  pointerId: string | undefined,
): StoredSnapshot | undefined {
  const published = listing.filter((s) => s.published && s.manifest !== null);
  const named = published.find((s) => s.snapshotId === pointerId);
  if (named !== undefined) return named;
  return inPublishOrder(published, stampOf).at(-1);
}

/**
 * The newest published snapshot: the `latest` pointer when it names one whose `_SUCCESS` exists
 * (one small read), else the one published last (publish-order.ts), from `_snapshots/` alone: a
 * first run's tens of thousands of staged files are never listed for it.
 */
export async function latestStoredSnapshot(
  storage: Storage,
  retry?: ReadRetryOptions,
): Promise<string | undefined> {
  const pointer = await readLatest(storage, retry);
  if (
    pointer !== undefined &&
    (await storage.head(joinKey(SNAPSHOTS_DIR, pointer.snapshot_id, SUCCESS_FILE))) !== null
  )
    return pointer.snapshot_id;
  return newestInListing(await snapshotsUnder(storage, `${SNAPSHOTS_DIR}/`, retry), undefined)?.snapshotId;
}

/** latestStoredSnapshot of a local root given by its path. */
export async function latestPublishedSnapshot(root: string): Promise<string | undefined> {
  const storage = new LocalStorage(root);
  try {
    return await latestStoredSnapshot(storage);
  } finally {
    await storage.close();
  }
}

/**
 * Copies one snapshot into `localRoot` in the same layout: its manifest and `_SUCCESS`, and with
 * `data` every object in its partition folders (the manifest's files and any stray ones, so a
 * verify can flag them). A missing or short object stays missing or short: the reader catches it.
 * Disk use is the snapshot's size; memory stays bounded (each object is streamed to a file).
 */
export async function copySnapshotToLocal(
  storage: Storage,
  snapshotId: string,
  localRoot: string,
  opts: { data: boolean },
): Promise<{ objects: number; bytes: number }> {
  // The manifest and marker only: the parts' archives are for reuse, not for readers.
  const meta = (await storage.list(`${joinKey(SNAPSHOTS_DIR, snapshotId)}/`)).filter(
    (o) => o.key.split('/').length === 3,
  );
  let keys = meta.map((o) => o.key);
  if (opts.data) {
    const manifest = meta.some((o) => o.key.endsWith(`/${MANIFEST_FILE}`))
      ? await readStoredManifest(storage, snapshotId)
      : null;
    const prefixes = new Set<string>();
    for (const f of [...(manifest?.files ?? []), ...(manifest?.changes?.files ?? [])])
      prefixes.add(`${f.path.split('/').slice(0, 3).join('/')}/`);
    for (const prefix of prefixes) keys = keys.concat((await storage.list(prefix)).map((o) => o.key));
  }
  const limit = pLimit(CONCURRENCY);
  const sizes = await Promise.all(
    keys
      .filter((k) => k !== LATEST_KEY)
      .map((key) =>
        limit(async () => {
          const dst = join(localRoot, ...key.split('/'));
          await mkdir(dirname(dst), { recursive: true });
          return (await storage.download(key, dst)).bytes;
        }),
      ),
  );
  return { objects: sizes.length, bytes: sizes.reduce((a, b) => a + b, 0) };
}

/**
 * Runs `fn` over a local directory holding the snapshot in the root's layout: a local root as it
 * is, a bucket copied into a temp dir under `tmpDir` (removed afterwards, on every path). `data`
 * false copies only the manifest and `_SUCCESS` (what ddl reads).
 */
export async function withLocalSnapshot<T>(
  storage: Storage,
  snapshotId: string,
  opts: { data: boolean; tmpDir?: string },
  fn: (localRoot: string) => Promise<T>,
): Promise<T> {
  if (storage.kind === 'local') return fn(storage.root);
  const local = await mkdtemp(join(opts.tmpDir ?? tmpdir(), 'filings-export-read-'));
  try {
    await copySnapshotToLocal(storage, snapshotId, local, { data: opts.data });
    return await fn(local);
  } finally {
    await rm(local, { recursive: true, force: true });
  }
}

/**
 * The newest published snapshot under the root other than `excludeId` (publish-order.ts), with its
 * manifest; undefined when there is none. What an incremental night reuses from and compares with,
 * whatever its label date: only published snapshots count, one still running is never a source.
 */
export async function newestPublishedOtherThan(
  storage: Storage,
  excludeId: string,
  retry?: ReadRetryOptions,
): Promise<Manifest | undefined> {
  const published = async (id: string): Promise<boolean> =>
    (await storage.head(joinKey(SNAPSHOTS_DIR, id, SUCCESS_FILE))) !== null;
  // Nightly, the `latest` pointer is the answer: one small read instead of a listing.
  const pointer = await readLatest(storage, retry);
  if (pointer !== undefined && pointer.snapshot_id !== excludeId && (await published(pointer.snapshot_id)))
    return readStoredManifest(storage, pointer.snapshot_id, retry);
  // Otherwise (no pointer, or it names this snapshot, being retried): the `_snapshots/` markers, not the data.
  const names = new Map<string, Set<string>>();
  for (const o of await storage.list(`${SNAPSHOTS_DIR}/`)) {
    const [, id, name] = o.key.split('/');
    if (id === undefined || name === undefined) continue;
    names.set(id, (names.get(id) ?? new Set()).add(name));
  }
  let best: Manifest | undefined;
  for (const [id, files] of names) {
    if (id === excludeId || !files.has(SUCCESS_FILE) || !files.has(MANIFEST_FILE)) continue;
    // A storage that cannot be read fails the night (retried first) rather than pick an older source.
    const m = await readStoredManifest(storage, id, retry).catch((err: unknown) => {
      if (err instanceof InputError) return undefined; // an invalid manifest: its age is unknown, never a source
      throw err;
    });
    if (m !== undefined && (best === undefined || publishedAfter(m, best))) best = m;
  }
  return best;
}
