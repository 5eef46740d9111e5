/**
 * Client behaviour the emulator never produces, against a tiny real node:http server (real sockets,
 * real HTTP, no mocks): Retry-After as an HTTP-date, numbers beyond 2^53, malformed JSON, unknown
 * fields, a server that echoes the key, a base URL with a path prefix, and a connection refused.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { FilingsClient } from '../../src/api/index.js';
import { BadRequestError, RateLimitedError, TransportError } from '../../src/errors.js';
import { freePort } from '../../src/infra/redis-server.js';
import type { Clock } from '../../src/types.js';

type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

const KEY = 'ffx_live_b2b_tinyserver_0123456789abcdef';
let server: Server;
let baseUrl: string;
let handler: Handler = (_req, res) => res.end();
const seen: Array<{ url: string | undefined; key: string | string[] | undefined }> = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      seen.push({ url: req.url, key: req.headers['x-api-key'] });
      handler(req, res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function json(res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/** A stopped clock 30 s before the HTTP-dates the server sends. */
const fixedClock: Clock = { now: () => Date.UTC(2026, 9, 21, 7, 27, 30) };

async function withClient<T>(fn: (c: FilingsClient) => Promise<T>, clock: Clock = fixedClock): Promise<T> {
  const client = new FilingsClient({ baseUrl, apiKey: KEY, clock });
  try {
    return await fn(client);
  } finally {
    await client.close();
  }
}

describe('Retry-After as an HTTP-date from a real server', () => {
  test('429 with an HTTP-date: retryAfterMs is computed against the injected clock', async () => {
    handler = (_req, res) =>
      json(
        res,
        429,
        JSON.stringify({ error: 'Rate limit exceeded', retryAfter: 99, limit: 60, windowMs: 60000 }),
        {
          'retry-after': 'Wed, 21 Oct 2026 07:28:00 GMT',
          'x-ratelimit-limit': '60',
          'x-ratelimit-remaining': '0',
          'x-ratelimit-reset': String(Date.UTC(2026, 9, 21, 7, 28, 0) / 1000),
        },
      );
    const err = await withClient((c) => c.factsCore({ ticker: 'AAPL' })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitedError);
    const e = err as RateLimitedError;
    // The header (30 s from the clock's now) wins over the body's retryAfter (99 s).
    expect(e.retryAfterMs).toBe(30_000);
    expect(e.rateLimit).toEqual({
      limit: 60,
      remaining: 0,
      resetAtMs: Date.UTC(2026, 9, 21, 7, 28, 0),
      retryAfterMs: 30_000,
    });
    expect(e.message).toBe(
      'facts/core: rate limit exceeded (60 requests per minute for this key); retry in 30 s',
    );
  });

  test('a successful response carries the HTTP-date Retry-After too', async () => {
    handler = (_req, res) =>
      json(res, 200, JSON.stringify({ series: [] }), { 'retry-after': 'Wed, 21 Oct 2026 07:29:00 GMT' });
    const r = await withClient((c) => c.seriesBatch({ ids: ['x'] }));
    expect(r.rateLimit.retryAfterMs).toBe(90_000);
  });
});

