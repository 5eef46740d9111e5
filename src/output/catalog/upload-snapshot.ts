/**
 * Puts a snapshot built in a local directory onto an output storage in the order readers rely
 * on: every data object (uploaded, then headed and size-checked), then the manifest, then
 * `_SUCCESS`, then the root's `latest` pointer. A snapshot therefore never lists an object that is
 * not fully uploaded, and `latest` only ever names a snapshot whose `_SUCCESS` exists.
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import pLimit from 'p-limit';
import { OutputError } from '../../errors.js';
import type { Manifest } from './manifest.js';
import { publishedAfter } from './publish-order.js';
import { MANIFEST_FILE, SNAPSHOTS_DIR, SUCCESS_FILE } from './paths.js';
import { isAbsent, retryRead, type ReadRetryOptions, joinKey, type Storage } from '../storage/index.js';

/** Key of the pointer naming the newest published snapshot, under the root. */
export const LATEST_KEY = 'latest';

/** How the pointer was moved: only ever forward in publish order (publish-order.ts). */
export const LATEST_ORDER = 'published_at';

/** What the `latest` pointer object holds (JSON). */
export interface LatestPointer {
  snapshot_id: string;
  snapshot_date: string;
  manifest: string;
  /** The manifest's `published_at`: the pointer's place in publish order. */
  published_at: string;
  /**
   * `published_at`: moved by publish order. Absent in pointers written by versions that moved it
   * by label date; readLatest ignores those, so readers list the root instead.
   */
  order: typeof LATEST_ORDER;
}

export interface UploadSnapshotOptions {
  /** Local directory holding the built snapshot (the manifest's paths are relative to it). */
  localRoot: string;
  storage: Storage;
  manifest: Manifest;
  /** Data objects uploaded at once. @defaultValue 4 */
  concurrency?: number;
  /**
   * The files holding an archived part (a staged part's layout, src/output/staged-part/layout.ts
   * stagedPartFiles); one absent is skipped. @defaultValue the archive alone
   */
  archivedFiles?: (archive: string) => readonly string[];
}

/** Uploads the data objects, manifest, `_SUCCESS` and `latest`, in that order. */
export async function uploadSnapshot(o: UploadSnapshotOptions): Promise<LatestPointer> {
  const { storage, manifest } = o;
  const id = manifest.snapshot_id;
  const limit = pLimit(o.concurrency ?? 4);
  await Promise.all(
    manifest.files.map((f) =>
      limit(async () => {
        // A file reused whole is copied server-side from its source, never through this process.
        if (f.reused_from !== undefined)
          await storage.copy(f.reused_from.path, f.path).catch((err: unknown) => {
            if (!isAbsent(err)) throw err;
            throw new OutputError(
              'REUSE_SOURCE_CHANGED',
              `${storage.url(f.reused_from!.path)}, reused by ${id}, is missing; nothing was published: retry the snapshot (run --retry), and the parts it held are fetched`,
              { cause: err },
            );
          });
        else await storage.putFile(f.path, join(o.localRoot, ...f.path.split('/')));
        // The manifest is written only once each object it names is there at its full size.
        const stored = await storage.head(f.path);
        if (stored === null || stored.bytes !== f.bytes) {
          throw new OutputError(
            'OUTPUT_FAILED',
            `${storage.url(f.path)}: stored ${stored === null ? 'nothing' : `${stored.bytes} bytes`}, expected ${f.bytes}`,
          );
        }
      }),
    ),
  );
  // The parts' archived staged rows (what the next night reuses), also before the manifest names them.
  for (const f of manifest.changes?.files ?? [])
    await storage.putFile(f.path, join(o.localRoot, ...f.path.split('/')));
  const filesOf = o.archivedFiles ?? ((a: string) => [a]);
  const archived = manifest.parts.flatMap((p) => (p.archive === undefined ? [] : filesOf(p.archive)));
  await Promise.all(
    archived.map((key) =>
      limit(async () => {
        const local = join(o.localRoot, ...key.split('/'));
        try {
          await retryRead(local, () => stat(local));
        } catch (err: unknown) {
          if (isAbsent(err)) return; // a part archived without its field kinds
          throw err;
        }
        await storage.putFile(key, local);
      }),
    ),
  );
  const manifestKey = joinKey(SNAPSHOTS_DIR, id, MANIFEST_FILE);
  await storage.putBytes(manifestKey, `${JSON.stringify(manifest, null, 2)}\n`);
  await storage.putBytes(joinKey(SNAPSHOTS_DIR, id, SUCCESS_FILE), '');
  return writeLatest(storage, manifest);
}

/**
 * Points `latest` at a snapshot whose `_SUCCESS` is written (call only after it), unless the
 * pointer already names one published after it: a slow upload of a snapshot whose manifest was
 * written first leaves a newer pointer alone. The label date plays no part.
 */
export async function writeLatest(storage: Storage, manifest: Manifest): Promise<LatestPointer> {
  const pointer: LatestPointer = {
    snapshot_id: manifest.snapshot_id,
    snapshot_date: manifest.snapshot_date,
    manifest: joinKey(SNAPSHOTS_DIR, manifest.snapshot_id, MANIFEST_FILE),
    published_at: manifest.published_at,
    order: LATEST_ORDER,
  };
  const current = await readLatest(storage);
  if (current === undefined || !publishedAfter(current, pointer))
    await storage.putBytes(LATEST_KEY, `${JSON.stringify(pointer)}\n`);
  return pointer;
}

/**
 * The `latest` pointer, or undefined when the root has none, an invalid one or one written by a
 * version that moved it by label date (callers then list the markers; the next publish rewrites
 * it). A read that keeps failing rejects with its cause (output/storage/read-retry.ts).
 */
export async function readLatest(
  storage: Storage,
  retry?: ReadRetryOptions,
): Promise<LatestPointer | undefined> {
  const text = await retryRead(
    storage.url(LATEST_KEY),
    async () => {
      if ((await storage.head(LATEST_KEY)) === null) return undefined;
      const chunks: Buffer[] = [];
      for await (const c of await storage.getStream(LATEST_KEY))
        chunks.push(typeof c === 'string' ? Buffer.from(c) : c);
      return Buffer.concat(chunks).toString('utf8');
    },
    retry,
  );
  if (text === undefined) return undefined;
  try {
    const parsed = JSON.parse(text) as Partial<LatestPointer>;
    return typeof parsed.snapshot_id === 'string' &&
      typeof parsed.snapshot_date === 'string' &&
      parsed.order === LATEST_ORDER
      ? (parsed as LatestPointer)
      : undefined;
  } catch {
    return undefined;
  }
}
