/**
 * FilingsClient against the real emulator over real HTTP: every operation (responses validated
 * against the OpenAPI document), client-side validation that never sends, every error class forced
 * through the emulator's fault controls, rate-limit state, quotas, abort, and key hygiene.
 */
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { FilingsClient, type CallOptions } from '../../src/api/index.js';
import type { ApiError } from '../../src/errors.js';
import {
  AuthenticationError,
  BackendUnavailableError,
  ForbiddenError,
  NotFoundError,
  QuotaExceededError,
  RateLimitedError,
  RequestValidationError,
  ServerError,
  TransportError,
} from '../../src/errors.js';
import { assertValidResponse } from '../helpers/contract.js';
import { startTestEmulator, TEST_QUOTAS, type TestEmulator } from '../helpers/emulator.js';

let em: TestEmulator;
let client: FilingsClient;

beforeAll(async () => {
  em = await startTestEmulator();
  client = new FilingsClient({ baseUrl: em.url, apiKey: em.apiKey });
}, 60_000);

afterAll(async () => {
  await client?.close();
  await em?.close();
});

async function totalRequests(): Promise<number> {
  const res = await fetch(`${em.url}/_emulator/stats`);
  const stats = (await res.json()) as { total: { requests: number } };
  return stats.total.requests;
}

/** Runs `fn`, returns what it threw (fails the test if it did not throw). */
async function thrown(fn: () => Promise<unknown>): Promise<ApiError | RequestValidationError> {
  try {
    await fn();
  } catch (err) {
    return err as ApiError;
  }
  throw new Error('expected the call to throw');
}

const fault = (kind: string, extra: Record<string, string> = {}): CallOptions => ({
  headers: { 'X-Emulator-Fault': kind, ...extra },
});

