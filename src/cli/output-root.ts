/**
 * What `verify` and `ddl` share: the output root (from --out, else the config's output.dir,
 * FILINGS_EXPORT_OUT, `./out`) and the snapshot (given, else the latest published one).
 */
import { resolve } from 'node:path';
import { InputError } from '../errors.js';

export interface OutputCliOptions {
  out?: string;
  config?: string;
}

export async function outputRoot(o: OutputCliOptions): Promise<string> {
  const { loadConfig } = await import('../config/load.js');
  const config = loadConfig({
    ...(o.config !== undefined ? { configPath: o.config } : {}),
    flags: [{ path: 'output.dir', value: o.out, flag: '--out' }],
  });
  return resolve(config.output.dir);
}

export async function snapshotOrLatest(root: string, snapshot: string | undefined): Promise<string> {
  if (snapshot !== undefined) return snapshot;
  const { latestPublishedSnapshot } = await import('../output/index.js');
  const latest = await latestPublishedSnapshot(root);
  if (latest === undefined)
    throw new InputError(`no published snapshot under ${root} (give --out or a snapshot id)`);
  return latest;
}
