/**
 * The storage port of the output layer: the few object operations publishing, verifying and
 * pruning need, over either a local directory or an S3-compatible bucket. Keys are relative,
 * `/`-separated, never starting with `/`; the root (directory or `bucket/prefix`) is fixed per instance.
 */

import { StorageError } from '../../errors.js';

/** What a listing or a head returns for one object. */
export interface StoredObject {
  /** Key relative to the root, `/`-separated. */
  key: string;
  /** Exact size in bytes. */
  bytes: number;
  /** Last modification (listings only; retention tells abandoned staging from live by it). */
  modifiedMs?: number;
}

export interface Storage {
  /** `local` or `s3`: lets callers print the right URL form (ddl) without inspecting the root. */
  readonly kind: 'local' | 's3';
  /** The root as the user gave it, normalised: an absolute directory or `s3://bucket/prefix`. */
  readonly root: string;
  /** URL of a key for readers: an absolute path, or `s3://bucket/prefix/key`. */
  url(key: string): string;
  /**
   * Stores a local file under `key`, streamed (never held whole in memory). The object appears
   * complete or not at all: local storage renames a synced temp file, S3 completes (or aborts) a
   * multipart upload. Returns the stored size.
   */
  putFile(key: string, localPath: string, opts?: { signal?: AbortSignal }): Promise<StoredObject>;
  /**
   * Stores small bytes (manifest, `_SUCCESS`, the latest pointer) the same way. `ifAbsent`: only
   * when no object has the key, else a retryable StorageError naming it: an exclusive
   * link on a local root, `If-None-Match: *` on a bucket (a store that ignores the header
   * overwrites; callers check with head() first).
   */
  putBytes(key: string, data: string | Uint8Array, opts?: { ifAbsent?: boolean }): Promise<StoredObject>;
  /** The object as a stream; rejects with a not-found StorageError when it does not exist. */
  getStream(key: string): Promise<NodeJS.ReadableStream>;
  /** Copies the object to a local file (temp + rename), returns its size. */
  download(key: string, localPath: string): Promise<StoredObject>;
  /**
   * Copies an object to another key without moving its bytes through this process: a hard link
   * on a local root, a server-side CopyObject on a bucket. Rejects with a not-found StorageError
   * when `from` does not exist. Returns the stored size.
   */
  copy(from: string, to: string): Promise<StoredObject>;
  /** Size of the object, or null when there is none. */
  head(key: string): Promise<StoredObject | null>;
  /** Every object under `prefix` (a key prefix, `''` for all), all pages, sorted by key. */
  list(prefix: string): Promise<StoredObject[]>;
  /** Deletes the keys (batched for S3); missing keys are not an error. */
  delete(keys: readonly string[]): Promise<void>;
  /** Releases connections. */
  close(): Promise<void>;
}

/** Joins key segments with `/`, dropping empty ones and stray slashes. */
export function joinKey(...parts: string[]): string {
  return parts
    .flatMap((p) => p.split('/'))
    .filter((p) => p !== '')
    .join('/');
}

/** Rejects keys that could escape the root or mean two things. */
export function checkKey(key: string): string {
  if (key === '' || key.startsWith('/') || key.split('/').some((s) => s === '' || s === '.' || s === '..'))
    throw new Error(`invalid storage key ${JSON.stringify(key)}`);
  return key;
}

/** The error of a `putBytes(…, { ifAbsent: true })` that found the key taken. */
export function existsAlready(url: string, cause?: unknown): StorageError {
  return new StorageError(
    'STORAGE_UNAVAILABLE',
    `${url} exists already: another writer stored it first`,
    true,
    {
      cause,
    },
  );
}
