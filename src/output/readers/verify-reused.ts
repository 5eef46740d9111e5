/**
 * What `verify` checks of a file reused whole from an earlier snapshot: its sha256 is the one the
 * source's manifest recorded for `reused_from.path`, and, while the source file is still there,
 * the source's bytes hash the same. A pruned source is no problem: the reuser holds its own copy
 * (a hard link or a server-side copy), so only its own bytes are checked then.
 */
import { join } from 'node:path';
import { coerceError } from '../../errors.js';
import { readManifest, type Manifest, type ManifestFile } from '../catalog/index.js';
import { hashFile, isAbsent } from '../storage/index.js';

/** Source manifests read once per verify (undefined: the source is gone). */
export type SourceManifests = Map<string, Promise<Manifest | undefined>>;

export async function reusedFileProblems(
  root: string,
  f: ManifestFile,
  sha256: string,
  sources: SourceManifests,
): Promise<string[]> {
  const from = f.reused_from;
  if (from === undefined) return [];
  let source = sources.get(from.snapshot_id);
  if (source === undefined) {
    source = readManifest(root, from.snapshot_id).catch(() => undefined);
    sources.set(from.snapshot_id, source);
  }
  const manifest = await source;
  if (manifest === undefined) return []; // pruned: this snapshot's own copy stands alone
  const entry = manifest.files.find((g) => g.path === from.path);
  if (entry === undefined) return [`reused from ${from.snapshot_id}, whose manifest lists no ${from.path}`];
  const problems: string[] = [];
  if (entry.sha256 !== f.sha256)
    problems.push(`sha256 ${f.sha256} is not ${from.snapshot_id}'s ${entry.sha256} for ${from.path}`);
  try {
    const there = await hashFile(join(root, from.path));
    if (there.sha256 !== sha256)
      problems.push(`${from.path} of ${from.snapshot_id} hashes ${there.sha256}, not this file's ${sha256}`);
  } catch (err: unknown) {
    if (!isAbsent(err))
      problems.push(`${from.path} of ${from.snapshot_id} could not be read: ${coerceError(err).message}`);
  }
  return problems;
}
