/**
 * Unit tests of the client's pure parts: Retry-After / rate-limit headers, lossless JSON numbers,
 * the incremental row extractors, and the error mapping by status and body shape (section 7).
 */
import { describe, expect, test } from 'vitest';
import { parseHttpDate, parseRateLimit, parseRetryAfter } from '../../src/api/rate-limit.js';
import { parseJsonNumber, significantDigits } from '../../src/api/json-number.js';
import { createRowExtractor, ExtractError, parseJsonLossless } from '../../src/api/row-extractor.js';
import { errorFromResponse } from '../../src/api/error-map.js';
import {
  AuthenticationError,
  BackendUnavailableError,
  BadRequestError,
  ForbiddenError,
  NotFoundError,
  QuotaExceededError,
  RateLimitedError,
  ServerError,
  UnexpectedStatusError,
} from '../../src/errors.js';

// 2026-10-21T07:27:30Z, 30 s before the HTTP-dates below.
const NOW = Date.UTC(2026, 9, 21, 7, 27, 30);

describe('Retry-After (RFC 9110 §10.2.3)', () => {
  test('delta-seconds form', () => {
    expect(parseRetryAfter('120', NOW)).toBe(120_000);
    expect(parseRetryAfter(' 0 ', NOW)).toBe(0);
  });

  test('HTTP-date form, all three date formats, relative to the injected now', () => {
    expect(parseRetryAfter('Wed, 21 Oct 2026 07:28:00 GMT', NOW)).toBe(30_000);
    expect(parseRetryAfter('Wednesday, 21-Oct-26 07:28:00 GMT', NOW)).toBe(30_000);
    expect(parseRetryAfter('Wed Oct 21 07:28:00 2026', NOW)).toBe(30_000);
    expect(parseHttpDate('Wed, 21 Oct 2026 07:28:00 GMT')).toBe(Date.UTC(2026, 9, 21, 7, 28, 0));
  });

  test('a date in the past means no wait', () => {
    expect(parseRetryAfter('Wed, 21 Oct 2026 07:00:00 GMT', NOW)).toBe(0);
  });

  test('invalid values are ignored, not guessed', () => {
    for (const bad of ['', '-1', '1.5', 'soon', '2026-10-21', 'Wed, 21 Oct 2026 07:28:00 PST']) {
      expect(parseRetryAfter(bad, NOW), bad).toBeUndefined();
    }
    expect(parseRetryAfter(undefined, NOW)).toBeUndefined();
  });
});

describe('rate-limit headers (section 8)', () => {
  test('X-RateLimit-* parsed; Reset is Unix seconds → epoch ms', () => {
    const state = parseRateLimit(
      {
        'x-ratelimit-limit': '60',
        'x-ratelimit-remaining': '0',
        'x-ratelimit-reset': '1792567680',
        'retry-after': '30',
      },
      NOW,
    );
    expect(state).toEqual({ limit: 60, remaining: 0, resetAtMs: 1_792_567_680_000, retryAfterMs: 30_000 });
  });

  test('missing or malformed headers are left out', () => {
    expect(parseRateLimit({}, NOW)).toEqual({});
    expect(parseRateLimit({ 'x-ratelimit-limit': 'lots', 'x-ratelimit-remaining': '-3' }, NOW)).toEqual({});
  });
});

