/**
 * Checks an output root before anything is enqueued: one clear line naming the path and the
 * reason (not a directory, no permission, read-only, disk full) instead of every part failing.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { localFault } from './writer/index.js';
import { checkStorage, type S3Settings, isS3Root } from '../storage/index.js';

/** Either preflight, by the root's kind: a bucket gets checkStorage (bucket, credentials, endpoint). */
export async function checkAnyOutputRoot(root: string, s3: S3Settings): Promise<void> {
  if (isS3Root(root)) await checkStorage(root, { settings: s3 });
  else await checkOutputRoot(root);
}

/** Creates the root if needed and writes, then removes, a small probe file in its staging area. */
export async function checkOutputRoot(root: string): Promise<void> {
  const abs = resolve(root);
  const staging = join(abs, '_staging');
  try {
    await mkdir(staging, { recursive: true });
  } catch (err: unknown) {
    throw localFault(`output root ${abs} cannot be used`, err);
  }
  const probe = join(staging, `.write-check-${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    await writeFile(probe, 'filings-export write check\n');
  } catch (err: unknown) {
    throw localFault(`output root ${abs} is not writable`, err);
  } finally {
    await rm(probe, { force: true });
  }
}
