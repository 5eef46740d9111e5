/**
 * Writing responses: small JSON bodies in one piece, large envelopes streamed row chunk by row
 * chunk with backpressure (res.write false → wait for 'drain'), never one giant string. Injected
 * body faults (truncate, slow) wrap the same writer, so every operation gets them for free.
 */
import type { ServerResponse } from 'node:http';
import type { Delay } from '../runtime.js';
import type { RowsTextCache } from './rows-cache.js';

export type Headers = Record<string, string | number>;

/** Rows serialised per res.write: large enough to amortise the call, small enough to stream. */
const ROWS_PER_CHUNK = 256;

/** The body faults that need the writer's help. */
export type BodyFault = { kind: 'truncate' } | { kind: 'slow'; pauseMs: number; delay: Delay };

/** The connection went away while we were writing: stop producing. */
export class ClientGoneError extends Error {
  constructor() {
    super('client closed the connection');
  }
}

interface BodySink {
  write(chunk: string | Buffer): Promise<void>;
  end(): Promise<void>;
}

/** Writes straight to the socket, waiting for 'drain' whenever the buffer is full. */
class DirectSink implements BodySink {
  constructor(private readonly res: ServerResponse) {}

  async write(chunk: string | Buffer): Promise<void> {
    if (this.res.destroyed) throw new ClientGoneError();
    if (this.res.write(chunk)) return;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        this.res.off('drain', done);
        this.res.off('close', done);
        resolve();
      };
      this.res.on('drain', done);
      this.res.on('close', done);
    });
    if (this.res.destroyed) throw new ClientGoneError();
  }

  end(): Promise<void> {
    return new Promise((resolve) => this.res.end(resolve));
  }
}

/**
 * Buffers the body (faults are for tests, bodies are bounded), then either sends a
 * Content-Length it never completes and drops the connection (truncate) or dribbles the body
 * in 8 pieces with a pause between them (slow).
 */
class FaultSink implements BodySink {
  private readonly parts: Buffer[] = [];

  constructor(
    private readonly res: ServerResponse,
    private readonly status: number,
    private readonly headers: Headers,
    private readonly fault: BodyFault,
    private readonly signal: AbortSignal,
  ) {}

  write(chunk: string | Buffer): Promise<void> {
    this.parts.push(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk);
    return Promise.resolve();
  }

  async end(): Promise<void> {
    const body = Buffer.concat(this.parts);
    const { res } = this;
    if (this.fault.kind === 'truncate') {
      res.writeHead(this.status, { ...this.headers, 'Content-Length': body.length });
      const cut = Math.max(1, Math.floor(body.length / 2));
      await new Promise<void>((resolve) => res.write(body.subarray(0, cut), () => resolve()));
      res.socket?.destroy();
      res.destroy();
      return;
    }
    res.writeHead(this.status, { ...this.headers, 'Content-Length': body.length });
    const pieces = 8;
    const size = Math.max(1, Math.ceil(body.length / pieces));
    for (let off = 0; off < body.length; off += size) {
      if (off > 0 && this.fault.kind === 'slow')
        await this.fault.delay(this.fault.pauseMs, this.signal).catch(() => undefined);
      if (res.destroyed || this.signal.aborted) {
        res.destroy();
        return;
      }
      res.write(body.subarray(off, off + size));
    }
    await new Promise<void>((resolve) => res.end(resolve));
  }
}

function openSink(
  res: ServerResponse,
  status: number,
  headers: Headers,
  fault: BodyFault | undefined,
  signal: AbortSignal,
): BodySink {
  if (fault) return new FaultSink(res, status, headers, fault, signal);
  res.writeHead(status, headers);
  return new DirectSink(res);
}

const JSON_TYPE = 'application/json; charset=utf-8';

/** A whole JSON body in one write (errors, small objects). */
export async function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Headers = {},
  opts: { fault?: BodyFault; signal?: AbortSignal; rewrite?: (s: string) => string } = {},
): Promise<void> {
  const text = (opts.rewrite ?? identity)(JSON.stringify(body));
  const all = { 'Content-Type': JSON_TYPE, ...headers };
  if (!opts.fault) {
    res.writeHead(status, { ...all, 'Content-Length': Buffer.byteLength(text) });
    await new Promise<void>((resolve) => res.end(text, resolve));
    return;
  }
  const sink = openSink(res, status, all, opts.fault, opts.signal ?? new AbortController().signal);
  await sink.write(text);
  await sink.end();
}

/** Serialised rows kept across requests (see rows-cache.ts) and what the text depends on. */
export interface RowsCacheUse {
  cache: RowsTextCache;
  /** The public base URL the URL fields were rewritten with. */
  key: string;
}

/**
 * Streams `{...fields, "<rowsField>": [rows...]}`: the envelope fields first (so a streaming
 * client knows scope and count before the rows), then the rows in chunks. With `cache`, a list
 * served before is written from its recorded chunks without serialising it again.
 */
export async function streamEnvelope(
  res: ServerResponse,
  status: number,
  fields: Record<string, unknown>,
  rowsField: string,
  rows: readonly unknown[],
  headers: Headers,
  opts: { fault?: BodyFault; signal: AbortSignal; rewrite?: (s: string) => string; cache?: RowsCacheUse },
): Promise<void> {
  const rewrite = opts.rewrite ?? identity;
  const sink = openSink(res, status, { 'Content-Type': JSON_TYPE, ...headers }, opts.fault, opts.signal);
  const head = JSON.stringify(fields);
  const open =
    head === '{}' ? `{${JSON.stringify(rowsField)}:[` : `${head.slice(0, -1)},${JSON.stringify(rowsField)}:[`;
  await sink.write(rewrite(open));
  const { cache } = opts;
  const cached = cache?.cache.get(rows, cache.key);
  if (cached !== undefined) {
    for (const chunk of cached) {
      if (opts.signal.aborted) throw new ClientGoneError();
      await sink.write(chunk);
    }
  } else {
    const recorder = cache?.cache.recorder(rows, cache.key);
    for (let i = 0; i < rows.length; i += ROWS_PER_CHUNK) {
      if (opts.signal.aborted) throw new ClientGoneError();
      const end = Math.min(rows.length, i + ROWS_PER_CHUNK);
      // One JSON.stringify per chunk: V8 serialises an array of same-shaped rows about twice as
      // fast as row by row. Copied by index so read-only Proxy views (clones, SYNBIG) work the same.
      const chunk: unknown[] = new Array(end - i);
      for (let j = i; j < end; j++) chunk[j - i] = rows[j];
      const text = rewrite((i === 0 ? '' : ',') + JSON.stringify(chunk).slice(1, -1));
      if (recorder === undefined) await sink.write(text);
      else {
        const bytes = Buffer.from(text, 'utf8');
        recorder.add(bytes);
        await sink.write(bytes);
      }
    }
    recorder?.finish();
  }
  await sink.write(']}');
  await sink.end();
}

function identity(s: string): string {
  return s;
}

/**
 * Prefixes the public base URL to every `"…_url":"/…"` member of serialised JSON. Safe on any
 * chunk: inside a JSON string every `"` is escaped, so the literal `_url":"/` only occurs where a
 * key ending in `_url` opens a value starting with `/`. A literal replaceAll is ~5x a regex here.
 */
export function urlRewriter(baseUrl: string): (s: string) => string {
  const base = JSON.stringify(baseUrl.replace(/\/+$/, '')).slice(1, -1);
  // `$` is special in replacement strings: `$$` writes one.
  const replacement = `_url":"${base}/`.replace(/\$/g, '$$$$');
  return (s) => s.replaceAll('_url":"/', replacement);
}
