/**
 * A storage wrapper whose reads of chosen keys fail the way a flaky network fails them (a real
 * storage underneath, nothing mocked but the fault): `head`, `getStream` and `download` of a key
 * `failing` accepts throw ECONNRESET. Deletes are recorded, not done, so a test can prove nothing
 * was removed.
 */
import type { Storage } from '../../src/output/storage/storage.js';

export interface FlakyState {
  /** Reads that were made to fail. */
  failures: number;
  /** Keys a caller asked to delete. */
  deleted: string[];
}

export function flakyReads(
  inner: Storage,
  failing: (key: string) => boolean,
): Storage & { state: FlakyState } {
  const state: FlakyState = { failures: 0, deleted: [] };
  const fail = (key: string): void => {
    if (!failing(key)) return;
    state.failures += 1;
    throw Object.assign(new Error(`read ECONNRESET on ${key}`), { code: 'ECONNRESET' });
  };
  return {
    kind: inner.kind,
    root: inner.root,
    state,
    url: (key) => inner.url(key),
    putFile: (key, path, opts) => inner.putFile(key, path, opts),
    putBytes: (key, data, opts) => inner.putBytes(key, data, opts),
    copy: async (from, to) => (fail(from), inner.copy(from, to)),
    head: async (key) => (fail(key), inner.head(key)),
    getStream: async (key) => (fail(key), inner.getStream(key)),
    download: async (key, path) => (fail(key), inner.download(key, path)),
    list: (prefix) => inner.list(prefix),
    delete: async (keys) => void state.deleted.push(...keys),
    close: () => inner.close(),
  };
}