describe('every operation through its typed method', () => {
  test('facts: Apple FY2024 revenue matches the SEC companyfacts file, exactly, as a string', async () => {
    // Ground truth from the bundled SEC file, not from the emulator.
    const facts = JSON.parse(
      gunzipSync(
        readFileSync(new URL('../../data/sec/companyfacts/CIK0000320193.json.gz', import.meta.url)),
      ).toString('utf8'),
    ) as { facts: Record<string, Record<string, { units: Record<string, Array<Record<string, unknown>>> }>> };
    const usd = facts.facts['us-gaap']?.RevenueFromContractWithCustomerExcludingAssessedTax?.units.USD ?? [];
    const truth = usd.find(
      (f) => f.accn === '0000320193-24-000123' && f.start === '2023-10-01' && f.end === '2024-09-28',
    );
    expect(truth).toBeDefined();

    // The emulator's window is the clock minute: it resets at the end of the minute of the call.
    const minuteEnd = (ms: number): number => (Math.floor(ms / 60_000) + 1) * 60_000;
    const sentIn = minuteEnd(Date.now());
    const r = await client.factsCore({
      ticker: 'AAPL',
      metric_id: 'us-gaap#RevenueFromContractWithCustomerExcludingAssessedTax',
    });
    const answeredIn = minuteEnd(Date.now());
    assertValidResponse('facts/core', r.status, r.data);
    const row = r.data.rows.find((x) => x.period_key === 'duration:2023-10-01..2024-09-28');
    expect(row?.value_num).toBe(String(truth?.val));
    expect(row?.source_accession).toBe('0000320193-24-000123');
    expect(r.status).toBe(200);
    expect(r.rateLimit.limit).toBeGreaterThan(0);
    expect(r.rateLimit.remaining).toBeLessThan(r.rateLimit.limit ?? 0);
    expect([sentIn, answeredIn]).toContain(r.rateLimit.resetAtMs);
  });

  test('every keyed operation returns ApiResult with data valid per the contract', async () => {
    const results: Array<[string, { status: number; data: unknown }]> = [];
    const add = (op: string, r: { status: number; data: unknown }): void => {
      results.push([op, r]);
    };
    add('facts/latest', await client.factsLatest({ ticker: 'NVDA', limit: 10 }));
    add('facts/core', await client.factsCore({ ticker: 'NVDA' }));
    add('facts/full', await client.factsFull({ ticker: 'WMT' }));
    const catalog = await client.seriesCatalog({ ticker: 'NVDA' });
    add('series/catalog', catalog);
    add('dims/catalog', await client.dimsCatalog({ ticker: 'NVDA' }));
    add('evidence/enriched', await client.evidenceEnriched({ ticker: 'WMT' }));
    add('issuer/reference', await client.issuerReference({ cik: '0001045810' }));
    const keys = catalog.data.rows.slice(0, 2).map((r) => r.series_key);
    add('facts/latest/by-series', await client.factsLatestBySeries({ ticker: 'NVDA', series_keys: keys }));
    add('facts/core/by-series', await client.factsCoreBySeries({ ticker: 'NVDA', series_keys: keys }));
    add('facts/full/by-series', await client.factsFullBySeries({ ticker: 'NVDA', series_keys: keys }));
    const ids = catalog.data.rows.slice(0, 2).map((r) => r.series_id);
    const batch = await client.seriesBatch({ ids });
    add('series/batch', batch);
    expect(batch.data.series.map((s) => s.series_id)).toEqual(ids);
    add(
      'telemetry/proof-open',
      await client.telemetryProofOpen({ evidence_key: 'ev-from-test', surface: 'client-test' }),
    );
    add('search/entities', await client.searchEntities({ query: 'revenue', ticker: 'NVDA' }));
    add('search/series', await client.searchSeries({ query: 'revenue', ticker: 'NVDA', fetch_top: 1 }));
    add('search/filings', await client.searchFilings({ query: 'supply chain', ticker: 'NVDA' }));

    const blob = await client.seriesBlob(
      batch.data.series[0]?.series_id ?? '',
      batch.data.series[0]?.serving.series_version ?? 0,
    );
    add('series/blob', blob);
    add('sandbox/facts', await client.sandboxFacts({ ticker: 'NVDA', limit: 2 }));
    add('sandbox/search', await client.sandboxSearch({ query: 'revenue', ticker: 'NVDA', limit: 2 }));

    for (const [op, r] of results) assertValidResponse(op, r.status, r.data);
    expect(results.find(([op]) => op === 'telemetry/proof-open')?.[1].status).toBe(202);
  }, 60_000);

  test('evidence open returns the viewer location without following it', async () => {
    const ev = await client.evidenceEnriched({
      ticker: 'AAPL',
      metric_id: 'us-gaap#RevenueFromContractWithCustomerExcludingAssessedTax',
    });
    const url = ev.data.rows.find((r) => r.evidence_url !== null)?.evidence_url ?? '';
    const id = /\/api\/evidence\/([^/]+)\/open/.exec(url)?.[1] ?? '';
    const r = await client.evidenceOpen(decodeURIComponent(id));
    expect(r.status).toBe(302);
    expect(r.data.location).toMatch(/viewer|\/filings?\//i);
  });
});

describe('client-side validation never sends a request', () => {
  test('an out-of-bounds limit throws RequestValidationError naming the field; the emulator saw nothing', async () => {
    const before = await totalRequests();
    const err = await thrown(() => client.factsLatest({ ticker: 'AAPL', limit: 501 }));
    expect(err).toBeInstanceOf(RequestValidationError);
    expect(err.message).toBe('facts/latest: limit: must be from 1 to 500, got 501');
    expect((err as RequestValidationError).field).toBe('limit');
    const more = [
      () =>
        client.factsCoreBySeries({
          ticker: 'AAPL',
          series_keys: Array.from({ length: 101 }, () => 'a'.repeat(64)),
        }),
      () => client.searchEntities({ query: 'r' }),
      () => client.searchFilings({ query: 'revenue' }),
      () => client.seriesBatch({ ids: [] }),
      () => client.factsFull({ ticker: 'AAPL', cik: '0000320193' }),
      () => client.stream('facts/full', { ticker: 'AA PL' }),
      () => client.sandboxFacts({ ticker: 'AAPL', limit: 21 }),
    ];
    for (const fn of more) expect(await thrown(fn)).toBeInstanceOf(RequestValidationError);
    expect(await totalRequests()).toBe(before);
  });
});

describe('errors a person understands', () => {
  test('a wrong key', async () => {
    const wrong = 'ffx_live_b2b_this_key_does_not_exist_0000';
    const c = new FilingsClient({ baseUrl: em.url, apiKey: wrong });
    try {
      const err = await thrown(() => c.factsFull({ ticker: 'AAPL' }));
      expect(err).toBeInstanceOf(AuthenticationError);
      expect(err.code).toBe('API_KEY_INVALID');
      expect(err.message).toBe(
        'facts/full: the API key was not recognised (401 Invalid API key); check FILINGS_API_KEY',
      );
      expect(err.retryable).toBe(false);
      for (const text of [err.message, (err as ApiError).bodyExcerpt ?? '', JSON.stringify(err)])
        expect(text).not.toContain(wrong);
    } finally {
      await c.close();
    }
  });

  test('no key at all', async () => {
    const c = new FilingsClient({ baseUrl: em.url, apiKey: '' });
    try {
      const err = await thrown(() => c.factsCore({ ticker: 'AAPL' }));
      expect(err.code).toBe('API_KEY_REQUIRED');
      expect(err.message).toBe('facts/core: no API key was sent (401 API key required); set FILINGS_API_KEY');
    } finally {
      await c.close();
    }
  });

  test('a revoked key, and every other 403 reason', async () => {
    const cases: Array<[keyof TestEmulator['keys'], string, string]> = [
      [
        'revoked',
        'API_KEY_REVOKED',
        'facts/full: API key has been revoked (403); create a new key in the developer portal and update FILINGS_API_KEY',
      ],
      [
        'disabled',
        'API_KEY_DISABLED',
        'facts/full: API key is disabled (403); re-enable the key in the developer portal or use another key',
      ],
      [
        'expired',
        'API_KEY_EXPIRED',
        'facts/full: API key has expired (403); create a new key in the developer portal and update FILINGS_API_KEY',
      ],
      [
        'accountDisabled',
        'API_ACCOUNT_DISABLED',
        'facts/full: Account is disabled (403); the account is suspended; contact the API provider',
      ],
    ];
    for (const [name, code, message] of cases) {
      const c = new FilingsClient({ baseUrl: em.url, apiKey: em.keys[name] });
      try {
        const err = await thrown(() => c.factsFull({ ticker: 'AAPL' }));
        expect(err).toBeInstanceOf(ForbiddenError);
        expect(err.code).toBe(code);
        expect(err.message).toBe(message);
        expect(JSON.stringify(err)).not.toContain(em.keys[name]);
        expect(err.message).not.toContain(em.keys[name]);
      } finally {
        await c.close();
      }
    }
    const c = new FilingsClient({ baseUrl: em.url, apiKey: em.keys.noCrossCompany });
    try {
      const err = await thrown(() => c.searchFilings({ query: 'supply chain risk' }));
      expect(err).toBeInstanceOf(ForbiddenError);
      expect(err.code).toBe('API_NOT_ENTITLED');
      expect(err.message).toMatch(
        /^search\/filings: API key is not entitled for .+ \(403\); the key lacks this entitlement/,
      );
    } finally {
      await c.close();
    }
  });

  test('an unknown ticker', async () => {
    const err = await thrown(() => client.factsFull({ ticker: 'ZZZZZZ' }));
    expect(err).toBeInstanceOf(NotFoundError);
    expect((err as NotFoundError).identifier).toBe('ZZZZZZ');
    expect(err.message).toMatch(/^facts\/full: company not found: ticker ZZZZZZ \(404 .*ZZZZZZ.*\)$/);
    expect((err as NotFoundError).status).toBe(404);
    const viaStream = await thrown(() => client.stream('evidence/enriched', { cik: '0000000001' }));
    expect(viaStream).toBeInstanceOf(NotFoundError);
    expect((viaStream as NotFoundError).identifier).toBe('0000000001');
  });
});

describe('faults forced through X-Emulator-Fault: each error class, one request per call', () => {
  test('503 → BackendUnavailableError, 500 → ServerError, both retryable, with rate-limit state', async () => {
    const before = await totalRequests();
    const unavailable = await thrown(() => client.factsFull({ ticker: 'AAPL' }, fault('503')));
    expect(unavailable).toBeInstanceOf(BackendUnavailableError);
    expect(unavailable.message).toBe(
      'facts/full: the facts backend is temporarily unavailable (503 Facts backend unavailable); retry with backoff',
    );
    expect(unavailable.retryable).toBe(true);
    expect((unavailable as ApiError).rateLimit.limit).toBeGreaterThan(0);
    expect((unavailable as ApiError).bodyExcerpt).toContain('Facts backend unavailable');
    const server = await thrown(() => client.evidenceEnriched({ ticker: 'AAPL' }, fault('500')));
    expect(server).toBeInstanceOf(ServerError);
    expect(server.message).toMatch(
      /^evidence\/enriched: the API failed with a server error \(500\): .+; retry later$/,
    );
    const viaStream = await thrown(() => client.stream('facts/full', { ticker: 'AAPL' }, fault('503')));
    expect(viaStream).toBeInstanceOf(BackendUnavailableError);
    // No retries inside the client: three calls, three requests.
    expect((await totalRequests()) - before).toBe(3);
  });

  test('reset → TRANSPORT_RESET', async () => {
    const err = await thrown(() => client.factsCore({ ticker: 'AAPL' }, fault('reset')));
    expect(err).toBeInstanceOf(TransportError);
    expect(err.code).toBe('TRANSPORT_RESET');
    expect(err.retryable).toBe(true);
    expect(err.message).toMatch(/^facts\/core: the connection to http:\/\/127\.0\.0\.1:\d+ was reset/);
  });

  test('truncate → TRANSPORT_TRUNCATED (plain and streamed)', async () => {
    const plain = await thrown(() => client.factsCore({ ticker: 'WMT' }, fault('truncate')));
    expect(plain.code).toBe('TRANSPORT_TRUNCATED');
    expect(plain.message).toMatch(
      /^facts\/core: the response body was cut off after \d+ bytes of \d+ declared/,
    );
    expect((plain as TransportError).status).toBe(200);
    const s = await client.stream('facts/core', { ticker: 'WMT' }, fault('truncate'));
    let rows = 0;
    const err = await thrown(async () => {
      for await (const _row of s.rows) rows += 1;
    });
    expect(err.code).toBe('TRANSPORT_TRUNCATED');
    expect(rows).toBeGreaterThan(0); // the half that arrived was handed out, then the failure
    await expect(s.envelope()).rejects.toBeInstanceOf(TransportError);
  });

  test('slow body beyond bodyTimeoutMs → TRANSPORT_TIMEOUT; within it → success', async () => {
    // undici's body timer has a resolution of about 1 s, hence pauses well above it.
    const err = await thrown(() =>
      client.factsCore(
        { ticker: 'WMT' },
        { ...fault('slow', { 'X-Emulator-Fault-Ms': '1500' }), bodyTimeoutMs: 300 },
      ),
    );
    expect(err.code).toBe('TRANSPORT_TIMEOUT');
    expect(err.message).toMatch(/^facts\/core: the API stopped sending the response body/);
    const ok = await client.issuerReference(
      { ticker: 'WMT' },
      fault('slow', { 'X-Emulator-Fault-Ms': '20' }),
    );
    expect(ok.data.rows[0]?.cik).toBe('0000104169');
  });

  test('AbortSignal: before sending, and mid-stream → TRANSPORT_ABORTED, not retryable', async () => {
    const before = await totalRequests();
    const early = await thrown(() => client.factsFull({ ticker: 'AAPL' }, { signal: AbortSignal.abort() }));
    expect(early.code).toBe('TRANSPORT_ABORTED');
    expect(await totalRequests()).toBe(before);

    const ac = new AbortController();
    const s = await client.stream(
      'facts/core',
      { ticker: 'WMT' },
      { ...fault('slow', { 'X-Emulator-Fault-Ms': '200' }), signal: ac.signal },
    );
    const err = await thrown(async () => {
      for await (const _row of s.rows) ac.abort();
    });
    expect(err.code).toBe('TRANSPORT_ABORTED');
    expect(err.retryable).toBe(false);
  });

  test('breaking out of the rows early cancels the response; envelope() rejects', async () => {
    const s = await client.stream('facts/full', { ticker: 'AAPL' });
    let n = 0;
    for await (const _row of s.rows) if (++n === 10) break;
    await expect(s.envelope()).rejects.toMatchObject({ code: 'TRANSPORT_ABORTED' });
    // The pool is still usable afterwards.
    expect((await client.issuerReference({ ticker: 'AAPL' })).status).toBe(200);
  });
});

describe('429: rate limit and quota', () => {
  test('quota per key, then per account: QuotaExceededError with quota, scope, limit, used', async () => {
    const keyClient = new FilingsClient({ baseUrl: em.url, apiKey: em.keys.quotaLimited });
    const sibling = new FilingsClient({ baseUrl: em.url, apiKey: em.keys.quotaSibling });
    try {
      for (let i = 0; i < TEST_QUOTAS.keyDaily; i++) await keyClient.issuerReference({ ticker: 'AAPL' });
      const perKey = await thrown(() => keyClient.issuerReference({ ticker: 'AAPL' }));
      expect(perKey).toBeInstanceOf(QuotaExceededError);
      expect(perKey).toMatchObject({
        quota: 'daily',
        scope: 'api_key',
        limit: TEST_QUOTAS.keyDaily,
        retryable: true,
      });
      expect(perKey.message).toMatch(
        /^issuer\/reference: daily quota exceeded for this API key \(\d+ of 3 requests used\); it resets at 00:00 UTC$/,
      );
      expect((perKey as QuotaExceededError).retryAfterMs).toBeGreaterThan(0);

      let accountErr: ApiError | undefined;
      for (let i = 0; i < TEST_QUOTAS.accountDaily + 1 && !accountErr; i++) {
        await sibling.issuerReference({ ticker: 'AAPL' }).catch((e: unknown) => {
          accountErr = e as ApiError;
        });
      }
      expect(accountErr).toBeInstanceOf(QuotaExceededError);
      expect(accountErr).toMatchObject({ quota: 'daily', scope: 'account', limit: TEST_QUOTAS.accountDaily });
      expect(accountErr?.message).toContain('daily quota exceeded for the account (all its keys together)');
    } finally {
      await keyClient.close();
      await sibling.close();
    }
  });

  test('per-minute rate limit: RateLimitedError with retryAfterMs, limit, windowMs and headers', async () => {
    const limited = await startTestEmulator({ rateLimitPerMinute: 2 });
    const c = new FilingsClient({ baseUrl: limited.url, apiKey: limited.apiKey });
    try {
      const first = await c.issuerReference({ ticker: 'AAPL' });
      expect(first.rateLimit).toMatchObject({ limit: 2, remaining: 1 });
      await c.issuerReference({ ticker: 'AAPL' });
      const err = await thrown(() => c.stream('facts/core', { ticker: 'AAPL' }));
      expect(err).toBeInstanceOf(RateLimitedError);
      const e = err as RateLimitedError;
      expect(e).toMatchObject({ limit: 2, windowMs: 60_000, retryable: true, status: 429 });
      expect(e.retryAfterMs).toBeGreaterThan(0);
      expect(e.retryAfterMs).toBeLessThanOrEqual(60_000);
      expect(e.rateLimit).toMatchObject({ limit: 2, remaining: 0, retryAfterMs: e.retryAfterMs });
      expect(e.message).toMatch(
        /^facts\/core: rate limit exceeded \(2 requests per minute for this key\); retry in \d+ s$/,
      );
    } finally {
      await c.close();
      await limited.close();
    }
  }, 60_000);
});
