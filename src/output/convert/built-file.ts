/**
 * A file built for a snapshot's partition (converted from staged parts, or rebuilt from an earlier
 * snapshot's files), fsynced, with what its manifest entry records.
 */
import { stat } from 'node:fs/promises';
import { OutputError } from '../../errors.js';
import type { OutputFormat } from '../../types.js';
import type { FileCompany } from '../catalog/index.js';
import { fsyncFile, hashFile } from '../storage/index.js';

export interface BuiltFile {
  /** File name inside the partition folder. */
  name: string;
  format: OutputFormat;
  rows: number;
  bytes: number;
  sha256: string;
  min_period_end?: string | null;
  max_period_end?: string | null;
  /** The companies of the file (parts with a ticker only). */
  companies?: FileCompany[];
}

/** Fsyncs a built file and records its size and sha256. */
export async function finishFile(
  path: string,
  name: string,
  format: OutputFormat,
  rows: number,
  dates: Pick<BuiltFile, 'min_period_end' | 'max_period_end' | 'companies'>,
): Promise<BuiltFile> {
  await fsyncFile(path);
  const { sha256, bytes } = await hashFile(path);
  const size = (await stat(path)).size;
  if (size !== bytes) throw new OutputError('OUTPUT_FAILED', `${path} changed while it was hashed`);
  return { name, format, rows, bytes, sha256, ...dates };
}
