/**
 * Storage port over an S3-compatible bucket (AWS S3, MinIO, R2, GCS interoperability, s3rver).
 * Files go up through lib-storage's Upload: one PutObject below `partSize`, else a multipart
 * upload holding at most `queueSize × partSize` bytes in memory; a failed or cancelled upload is
 * aborted so no parts are left billing. Credentials come only from the AWS default chain.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, stat, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type * as ClientS3 from '@aws-sdk/client-s3';
import type { S3Client, S3ClientConfig } from '@aws-sdk/client-s3';
import type * as LibStorage from '@aws-sdk/lib-storage';
import { StorageError, coerceError } from '../../errors.js';
import { checkKey, existsAlready, joinKey, type Storage, type StoredObject } from './storage.js';
import type { S3Location } from './s3-url.js';

/** Connection settings of an S3 root (from `output.s3.*`); credentials are never among them. */
export interface S3Settings {
  /** Endpoint URL for non-AWS servers; null = AWS's regional endpoint. @defaultValue null */
  endpoint: string | null;
  /** Region; null = the AWS chain's (AWS_REGION, profile), else `us-east-1`. @defaultValue null */
  region: string | null;
  /** Path-style addressing (`endpoint/bucket/key`), needed by most local servers. @defaultValue false */
  forcePathStyle: boolean;
  /**
   * When the SDK adds CRC32 request checksums: `when_supported` (the SDK's own default) on every
   * PutObject/UploadPart, `when_required` only where the API demands one (DeleteObjects), for
   * servers that reject the checksum headers. s3rver 3.7.1 accepts both for our uploads (parts
   * are Buffers, so no aws-chunked trailer is sent). @defaultValue when_supported
   */
  checksums: 'when_supported' | 'when_required';
}

export const DEFAULT_S3_SETTINGS: S3Settings = {
  endpoint: null,
  region: null,
  forcePathStyle: false,
  checksums: 'when_supported',
};

/** Multipart numbers: 8 MiB parts, 4 in flight, so one upload buffers at most 32 MiB. */
export const PART_SIZE = 8 * 1024 * 1024;
export const QUEUE_SIZE = 4;
/** DeleteObjects takes at most 1000 keys per request. */
const DELETE_BATCH = 1000;

export interface S3StorageOptions {
  settings?: Partial<S3Settings>;
  /** Part size of multipart uploads (≥ 5 MiB). @defaultValue PART_SIZE (8 MiB) */
  partSize?: number;
  /** Parts uploaded concurrently per file. @defaultValue QUEUE_SIZE (4) */
  queueSize?: number;
  /** Attempts per request, the SDK's standard retry (5xx, throttling, resets, timeouts). @defaultValue 4 */
  maxAttempts?: number;
  /** Time to open a TCP connection. @defaultValue 5000 */
  connectionTimeoutMs?: number;
  /** Idle time on a request's socket before it counts as dropped. @defaultValue 60000 */
  requestTimeoutMs?: number;
  /**
   * Only for tests against a local server with fixed keys (s3rver's `S3RVER`/`S3RVER`). Production
   * config never sets this: the AWS default chain (env, profile, container/instance role) applies.
   */
  credentials?: S3ClientConfig['credentials'];
}

type ClientModule = typeof ClientS3;
type UploadModule = typeof LibStorage;

/**
 * The AWS SDK, loaded on first use: every command imports the storage port, but only an s3://
 * root needs the SDK, which costs a process ~0.1 s and ~10 MB it would otherwise never use.
 */
export function loadS3Sdk(): Promise<{ s3: ClientModule; Upload: UploadModule['Upload'] }> {
  sdk ??= Promise.all([import('@aws-sdk/client-s3'), import('@aws-sdk/lib-storage')]).then(([s3, lib]) => ({
    s3,
    Upload: lib.Upload,
  }));
  return sdk;
}
let sdk: ReturnType<typeof loadS3Sdk> | undefined;

/** The SDK client for the settings; shared by the storage and the preflight. */
export async function makeS3Client(settings: S3Settings, opts: S3StorageOptions = {}): Promise<S3Client> {
  const { s3 } = await loadS3Sdk();
  return new s3.S3Client({
    ...(settings.endpoint !== null ? { endpoint: settings.endpoint } : {}),
    region: settings.region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? 'us-east-1',
    forcePathStyle: settings.forcePathStyle,
    requestChecksumCalculation: settings.checksums === 'when_supported' ? 'WHEN_SUPPORTED' : 'WHEN_REQUIRED',
    responseChecksumValidation: settings.checksums === 'when_supported' ? 'WHEN_SUPPORTED' : 'WHEN_REQUIRED',
    maxAttempts: opts.maxAttempts ?? 4,
    requestHandler: {
      connectionTimeout: opts.connectionTimeoutMs ?? 5000,
      requestTimeout: opts.requestTimeoutMs ?? 60_000,
    },
    ...(opts.credentials !== undefined ? { credentials: opts.credentials } : {}),
  });
}

