/**
 * What the commands that read an output root share (verify, ddl, prune, the demo): the root (from
 * --out, else the config's output.dir, FILINGS_EXPORT_OUT, `./out`) opened through the storage
 * port, so a directory and an `s3://` bucket read the same way, and the snapshot (given, else the
 * latest published one).
 */
import { InputError } from '../errors.js';
import type { Config, FlagOverride } from '../config/load.js';
import type { Storage } from '../output/index.js';

export interface OutputCliOptions {
  out?: string;
  config?: string;
}

export interface OpenedRoot {
  storage: Storage;
  config: Config;
  /** Local scratch for copies of a bucket's snapshot (worker.tmp_dir), when set. */
  tmpDir: string | undefined;
  close(): Promise<void>;
}

/** The --out flag as a config layer. */
export function outFlag(o: OutputCliOptions): FlagOverride[] {
  return [{ path: 'output.dir', value: o.out, flag: '--out' }];
}

export async function openOutputRoot(o: OutputCliOptions, loaded?: Config): Promise<OpenedRoot> {
  const [{ loadConfig }, { openStorage, s3Settings }] = await Promise.all([
    import('../config/load.js'),
    import('../output/index.js'),
  ]);
  const config =
    loaded ?? loadConfig({ ...(o.config !== undefined ? { configPath: o.config } : {}), flags: outFlag(o) });
  const storage = openStorage(config.output.dir, { settings: s3Settings(config.output) });
  return { storage, config, tmpDir: config.worker.tmp_dir ?? undefined, close: () => storage.close() };
}

export async function snapshotOrLatest(storage: Storage, snapshot: string | undefined): Promise<string> {
  if (snapshot !== undefined) return snapshot;
  const { latestStoredSnapshot } = await import('../output/index.js');
  const latest = await latestStoredSnapshot(storage);
  if (latest === undefined)
    throw new InputError(`no published snapshot under ${storage.root} (give --out or a snapshot id)`);
  return latest;
}
