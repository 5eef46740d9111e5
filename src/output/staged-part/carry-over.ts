/**
 * Carrying a part over from an earlier published snapshot: its archived staged rows
 * (`_snapshots/<from>/parts/…`, kept by publish) are copied, never referenced, to this snapshot's
 * staging path, and checked against the size and sha256 the earlier manifest recorded. A missing or
 * altered archive is refused with the reason, and the caller fetches the part instead. On a local
 * root the archive is checked where it lies and hard-linked (LocalStorage.linkFile), not copied.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StorageError } from '../../errors.js';
import {
  hashFile,
  LocalStorage,
  isAbsent,
  removeTempDir,
  retryRead,
  type Storage,
} from '../storage/index.js';
import { toPosix } from '../catalog/index.js';
import { fieldsSidecarPath } from './layout.js';

/** Carrying a part over from an earlier published snapshot into this one's staging. */
export interface CarryOverRequest {
  /** Archive key of the earlier part (manifest part `archive`). */
  archive: string;
  bytes: number;
  sha256: string;
  /** This snapshot's staged part key. */
  to: string;
  /** Parent of the temp copy. @defaultValue os.tmpdir() */
  tmpDir?: string;
}

export type CarryOverResult = { ok: true } | { ok: false; reason: string };

export async function carryOverPart(storage: Storage, r: CarryOverRequest): Promise<CarryOverResult> {
  if (storage instanceof LocalStorage) return carryOverLocal(storage, r);
  const dir = await mkdtemp(join(r.tmpDir ?? tmpdir(), 'filings-export-reuse-'));
  try {
    const local = join(dir, 'part.ndjson.gz');
    try {
      await storage.download(r.archive, local);
    } catch (err: unknown) {
      if (err instanceof StorageError && err.code === 'STORAGE_NOT_FOUND')
        return { ok: false, reason: `${storage.url(r.archive)} is missing` };
      throw err;
    }
    const got = await hashFile(local);
    if (got.bytes !== r.bytes || got.sha256 !== r.sha256) return checksumFailure(storage, r, got);
    const sidecar = join(dir, 'part.fields.json');
    const sidecarKey = toPosix(fieldsSidecarPath(r.archive));
    // No sidecar is an answer (the publisher scans the part); one that cannot be read fails the carry-over.
    const hasSidecar = await retryRead(storage.url(sidecarKey), () =>
      storage.download(sidecarKey, sidecar),
    ).then(
      () => true,
      (err: unknown) => {
        if (isAbsent(err)) return false;
        throw err;
      },
    );
    // Sidecar first, as a writer stages it: a part is never there without its field kinds.
    if (hasSidecar) await storage.putFile(toPosix(fieldsSidecarPath(r.to)), sidecar);
    await storage.putFile(r.to, local);
    return { ok: true };
  } finally {
    await removeTempDir(dir);
  }
}

async function carryOverLocal(storage: LocalStorage, r: CarryOverRequest): Promise<CarryOverResult> {
  if ((await storage.head(r.archive)) === null)
    return { ok: false, reason: `${storage.url(r.archive)} is missing` };
  const got = await hashFile(storage.url(r.archive));
  if (got.bytes !== r.bytes || got.sha256 !== r.sha256) return checksumFailure(storage, r, got);
  const sidecar = toPosix(fieldsSidecarPath(r.archive));
  // Sidecar first, as a writer stages it: a part is never there without its field kinds.
  if ((await storage.head(sidecar)) !== null)
    await storage.linkFile(sidecar, toPosix(fieldsSidecarPath(r.to)));
  try {
    await storage.linkFile(r.archive, r.to);
  } catch (err: unknown) {
    if (err instanceof StorageError && err.code === 'STORAGE_NOT_FOUND')
      return { ok: false, reason: `${storage.url(r.archive)} is missing` };
    throw err;
  }
  return { ok: true };
}

function checksumFailure(
  storage: Storage,
  r: CarryOverRequest,
  got: { bytes: number; sha256: string },
): CarryOverResult {
  return {
    ok: false,
    reason: `${storage.url(r.archive)} fails its checksum (${got.bytes} bytes, sha256 ${got.sha256.slice(0, 12)}…; the manifest says ${r.bytes} bytes, ${r.sha256.slice(0, 12)}…)`,
  };
}

/**
 * Whether the published files a part is reused from are there at their manifest's size: one stat
 * or HEAD each, no bytes read. A missing or resized file is refused with the reason (fetched).
 */
export async function checkSourceFiles(
  storage: Storage,
  files: readonly { path: string; bytes: number }[],
): Promise<CarryOverResult> {
  for (const f of files) {
    const stored = await retryRead(storage.url(f.path), () => storage.head(f.path));
    if (stored === null) return { ok: false, reason: `${storage.url(f.path)} is missing` };
    if (stored.bytes !== f.bytes)
      return {
        ok: false,
        reason: `${storage.url(f.path)} holds ${stored.bytes} bytes, its manifest says ${f.bytes}`,
      };
  }
  return { ok: true };
}
