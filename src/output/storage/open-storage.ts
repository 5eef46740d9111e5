/** Opens the storage for an output root: `./out`, `/abs/dir` or `s3://bucket/prefix`. */
import { resolve } from 'node:path';
import { ConfigError } from '../../errors.js';
import { LocalStorage } from './local-storage.js';
import type { Config } from '../../config/load.js';
import { S3Storage, type S3Settings, type S3StorageOptions } from './s3-storage.js';
import { hasScheme, isS3Root, parseS3Root } from './s3-url.js';
import type { Storage } from './storage.js';

export interface OpenStorageOptions extends S3StorageOptions {
  /** Base of a relative local root. @defaultValue process.cwd() */
  cwd?: string;
}

export function openStorage(root: string, opts: OpenStorageOptions = {}): Storage {
  if (isS3Root(root)) return new S3Storage(parseS3Root(root), opts);
  if (hasScheme(root))
    throw new ConfigError(
      `output root ${JSON.stringify(root)}: only local paths and s3:// roots are supported`,
    );
  return new LocalStorage(resolve(opts.cwd ?? process.cwd(), root));
}

/** The `output.s3` config section as S3Storage settings. */
export function s3Settings(output: Config['output']): S3Settings {
  return {
    endpoint: output.s3.endpoint,
    region: output.s3.region,
    forcePathStyle: output.s3.force_path_style,
    checksums: output.s3.checksums,
  };
}
