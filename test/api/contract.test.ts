/**
 * Issue 2 item 4: the emulator's actual responses, for every operation and every error status and
 * body shape, validate against the OpenAPI document (src/contract/openapi.yaml). Raw HTTP (fetch), not
 * the client, so the bytes on the wire are what is checked.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestEmulator, TEST_QUOTAS, type TestEmulator } from '../helpers/emulator.js';
import { assertValidResponse, contract } from '../helpers/contract.js';

let em: TestEmulator;

interface Raw {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

async function raw(url: string, init: RequestInit = {}): Promise<Raw> {
  const res = await fetch(url, { redirect: 'manual', ...init });
  const text = await res.text();
  return {
    status: res.status,
    headers: Object.fromEntries(res.headers.entries()),
    body: text === '' ? undefined : (JSON.parse(text) as unknown),
  };
}

/** `key` null sends no X-API-Key header. */
function post(
  op: string,
  body: unknown,
  key: string | null = em.apiKey,
  headers: Record<string, string> = {},
): Promise<Raw> {
  return raw(`${em.url}/api/b2b/${op}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(key !== null ? { 'x-api-key': key } : {}),
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** Calls, checks the status, validates body and headers against the contract, returns the body. */
async function checked(op: string, expected: number, res: Promise<Raw>): Promise<Record<string, unknown>> {
  const r = await res;
  expect(r.status, `${op}: ${JSON.stringify(r.body).slice(0, 300)}`).toBe(expected);
  assertValidResponse(op, r.status, r.body, r.headers);
  return r.body as Record<string, unknown>;
}

const seen = new Map<string, Set<number>>();
function note(op: string, status: number): void {
  if (!seen.has(op)) seen.set(op, new Set());
  seen.get(op)?.add(status);
}

async function ok(op: string, body: unknown): Promise<Record<string, unknown>> {
  const b = await checked(op, op === 'telemetry/proof-open' ? 202 : 200, post(op, body));
  note(op, op === 'telemetry/proof-open' ? 202 : 200);
  return b;
}

beforeAll(async () => {
  em = await startTestEmulator();
}, 60_000);

afterAll(async () => {
  await em?.close();
});

describe('every operation answers per the contract (200/202)', () => {
  test('facts, catalogs, evidence, issuer, series batch, blob, evidence open, telemetry, sandbox', async () => {
    for (const ticker of ['AAPL', 'NVDA', 'WMT']) {
      for (const op of [
        'facts/core',
        'facts/full',
        'series/catalog',
        'dims/catalog',
        'evidence/enriched',
        'issuer/reference',
      ]) {
        await ok(op, { ticker });
      }
      await ok('facts/latest', { ticker });
      await ok('facts/latest', { ticker, limit: 5 });
      await ok('facts/latest', { ticker, include_dei: true, limit: 500 });
    }
    await ok('facts/latest', { cik: '0000320193', metric_id: 'dei#EntityCommonStockSharesOutstanding' });

    const catalog = await ok('series/catalog', { ticker: 'AAPL' });
    const rows = catalog.rows as Array<Record<string, unknown>>;
    expect(rows.length).toBeGreaterThan(0);
    const keys = rows.slice(0, 3).map((r) => r.series_key as string);
    const ids = rows.slice(0, 3).map((r) => r.series_id as string);
    for (const op of ['facts/latest/by-series', 'facts/core/by-series', 'facts/full/by-series']) {
      await ok(op, { ticker: 'AAPL', series_keys: keys });
      await ok(op, { ticker: 'AAPL', series_key: keys[0] });
    }
    const batch = await ok('series/batch', { ids: [...ids, 'no-such-series'] });
    const series = batch.series as Array<Record<string, unknown>>;
    expect(series.map((s) => s.series_id)).toEqual(ids);
    await ok('series/batch', { series_ids: ids.slice(0, 1) });

    // The blob behind serving.blob_url.
    const blobUrl = (series[0]?.serving as Record<string, unknown>).blob_url as string;
    const blob = await raw(new URL(blobUrl, em.url).href);
    expect(blob.status).toBe(200);
    assertValidResponse('series/blob', 200, blob.body, blob.headers);
    note('series/blob', 200);
    await checked('series/blob', 404, raw(`${em.url}/s/series/no-such-series/1`));
    note('series/blob', 404);

    // evidence_url → 302 to the viewer; telemetry with the evidence key.
    const evidence = await ok('evidence/enriched', { ticker: 'AAPL' });
    const ev = (evidence.rows as Array<Record<string, unknown>>).find(
      (r) => typeof r.evidence_url === 'string',
    );
    expect(ev).toBeDefined();
    const open = await raw(new URL(ev?.evidence_url as string, em.url).href);
    expect(open.status).toBe(302);
    assertValidResponse('evidence/open', 302, undefined, open.headers);
    note('evidence/open', 302);
    await checked('evidence/open', 404, raw(`${em.url}/api/evidence/no-such-evidence/open`));
    note('evidence/open', 404);
    await ok('telemetry/proof-open', { evidence_key: ev?.evidence_key, surface: 'contract-test' });

    const sf = await checked('sandbox/facts', 200, raw(`${em.url}/api/sandbox/facts?ticker=AAPL&limit=3`));
    note('sandbox/facts', 200);
    expect(sf.count).toBe(3);
    await checked('sandbox/facts', 400, raw(`${em.url}/api/sandbox/facts?ticker=AAPL&limit=21`));
    await checked('sandbox/facts', 404, raw(`${em.url}/api/sandbox/facts?ticker=ZZZZZZ`));
  }, 120_000);

  test('search operations', async () => {
    await ok('search/entities', { query: 'revenue', ticker: 'AAPL' });
    await ok('search/entities', { query: 'net income', limit: 5, offset: 0, types: ['metric', 'series'] });
    await ok('search/series', { query: 'revenue', ticker: 'AAPL', fetch_top: 2 });
    await ok('search/filings', { query: 'supply chain', ticker: 'AAPL' });
    await ok('search/filings', { query: 'risk factors competition', limit: 5, include_series: true });
    await checked(
      'sandbox/search',
      200,
      raw(`${em.url}/api/sandbox/search?query=revenue&ticker=AAPL&limit=3`),
    );
    note('sandbox/search', 200);
  }, 120_000);
});

describe('every error status and body shape per the contract', () => {
  test('400, 401 (both), 403 (each), 404', async () => {
    await checked('facts/latest', 400, post('facts/latest', { ticker: 'AAPL', limit: 501 }));
    await checked('facts/full', 400, post('facts/full', '{"ticker":'));
    await checked(
      'facts/core/by-series',
      400,
      post('facts/core/by-series', { ticker: 'AAPL', series_keys: ['nope'] }),
    );
    const required = await checked('facts/full', 401, post('facts/full', { ticker: 'AAPL' }, null));
    expect(required.error).toBe('API key required');
    const invalid = await checked(
      'facts/full',
      401,
      post('facts/full', { ticker: 'AAPL' }, 'ffx_live_b2b_unknown'),
    );
    expect(invalid.error).toBe('Invalid API key');
    const expected: Array<[keyof TestEmulator['keys'], string]> = [
      ['accountDisabled', 'Account is disabled'],
      ['revoked', 'API key has been revoked'],
      ['disabled', 'API key is disabled'],
      ['expired', 'API key has expired'],
    ];
    for (const [name, error] of expected) {
      const b = await checked('facts/core', 403, post('facts/core', { ticker: 'AAPL' }, em.keys[name]));
      expect(b.error).toBe(error);
    }
    const nf = await checked('facts/full', 404, post('facts/full', { ticker: 'ZZZZZZ' }));
    expect(String(nf.error)).toContain('ZZZZZZ');
    await checked('issuer/reference', 404, post('issuer/reference', { cik: '0000000001' }));
  });

  test('403 not entitled for cross-company search', async () => {
    const b = await checked(
      'search/filings',
      403,
      post('search/filings', { query: 'supply chain risk' }, em.keys.noCrossCompany),
    );
    expect(String(b.error)).toMatch(/^API key is not entitled for /);
  });

  test('500 and 503 (forced through X-Emulator-Fault)', async () => {
    await checked(
      'facts/full',
      503,
      post('facts/full', { ticker: 'AAPL' }, em.apiKey, { 'X-Emulator-Fault': '503' }),
    );
    await checked(
      'evidence/enriched',
      500,
      post('evidence/enriched', { ticker: 'AAPL' }, em.apiKey, { 'X-Emulator-Fault': '500' }),
    );
  });

  test('429 quota shape (daily, per key then per account) with Retry-After and rate-limit headers', async () => {
    const key = em.keys.quotaLimited;
    for (let i = 0; i < TEST_QUOTAS.keyDaily; i++)
      await checked('issuer/reference', 200, post('issuer/reference', { ticker: 'AAPL' }, key));
    const r = await post('issuer/reference', { ticker: 'AAPL' }, key);
    expect(r.status).toBe(429);
    assertValidResponse('issuer/reference', 429, r.body, r.headers);
    expect(r.body).toMatchObject({ quota: 'daily', scope: 'api_key', limit: TEST_QUOTAS.keyDaily });
    expect(r.headers['retry-after']).toMatch(/^\d+$/);
  });

  test('429 rate shape with Retry-After and rate-limit headers', async () => {
    const limited = await startTestEmulator({ rateLimitPerMinute: 2 });
    try {
      const call = (): Promise<Raw> =>
        raw(`${limited.url}/api/b2b/issuer/reference`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': limited.apiKey },
          body: JSON.stringify({ ticker: 'AAPL' }),
        });
      for (let i = 0; i < 2; i++) {
        const r = await call();
        expect(r.status).toBe(200);
        assertValidResponse('issuer/reference', 200, r.body, r.headers);
        expect(r.headers['x-ratelimit-limit']).toBe('2');
      }
      const r = await call();
      expect(r.status).toBe(429);
      assertValidResponse('issuer/reference', 429, r.body, r.headers);
      expect(r.body).toMatchObject({ error: 'Rate limit exceeded', limit: 2, windowMs: 60000 });
      expect(r.headers['x-ratelimit-remaining']).toBe('0');
    } finally {
      await limited.close();
    }
  }, 60_000);
});

describe('coverage of the contract', () => {
  test('every operation was exercised with a success status', () => {
    const ops = contract().operations();
    const missing = ops.filter((op) => ![...(seen.get(op) ?? [])].some((s) => s < 400));
    expect(missing).toEqual([]);
  });
});