describe('response bodies', () => {
  test('numbers beyond 2^53 keep their exact text; unknown fields are kept (plain and streamed)', async () => {
    const text =
      '{"scope":"company","cik":"0000320193","count":1,"new_envelope_field":{"x":1},' +
      '"rows":[{"fact_key":"k","value_num":"1","huge":123456789012345678901234567890,"safe":42,"future_field":[true]}]}';
    handler = (_req, res) => json(res, 200, text);
    await withClient(async (c) => {
      const r = await c.factsCore({ ticker: 'AAPL' });
      const row = r.data.rows[0] as Record<string, unknown>;
      expect(row.huge).toBe('123456789012345678901234567890');
      expect(row.safe).toBe(42);
      expect(row.future_field).toEqual([true]);
      expect(r.data.new_envelope_field).toEqual({ x: 1 });

      const s = await c.stream('facts/core', { ticker: 'AAPL' });
      const rows: Record<string, unknown>[] = [];
      for await (const row of s.rows) rows.push(row);
      expect(rows).toEqual([
        {
          fact_key: 'k',
          value_num: '1',
          huge: '123456789012345678901234567890',
          safe: 42,
          future_field: [true],
        },
      ]);
      expect(await s.envelope()).toEqual({
        scope: 'company',
        cik: '0000320193',
        count: 1,
        new_envelope_field: { x: 1 },
      });
      expect(s.bytesRead).toBe(Buffer.byteLength(text));
    });
  });

  test('invalid JSON in a 200 is TRANSPORT_MALFORMED (plain and streamed), retryable', async () => {
    handler = (_req, res) => json(res, 200, '<html>upstream hiccup</html>');
    await withClient(async (c) => {
      const plain = await c.factsCore({ ticker: 'AAPL' }).catch((e: unknown) => e);
      expect(plain).toBeInstanceOf(TransportError);
      expect((plain as TransportError).code).toBe('TRANSPORT_MALFORMED');
      expect((plain as TransportError).retryable).toBe(true);
      expect((plain as TransportError).bodyExcerpt).toBe('<html>upstream hiccup</html>');
      const s = await c.stream('facts/core', { ticker: 'AAPL' });
      const err = await (async () => {
        for await (const _row of s.rows) void _row;
      })().catch((e: unknown) => e);
      expect((err as TransportError).code).toBe('TRANSPORT_MALFORMED');
      await expect(s.envelope()).rejects.toMatchObject({ code: 'TRANSPORT_MALFORMED' });
    });
  });

  test('a complete body that ends mid-JSON is TRANSPORT_TRUNCATED', async () => {
    handler = (_req, res) => json(res, 200, '{"scope":"company","rows":[{"a":1},');
    const err = await withClient((c) => c.factsFull({ ticker: 'AAPL' })).catch((e: unknown) => e);
    expect((err as TransportError).code).toBe('TRANSPORT_TRUNCATED');
  });
});

describe('secrets and addressing', () => {
  test('a server echoing the key: the key appears nowhere in the error', async () => {
    handler = (req, res) =>
      json(res, 400, JSON.stringify({ error: `bad request from ${String(req.headers['x-api-key'])}` }));
    const err = await withClient((c) => c.factsCore({ ticker: 'AAPL' })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BadRequestError);
    const e = err as BadRequestError;
    expect(e.message).toBe(
      'facts/core: the API rejected the request as invalid (400): bad request from [REDACTED]',
    );
    for (const text of [e.message, e.bodyExcerpt ?? '', JSON.stringify(e), String(e.stack)])
      expect(text).not.toContain(KEY);
  });

  test('a base URL path prefix is kept; the key is sent on /api/b2b only', async () => {
    handler = (_req, res) => json(res, 200, JSON.stringify({ results: [] }));
    seen.length = 0;
    const client = new FilingsClient({ baseUrl: `${baseUrl}/gateway/`, apiKey: KEY });
    try {
      await client.sandboxSearch({ query: 'revenue', ticker: 'AAPL', limit: 3 });
      handler = (_req, res) => json(res, 202, JSON.stringify({ ok: true }));
      const r = await client.telemetryProofOpen({ evidence_key: 'ev1' });
      expect(r.status).toBe(202);
    } finally {
      await client.close();
    }
    expect(seen).toEqual([
      { url: '/gateway/api/sandbox/search?query=revenue&ticker=AAPL&limit=3', key: undefined },
      { url: '/gateway/api/b2b/telemetry/proof-open', key: KEY },
    ]);
  });

  test('no response headers within headersTimeoutMs → TRANSPORT_TIMEOUT', async () => {
    handler = () => undefined; // never answers; afterAll closes the connection
    const client = new FilingsClient({ baseUrl, apiKey: KEY, headersTimeoutMs: 200 });
    try {
      const err = await client.factsCore({ ticker: 'AAPL' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TransportError);
      expect((err as TransportError).code).toBe('TRANSPORT_TIMEOUT');
      expect((err as TransportError).message).toBe(
        'facts/core: the API did not send response headers in time (UND_ERR_HEADERS_TIMEOUT)',
      );
    } finally {
      await client.close();
    }
  });

  test('connection refused is a retryable TRANSPORT_RESET naming the operation, the URL and the cause', async () => {
    const port = await freePort();
    const client = new FilingsClient({ baseUrl: `http://127.0.0.1:${port}`, apiKey: KEY });
    try {
      const err = await client.issuerReference({ ticker: 'AAPL' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TransportError);
      expect((err as TransportError).code).toBe('TRANSPORT_RESET');
      expect((err as TransportError).retryable).toBe(true);
      expect((err as TransportError).message).toBe(
        `issuer/reference: the connection to http://127.0.0.1:${port} was refused (ECONNREFUSED): nothing listens at that address; check FILINGS_API_URL (api.url)`,
      );
    } finally {
      await client.close();
    }
  });
});
