/** Parses `s3://bucket/prefix` output roots, with one clear line for a bad one. */
import { ConfigError } from '../../errors.js';

export interface S3Location {
  bucket: string;
  /** Key prefix without leading or trailing `/`; `''` for the bucket's top. */
  prefix: string;
}

/** Whether an output root names a bucket (anything with a URL scheme is not a path). */
export function isS3Root(root: string): boolean {
  return /^s3:\/\//i.test(root);
}

/** Whether the root has some URL scheme (`gs://`, `http://`), which this exporter cannot write to. */
export function hasScheme(root: string): boolean {
  return /^[a-z][a-z0-9+.-]+:\/\//i.test(root);
}

// S3's bucket naming rules: 3-63 chars, lowercase letters, digits, dots, hyphens; starts and ends alphanumeric.
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

export function parseS3Root(root: string): S3Location {
  const bad = (why: string): ConfigError => new ConfigError(`output root ${JSON.stringify(root)}: ${why}`);
  if (!root.startsWith('s3://')) throw bad('must start with s3:// (lowercase)');
  const rest = root.slice('s3://'.length);
  const slash = rest.indexOf('/');
  const bucket = slash === -1 ? rest : rest.slice(0, slash);
  const prefix = slash === -1 ? '' : rest.slice(slash + 1).replace(/\/+$/, '');
  if (bucket === '') throw bad('names no bucket (expected s3://bucket/prefix)');
  if (!BUCKET.test(bucket) || bucket.includes('..'))
    throw bad(
      `bucket ${JSON.stringify(bucket)} is not a valid S3 bucket name (3-63 lowercase letters, digits, dots, hyphens)`,
    );
  if (/[?#]/.test(rest)) throw bad('must not contain ? or #');
  if (prefix.split('/').some((s) => s === '' || s === '.' || s === '..') && prefix !== '')
    throw bad('prefix has an empty, . or .. segment');
  return { bucket, prefix };
}