describe('lossless JSON numbers', () => {
  test('integers beyond 2^53 keep their exact text', () => {
    expect(parseJsonNumber('9007199254740991')).toBe(9007199254740991);
    expect(parseJsonNumber('9007199254740993')).toBe('9007199254740993');
    expect(parseJsonNumber('-12345678901234567890')).toBe('-12345678901234567890');
  });

  test('decimals with more than 15 significant digits keep their text; shorter ones are numbers', () => {
    expect(parseJsonNumber('0.8731')).toBe(0.8731);
    expect(parseJsonNumber('123456789012.345')).toBe(123456789012.345);
    expect(parseJsonNumber('1234567890123.4567')).toBe('1234567890123.4567');
    expect(parseJsonNumber('1e400')).toBe('1e400');
    expect(significantDigits('0.000120')).toBe(2);
  });

  test('parseJsonLossless: same result as JSON.parse when nothing would round, exact text otherwise', () => {
    const plain = '{"a":[1,2.5,-3e2],"b":"x"}';
    expect(parseJsonLossless(plain)).toEqual(JSON.parse(plain));
    expect(parseJsonLossless('{"n":12345678901234567890,"s":"1234567890123456789"}')).toEqual({
      n: '12345678901234567890',
      s: '1234567890123456789',
    });
    expect(() => parseJsonLossless('{"n":12345678901234567890')).toThrow(ExtractError);
    expect(() => parseJsonLossless('{"n":1')).toThrow(/ended/);
    expect(() => parseJsonLossless('{"n":1')).toThrow(expect.objectContaining({ kind: 'truncated' }));
    expect(() => parseJsonLossless('{"n":1}}')).toThrow(expect.objectContaining({ kind: 'malformed' }));
    expect(() => parseJsonLossless('<html>')).toThrow(expect.objectContaining({ kind: 'malformed' }));
  });
});

describe('row extractor', () => {
  const envelope = {
    scope: 'company',
    ticker: 'AAPL',
    cik: '0000320193',
    count: 3,
    rows: [
      { metric_id: 'us-gaap#Revenues', value_num: '391035000000', nested: { a: [1, { b: null }] } },
      { label: 'Café "quoted" \\ ✓', big: 1 },
      { empty: {}, arr: [] },
    ],
    truncated: true,
  };
  const text = JSON.stringify(envelope).replace('"big":1', '"big":98765432109876543210');

  test('rows come out incrementally, in order, split at any byte boundary (UTF-8 included)', () => {
    const bytes = Buffer.from(text, 'utf8');
    for (const step of [1, 3, 17, bytes.length]) {
      const ex = createRowExtractor();
      const rows: unknown[] = [];
      const perChunk: number[] = [];
      for (let i = 0; i < bytes.length; i += step) {
        const got = ex.write(bytes.subarray(i, i + step));
        perChunk.push(got.length);
        rows.push(...got);
      }
      const env = ex.end();
      expect(rows).toEqual([
        envelope.rows[0],
        { ...envelope.rows[1], big: '98765432109876543210' },
        envelope.rows[2],
      ]);
      expect(env).toEqual({ scope: 'company', ticker: 'AAPL', cik: '0000320193', count: 3, truncated: true });
      if (step === 1) expect(perChunk.filter((n) => n > 0).length).toBe(3); // one row at a time
    }
  });

  test('a body cut mid-JSON is truncated; invalid JSON or a non-envelope is malformed', () => {
    const cases: Array<[string, 'truncated' | 'malformed']> = [
      [text.slice(0, Math.floor(text.length / 2)), 'truncated'],
      ['{"rows":[{"a":1}', 'truncated'],
      ['[1,2]', 'malformed'],
      ['{"rows":{"a":1}}', 'malformed'],
      ['{"rows":[1]}', 'malformed'],
      ['{"count":0}', 'malformed'],
      ['{"rows":[]}}', 'malformed'],
      ['<html>busy</html>', 'malformed'],
    ];
    for (const [body, kindExpected] of cases) {
      const ex = createRowExtractor();
      let caught: unknown;
      try {
        ex.write(Buffer.from(body));
        ex.end();
      } catch (err) {
        caught = err;
      }
      expect(caught, body).toBeInstanceOf(ExtractError);
      expect((caught as ExtractError).kind, body).toBe(kindExpected);
    }
  });
});