function httpStatus(err: unknown): number | undefined {
  return (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
}

function isNotFound(err: unknown): boolean {
  const name = (err as { name?: string }).name;
  return httpStatus(err) === 404 || name === 'NoSuchKey' || name === 'NotFound';
}

export class S3Storage implements Storage {
  readonly kind = 's3' as const;
  readonly root: string;
  /** The SDK client, made on the first request (undefined until then, and after close()). */
  private client: Promise<S3Client> | undefined;
  private closed = false;
  private readonly settings: S3Settings;
  private readonly opts: S3StorageOptions;
  private readonly partSize: number;
  private readonly queueSize: number;

  constructor(
    readonly location: S3Location,
    opts: S3StorageOptions = {},
  ) {
    this.root =
      location.prefix === '' ? `s3://${location.bucket}` : `s3://${location.bucket}/${location.prefix}`;
    this.settings = { ...DEFAULT_S3_SETTINGS, ...opts.settings };
    this.opts = opts;
    this.partSize = opts.partSize ?? PART_SIZE;
    this.queueSize = opts.queueSize ?? QUEUE_SIZE;
  }

  /** The client and the SDK's commands. */
  private async sdk(): Promise<{ client: S3Client; s3: ClientModule; Upload: UploadModule['Upload'] }> {
    if (this.closed) throw new StorageError('STORAGE_UNAVAILABLE', `${this.root}: storage is closed`, false);
    this.client ??= makeS3Client(this.settings, this.opts);
    const [client, { s3, Upload }] = await Promise.all([this.client, loadS3Sdk()]);
    return { client, s3, Upload };
  }

  private fullKey(key: string): string {
    return joinKey(this.location.prefix, checkKey(key));
  }

  url(key: string): string {
    return `s3://${this.location.bucket}/${this.fullKey(key)}`;
  }

  async putFile(key: string, localPath: string, opts: { signal?: AbortSignal } = {}): Promise<StoredObject> {
    const bytes = (await stat(localPath)).size;
    await this.upload(key, createReadStream(localPath, { highWaterMark: 1 << 20 }), bytes, opts.signal);
    return { key, bytes };
  }

  async putBytes(
    key: string,
    data: string | Uint8Array,
    opts: { ifAbsent?: boolean } = {},
  ): Promise<StoredObject> {
    const body = typeof data === 'string' ? Buffer.from(data) : data;
    if (opts.ifAbsent === true) await this.putIfAbsent(key, body);
    else await this.upload(key, body, body.byteLength);
    return { key, bytes: body.byteLength };
  }

  /**
   * One PutObject with `If-None-Match: *`: the store refuses it (412) when the key exists. A store
   * without conditional writes (501) takes a plain put; one that ignores the header overwrites.
   */
  private async putIfAbsent(key: string, body: Uint8Array): Promise<void> {
    const { client, s3 } = await this.sdk();
    const params = { Bucket: this.location.bucket, Key: this.fullKey(key), Body: body };
    try {
      await client.send(new s3.PutObjectCommand({ ...params, IfNoneMatch: '*' }));
    } catch (err: unknown) {
      const status = httpStatus(err);
      if (status === 412 || status === 409) throw existsAlready(this.url(key), err);
      if (status !== 501) throw err;
      await this.upload(key, body, body.byteLength);
    }
  }

  private async upload(
    key: string,
    body: Readable | Uint8Array,
    bytes: number,
    signal?: AbortSignal,
  ): Promise<void> {
    const Key = this.fullKey(key);
    const { client, Upload } = await this.sdk();
    const upload = new Upload({
      client,
      params: { Bucket: this.location.bucket, Key, Body: body, ContentLength: bytes },
      partSize: this.partSize,
      queueSize: this.queueSize,
      leavePartsOnError: false,
    });
    const onAbort = (): void => void upload.abort().catch(() => undefined);
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      if (signal?.aborted) throw new Error('upload cancelled before it started');
      await upload.done();
    } catch (err: unknown) {
      if (body instanceof Readable) body.destroy();
      // Upload's own abort runs only after its in-flight parts settle (done() rejects first on a
      // cancel), so abort by id now; then sweep the key, which also catches a failed abort.
      await this.abortIncomplete(Key, upload.uploadId).catch(() => undefined);
      throw new StorageError(
        'STORAGE_UNAVAILABLE',
        `${this.url(key)}: upload failed: ${coerceError(err).message}`,
        true,
        {
          cause: err,
        },
      );
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  /** Aborts `uploadId`, then every other incomplete multipart upload of exactly this key. */
  private async abortIncomplete(Key: string, uploadId: string | undefined): Promise<void> {
    const Bucket = this.location.bucket;
    const { client, s3 } = await this.sdk();
    if (uploadId !== undefined)
      await client
        .send(new s3.AbortMultipartUploadCommand({ Bucket, Key, UploadId: uploadId }))
        .catch(() => undefined);
    const res = await client.send(new s3.ListMultipartUploadsCommand({ Bucket, Prefix: Key }));
    for (const u of res.Uploads ?? []) {
      if (u.Key !== Key || u.UploadId === undefined) continue;
      await client.send(new s3.AbortMultipartUploadCommand({ Bucket, Key, UploadId: u.UploadId }));
    }
  }

  async getStream(key: string): Promise<NodeJS.ReadableStream> {
    const { client, s3 } = await this.sdk();
    try {
      const res = await client.send(
        new s3.GetObjectCommand({ Bucket: this.location.bucket, Key: this.fullKey(key) }),
      );
      if (!(res.Body instanceof Readable)) throw new Error('response body is not a Node stream');
      return res.Body;
    } catch (err: unknown) {
      if (isNotFound(err))
        throw new StorageError('STORAGE_NOT_FOUND', `${this.url(key)}: no such object`, false, {
          cause: err,
        });
      throw err;
    }
  }

  async download(key: string, localPath: string): Promise<StoredObject> {
    await mkdir(dirname(localPath), { recursive: true });
    const tmp = `${localPath}.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`;
    try {
      await pipeline(await this.getStream(key), createWriteStream(tmp));
      await rename(tmp, localPath);
    } catch (err: unknown) {
      await unlink(tmp).catch(() => undefined);
      throw err;
    }
    return { key, bytes: (await stat(localPath)).size };
  }

  /** Server-side CopyObject: the bytes never pass through this process (objects up to 5 GB). */
  async copy(from: string, to: string): Promise<StoredObject> {
    const { client, s3 } = await this.sdk();
    const source = `${this.location.bucket}/${this.fullKey(from)}`;
    try {
      await client.send(
        new s3.CopyObjectCommand({
          Bucket: this.location.bucket,
          Key: this.fullKey(to),
          CopySource: encodeURI(source),
        }),
      );
    } catch (err: unknown) {
      if (isNotFound(err))
        throw new StorageError('STORAGE_NOT_FOUND', `${this.url(from)}: no such object`, false, {
          cause: err,
        });
      throw err;
    }
    const stored = await this.head(to);
    if (stored === null)
      throw new StorageError(
        'STORAGE_UNAVAILABLE',
        `${this.url(to)}: not there after copying ${this.url(from)}`,
        true,
      );
    return stored;
  }

  async head(key: string): Promise<StoredObject | null> {
    const { client, s3 } = await this.sdk();
    try {
      const res = await client.send(
        new s3.HeadObjectCommand({ Bucket: this.location.bucket, Key: this.fullKey(key) }),
      );
      return { key, bytes: res.ContentLength ?? 0 };
    } catch (err: unknown) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  async list(prefix: string): Promise<StoredObject[]> {
    const base = this.location.prefix === '' ? '' : `${this.location.prefix}/`;
    const out: StoredObject[] = [];
    // ListObjects (v1) paged by Marker = last key seen: same result as v2 on AWS, and s3rver
    // 3.7.1 answers 500 to any truncated v2 page (its continuation token uses DES, gone from OpenSSL 3).
    const { client, s3 } = await this.sdk();
    let after: string | undefined;
    for (;;) {
      const res = await client.send(
        new s3.ListObjectsCommand({
          Bucket: this.location.bucket,
          Prefix: base + prefix,
          ...(after !== undefined ? { Marker: after } : {}),
        }),
      );
      const page = res.Contents ?? [];
      for (const o of page)
        if (o.Key !== undefined)
          out.push({
            key: o.Key.slice(base.length),
            bytes: o.Size ?? 0,
            ...(o.LastModified !== undefined ? { modifiedMs: o.LastModified.getTime() } : {}),
          });
      after = page.at(-1)?.Key;
      if (res.IsTruncated !== true || after === undefined) break;
    }
    return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  async delete(keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return;
    const { client, s3 } = await this.sdk();
    for (let i = 0; i < keys.length; i += DELETE_BATCH) {
      const batch = keys.slice(i, i + DELETE_BATCH);
      const res = await client.send(
        new s3.DeleteObjectsCommand({
          Bucket: this.location.bucket,
          Delete: { Objects: batch.map((k) => ({ Key: this.fullKey(k) })), Quiet: true },
        }),
      );
      const failed = res.Errors ?? [];
      if (failed.length > 0)
        throw new StorageError(
          'STORAGE_UNAVAILABLE',
          `${this.root}: could not delete ${failed.length} object(s), first ${failed[0]?.Key}: ${failed[0]?.Message}`,
          true,
        );
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const client = this.client;
    this.client = undefined;
    if (client !== undefined) (await client).destroy();
  }
}
