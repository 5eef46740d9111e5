/**
 * One HTTP exchange over a keep-alive undici Pool: send, read the status line and headers, read or
 * hand out the body. Every undici failure leaves here as a TransportError (error-map.ts), every
 * response carries its RateLimitState. No retries: one call is exactly one request.
 */
import { Pool } from 'undici';
import type { Dispatcher } from 'undici';
import type { Clock } from '../types.js';
import { classifyTransport, transportError } from './error-map.js';
import { parseRateLimit, type HeaderBag } from './rate-limit.js';
import type { RateLimitState } from '../types.js';

export interface TransportOptions {
  baseUrl: string;
  connections: number;
  connectTimeoutMs: number;
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  userAgent: string;
  clock: Clock;
}

export interface SendRequest {
  operation: string;
  method: 'GET' | 'POST';
  /** Path below the base URL, starting with `/`, query string included. */
  path: string;
  body?: string;
  headers: Record<string, string>;
  signal?: AbortSignal;
  headersTimeoutMs?: number;
  bodyTimeoutMs?: number;
  /** Redacted from every message and excerpt. */
  secret?: string;
}

export interface RawResponse {
  operation: string;
  status: number;
  headers: HeaderBag;
  rateLimit: RateLimitState;
  /** Content-Length when declared. */
  declaredBytes: number | undefined;
  body: Dispatcher.ResponseData['body'];
  signal: AbortSignal | undefined;
  secret: string | undefined;
}

/** Largest error body read into memory; the rest is discarded (only an excerpt is kept). */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

export class Transport {
  private readonly pool: Pool;
  private readonly prefix: string;
  /** The base URL as messages name it (origin and path prefix). */
  private readonly url: string;

  constructor(private readonly opts: TransportOptions) {
    const url = new URL(opts.baseUrl);
    this.prefix = url.pathname.replace(/\/+$/, '');
    this.url = url.origin + this.prefix;
    this.pool = new Pool(url.origin, {
      connections: opts.connections,
      connect: { timeout: opts.connectTimeoutMs },
      headersTimeout: opts.headersTimeoutMs,
      bodyTimeout: opts.bodyTimeoutMs,
      keepAliveTimeout: 30_000,
    });
  }

  get clock(): Clock {
    return this.opts.clock;
  }

  async send(req: SendRequest): Promise<RawResponse> {
    if (req.signal?.aborted) {
      throw transportError({
        operation: req.operation,
        code: 'TRANSPORT_ABORTED',
        detail: 'the call was aborted by the caller',
      });
    }
    let res: Dispatcher.ResponseData;
    try {
      res = await this.pool.request({
        origin: undefined,
        path: this.prefix + req.path,
        method: req.method,
        headers: { 'user-agent': this.opts.userAgent, accept: 'application/json', ...req.headers },
        ...(req.body !== undefined ? { body: req.body } : {}),
        ...(req.signal ? { signal: req.signal } : {}),
        headersTimeout: req.headersTimeoutMs ?? this.opts.headersTimeoutMs,
        bodyTimeout: req.bodyTimeoutMs ?? this.opts.bodyTimeoutMs,
      } as Dispatcher.RequestOptions);
    } catch (err) {
      throw classifyTransport(err, {
        operation: req.operation,
        phase: 'request',
        aborted: req.signal?.aborted === true,
        apiKey: req.secret,
        url: this.url,
      });
    }
    const headers = res.headers as HeaderBag;
    const cl = headers['content-length'];
    const declared = typeof cl === 'string' && /^\d+$/.test(cl) ? Number(cl) : undefined;
    return {
      operation: req.operation,
      status: res.statusCode,
      headers,
      rateLimit: parseRateLimit(headers, this.opts.clock.now()),
      declaredBytes: declared,
      body: res.body,
      signal: req.signal,
      secret: req.secret,
    };
  }

  /** Requests queued, running, or with a body not yet consumed or released (undici's pool size). */
  get inFlight(): number {
    return this.pool.stats.size;
  }

  async close(): Promise<void> {
    await this.pool.close();
  }
}

/**
 * Reads a whole body. Failures mid-body are TRANSPORT_TRUNCATED (or TIMEOUT / ABORTED); a body
 * shorter than its Content-Length is truncated too. `maxBytes` caps what is kept (error bodies):
 * beyond it the body is discarded and the connection dropped.
 */
export async function readBytes(res: RawResponse, maxBytes = Number.POSITIVE_INFINITY): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  try {
    for await (const chunk of res.body) {
      const buf = chunk as Buffer;
      bytes += buf.length;
      if (bytes > maxBytes) {
        chunks.push(buf.subarray(0, Math.max(0, buf.length - (bytes - maxBytes))));
        discardBody(res.body);
        return Buffer.concat(chunks);
      }
      chunks.push(buf);
    }
  } catch (err) {
    throw bodyFailure(res, err, bytes, chunks);
  }
  if (res.declaredBytes !== undefined && bytes < res.declaredBytes) {
    throw bodyFailure(res, new Error('body shorter than Content-Length'), bytes, chunks);
  }
  return Buffer.concat(chunks);
}

/** readBytes as UTF-8 text. */
export async function readText(res: RawResponse, maxBytes = Number.POSITIVE_INFINITY): Promise<string> {
  return (await readBytes(res, maxBytes)).toString('utf8');
}

/**
 * Drops the rest of a response body and its connection. The 'error' a destroyed body emits is
 * expected here, so it gets a listener (an unhandled one would crash the process).
 */
export function discardBody(body: RawResponse['body']): void {
  body.on('error', () => undefined);
  body.destroy();
}

/** Reads an error body (bounded). A failure while reading keeps what arrived. */
export async function readErrorText(res: RawResponse): Promise<string> {
  try {
    return await readText(res, MAX_ERROR_BODY_BYTES);
  } catch (err) {
    const excerpt = (err as { bodyExcerpt?: unknown }).bodyExcerpt;
    return typeof excerpt === 'string' ? excerpt : '';
  }
}

export function bodyFailure(res: RawResponse, err: unknown, bytes: number, chunks?: Buffer[]): Error {
  return classifyTransport(err, {
    operation: res.operation,
    phase: 'body',
    aborted: res.signal?.aborted === true,
    status: res.status,
    bodyBytes: bytes,
    ...(res.declaredBytes !== undefined ? { declaredBytes: res.declaredBytes } : {}),
    rateLimit: res.rateLimit,
    apiKey: res.secret,
    ...(chunks ? { bodyText: Buffer.concat(chunks).toString('utf8').slice(0, 1000) } : {}),
  });
}