describe('error mapping by status and body shape (section 7)', () => {
  const base = { operation: 'facts/full', rateLimit: { limit: 60, remaining: 0 } };
  const map = (status: number, body: unknown, extra: object = {}) =>
    errorFromResponse({
      ...base,
      status,
      bodyText: typeof body === 'string' ? body : JSON.stringify(body),
      ...extra,
    });

  test('401 both strings', () => {
    const required = map(401, { error: 'API key required' });
    expect(required).toBeInstanceOf(AuthenticationError);
    expect(required.code).toBe('API_KEY_REQUIRED');
    const invalid = map(401, { error: 'Invalid API key' });
    expect(invalid.code).toBe('API_KEY_INVALID');
    expect(invalid.message).toBe(
      'facts/full: the API key was not recognised (401 Invalid API key); check FILINGS_API_KEY',
    );
    expect(invalid.retryable).toBe(false);
  });

  test('each 403 string maps to its code', () => {
    const cases: Array<[string, string]> = [
      ['Account is disabled', 'API_ACCOUNT_DISABLED'],
      ['API key has been revoked', 'API_KEY_REVOKED'],
      ['API key is disabled', 'API_KEY_DISABLED'],
      ['API key has expired', 'API_KEY_EXPIRED'],
      ['API key is not entitled for cross-company search', 'API_NOT_ENTITLED'],
      ['Something else', 'API_FORBIDDEN'],
    ];
    for (const [error, code] of cases) {
      const e = map(403, { error });
      expect(e, error).toBeInstanceOf(ForbiddenError);
      expect(e.code, error).toBe(code);
      expect(e.message).toContain(error);
    }
  });

  test('404 names the identifier; 400, 500, 503 and other statuses', () => {
    const nf = map(
      404,
      { error: 'Unknown ticker: ZZZZ' },
      { subject: { what: 'company', label: 'ticker ZZZZ', identifier: 'ZZZZ' } },
    );
    expect(nf).toBeInstanceOf(NotFoundError);
    expect((nf as NotFoundError).identifier).toBe('ZZZZ');
    expect(nf.message).toBe('facts/full: company not found: ticker ZZZZ (404 Unknown ticker: ZZZZ)');
    expect(map(400, { error: 'limit must be an integer from 1 to 500' })).toBeInstanceOf(BadRequestError);
    expect(map(500, { error: 'lookup failed' })).toBeInstanceOf(ServerError);
    const unavailable = map(503, { error: 'Facts backend unavailable' });
    expect(unavailable).toBeInstanceOf(BackendUnavailableError);
    expect(unavailable.retryable).toBe(true);
    const teapot = map(418, 'short and stout');
    expect(teapot).toBeInstanceOf(UnexpectedStatusError);
    expect(teapot.bodyExcerpt).toBe('short and stout');
    expect(teapot.retryable).toBe(false);
    expect(map(502, '<html>bad gateway</html>').retryable).toBe(true);
  });

  test('429: the two body shapes give two classes', () => {
    const rate = map(429, { error: 'Rate limit exceeded', retryAfter: 12, limit: 60, windowMs: 60000 });
    expect(rate).toBeInstanceOf(RateLimitedError);
    expect(rate).toMatchObject({
      retryAfterMs: 12_000,
      limit: 60,
      windowMs: 60_000,
      code: 'API_RATE_LIMITED',
    });
    // Retry-After header wins over the body field.
    const withHeader = errorFromResponse({
      operation: 'facts/full',
      status: 429,
      bodyText: JSON.stringify({ error: 'Rate limit exceeded', retryAfter: 12, limit: 60, windowMs: 60000 }),
      rateLimit: { retryAfterMs: 5_000 },
    });
    expect((withHeader as RateLimitedError).retryAfterMs).toBe(5_000);
    const quota = map(429, {
      error: 'monthly quota exceeded',
      quota: 'monthly',
      scope: 'account',
      limit: 8,
      used: 8,
    });
    expect(quota).toBeInstanceOf(QuotaExceededError);
    expect(quota).toMatchObject({
      quota: 'monthly',
      scope: 'account',
      limit: 8,
      used: 8,
      code: 'API_QUOTA_EXCEEDED',
    });
    expect(quota.message).toBe(
      'facts/full: monthly quota exceeded for the account (all its keys together) (8 of 8 requests used); it resets on the first day of the next month (UTC)',
    );
  });

  test('the API key never appears in message or excerpt, even when the server echoes it', () => {
    const key = 'ffx_live_b2b_secret_abcdef0123456789';
    const e = errorFromResponse({
      operation: 'facts/full',
      status: 400,
      bodyText: JSON.stringify({ error: `bad key ${key}` }),
      rateLimit: {},
      apiKey: key,
    });
    expect(e.message).not.toContain(key);
    expect(e.bodyExcerpt).not.toContain(key);
    expect(JSON.stringify(e)).not.toContain(key);
  });
});
