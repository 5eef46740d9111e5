/**
 * Carrying a part over from an earlier published snapshot: its archived staged rows
 * (`_snapshots/<from>/parts/…`, kept by publish) are copied, never referenced, to this snapshot's
 * staging path, and checked against the size and sha256 the earlier manifest recorded. A missing or
 * altered archive is refused with the reason, and the caller fetches the part instead.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StorageError } from '../errors.js';
import { hashFile } from './fs-util.js';
import { fieldsSidecarPath, toPosix } from './paths.js';
import type { Storage } from './storage/storage.js';

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
    if (got.bytes !== r.bytes || got.sha256 !== r.sha256)
      return {
        ok: false,
        reason: `${storage.url(r.archive)} fails its checksum (${got.bytes} bytes, sha256 ${got.sha256.slice(0, 12)}…; the manifest says ${r.bytes} bytes, ${r.sha256.slice(0, 12)}…)`,
      };
    const sidecar = join(dir, 'part.fields.json');
    const hasSidecar = await storage.download(toPosix(fieldsSidecarPath(r.archive)), sidecar).then(
      () => true,
      () => false,
    );
    // Sidecar first, as a writer stages it: a part is never there without its field kinds.
    if (hasSidecar) await storage.putFile(toPosix(fieldsSidecarPath(r.to)), sidecar);
    await storage.putFile(r.to, local);
    return { ok: true };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
