/**
 * Preflight of an output root, run before anything is enqueued: one clear, non-retryable line
 * for a missing bucket, refused credentials, an unreachable endpoint or a local root that is not
 * a writable directory, instead of five retries per part later.
 */
import { constants } from 'node:fs';
import { access, mkdir, stat } from 'node:fs/promises';
import { StorageError, coerceError } from '../../errors.js';
import { LocalStorage } from './local-storage.js';
import { loadS3Sdk, makeS3Client, DEFAULT_S3_SETTINGS, S3Storage } from './s3-storage.js';
import { openStorage, type OpenStorageOptions } from './open-storage.js';

/** Time the preflight waits for the endpoint, one attempt only. @defaultValue 3000 */
export const PREFLIGHT_TIMEOUT_MS = 3000;

export async function checkStorage(root: string, opts: OpenStorageOptions = {}): Promise<void> {
  const storage = openStorage(root, opts);
  try {
    if (storage instanceof LocalStorage) await checkLocal(storage.root);
    else if (storage instanceof S3Storage) await checkS3(storage, opts);
  } finally {
    await storage.close();
  }
}

async function checkLocal(dir: string): Promise<void> {
  const fail = (why: string, cause?: unknown): StorageError =>
    new StorageError('STORAGE_UNAVAILABLE', `output root ${dir}: ${why}`, false, { cause });
  const s = await stat(dir).catch(() => null);
  if (s === null) {
    // A missing root is created, as publishing would; a parent that refuses it fails here.
    await mkdir(dir, { recursive: true }).catch((err: unknown) => {
      throw fail(`cannot be created: ${coerceError(err).message}`, err);
    });
  } else if (!s.isDirectory()) throw fail('is not a directory');
  await access(dir, constants.W_OK | constants.X_OK).catch((err: unknown) => {
    throw fail('is not writable', err);
  });
}

async function checkS3(storage: S3Storage, opts: OpenStorageOptions): Promise<void> {
  const settings = { ...DEFAULT_S3_SETTINGS, ...opts.settings };
  const where = `${storage.root} (endpoint ${settings.endpoint ?? 'AWS'})`;
  // Own client: one attempt and a short timeout, so an unreachable endpoint is one line in seconds.
  const { s3 } = await loadS3Sdk();
  const client = await makeS3Client(settings, {
    ...opts,
    maxAttempts: 1,
    connectionTimeoutMs: PREFLIGHT_TIMEOUT_MS,
    requestTimeoutMs: PREFLIGHT_TIMEOUT_MS,
  });
  try {
    const Bucket = storage.location.bucket;
    // HeadBucket needs s3:ListBucket on AWS: 404 missing bucket, 403 bad keys, 301 wrong region.
    await client.send(new s3.HeadBucketCommand({ Bucket }));
  } catch (err: unknown) {
    throw new StorageError('STORAGE_UNAVAILABLE', `output root ${where}: ${explain(err)}`, false, {
      cause: err,
    });
  } finally {
    client.destroy();
  }
}

/** One human line for the SDK's failure, without any credential. */
function explain(err: unknown): string {
  const e = err as { name?: string; code?: string; $metadata?: { httpStatusCode?: number } };
  const status = e.$metadata?.httpStatusCode;
  const name = e.name ?? '';
  if (status === 404 || name === 'NoSuchBucket' || name === 'NotFound') return 'bucket does not exist';
  if (
    status === 403 ||
    name === 'InvalidAccessKeyId' ||
    name === 'SignatureDoesNotMatch' ||
    name === 'AccessDenied' ||
    name === 'CredentialsProviderError'
  )
    return `credentials refused or missing (${name || `HTTP ${status}`}); they come from the AWS default chain (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE, container or instance role)`;
  if (status === 301 || name === 'PermanentRedirect')
    return 'bucket is in another region: set output.s3.region';
  const code = e.code ?? (coerceError(err).cause as { code?: string } | undefined)?.code;
  if (
    name === 'TimeoutError' ||
    code === 'ECONNREFUSED' ||
    code === 'ENOTFOUND' ||
    code === 'EAI_AGAIN' ||
    code === 'ETIMEDOUT' ||
    code === 'ECONNRESET'
  )
    return `endpoint unreachable (${code ?? name})`;
  return `${name || 'error'}${status !== undefined ? ` HTTP ${status}` : ''}: ${coerceError(err).message}`;
}
