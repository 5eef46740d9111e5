/**
 * Limits of section 8 over real HTTP with an injected clock: the per-key fixed 60 s window and its
 * headers, both 429 shapes with Retry-After, quotas per account then per key, telemetry outside
 * the monthly quota, day and month rollover, CLI-style overrides, and /_emulator/reset.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EmulatorConfigError } from '../../src/emulator/errors.js';
import { startEmulator } from '../../src/emulator/index.js';
import { validateResponse } from '../helpers/contract.js';
import { TestClock } from '../helpers/clock.js';
import {
  headerRecord,
  postOperation,
  startTestEmulator,
  bundledTestStore,
  TEST_QUOTAS,
  type TestEmulator,
} from '../helpers/emulator.js';
import { TIGHT_KEY, tightKeysFile } from '../helpers/tight-keys.js';

const op = 'issuer/reference';
const body = { ticker: 'AAPL' };
/** 12:00:00.000 UTC on 15 Jan 2026: a window start, mid-month, half a day before midnight. */
const START = Date.UTC(2026, 0, 15, 12, 0, 0);

describe('per-minute window', () => {
  let emu: TestEmulator;
  // Frozen: the emulator's windows and Retry-After come out exact, whatever the machine's load.
  const clock = new TestClock(START).freeze();
  beforeAll(async () => {
    emu = await startTestEmulator({ clock, rateLimitPerMinute: 3 });
  });
  afterAll(() => emu.close());
  afterEach(async () => {
    await fetch(`${emu.url}/_emulator/reset`, { method: 'POST' });
  });

  it('counts down X-RateLimit-Remaining, then answers the rate-limit 429 shape with Retry-After', async () => {
    clock.set(START + 15_000);
    const resetS = (START + 60_000) / 1000;
    for (const remaining of [2, 1, 0]) {
      const res = await postOperation(emu.url, op, body, emu.apiKey);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-limit')).toBe('3');
      expect(res.headers.get('x-ratelimit-remaining')).toBe(String(remaining));
      expect(res.headers.get('x-ratelimit-reset')).toBe(String(resetS));
    }
    const res = await postOperation(emu.url, op, body, emu.apiKey);
    expect(res.status).toBe(429);
    const retryAfter = Number(res.headers.get('retry-after'));
    // Fixed window aligned to the minute: 45 s left.
    expect(retryAfter).toBe(45);
    expect(res.body).toEqual({ error: 'Rate limit exceeded', retryAfter, limit: 3, windowMs: 60000 });
    expect(res.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(res.headers.get('x-ratelimit-reset')).toBe(String(resetS));
    expect(validateResponse(op, 429, res.body, headerRecord(res.headers))).toEqual([]);
  });

  it('windows are per key, a 429 spends nothing, and the next window starts afresh', async () => {
    clock.set(START + 120_000);
    for (let i = 0; i < 3; i++) expect((await postOperation(emu.url, op, body, emu.apiKey)).status).toBe(200);
    expect((await postOperation(emu.url, op, body, emu.apiKey)).status).toBe(429);
    expect((await postOperation(emu.url, op, body, emu.apiKey)).status).toBe(429);
    // Another key of the same account has its own window.
    const other = await postOperation(emu.url, op, body, emu.keys.noCrossCompany);
    expect(other.status).toBe(200);
    expect(other.headers.get('x-ratelimit-remaining')).toBe('2');
    clock.set(START + 180_000);
    const next = await postOperation(emu.url, op, body, emu.apiKey);
    expect(next.status).toBe(200);
    expect(next.headers.get('x-ratelimit-remaining')).toBe('2');
    expect(next.headers.get('x-ratelimit-reset')).toBe(String((START + 240_000) / 1000));
  });

  it('400 and 404 are admitted requests: they spend the window; 400 carries no headers, 404 does', async () => {
    clock.set(START + 300_000);
    const bad = await postOperation(emu.url, op, { ticker: 'AAPL', cik: '320193' }, emu.apiKey);
    expect(bad.status).toBe(400);
    expect(bad.headers.get('x-ratelimit-limit')).toBeNull();
    const missing = await postOperation(emu.url, op, { ticker: 'NOSUCHCO' }, emu.apiKey);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('x-ratelimit-remaining')).toBe('1');
    expect(missing.body).toEqual({ error: 'Unknown ticker: NOSUCHCO' });
  });

  it('telemetry is rate-limited and its 202 carries no rate-limit headers', async () => {
    clock.set(START + 360_000);
    for (let i = 0; i < 3; i++) {
      const res = await postOperation(emu.url, 'telemetry/proof-open', { evidence_key: 'ev1' }, emu.apiKey);
      expect(res.status).toBe(202);
      expect(res.body).toEqual({ ok: true });
      expect(res.headers.get('x-ratelimit-limit')).toBeNull();
    }
    const res = await postOperation(emu.url, 'telemetry/proof-open', { evidence_key: 'ev1' }, emu.apiKey);
    expect(res.status).toBe(429);
    expect(res.body).toMatchObject({ error: 'Rate limit exceeded', limit: 3 });
  });

  it('stats count requests and 429s per key and per operation; reset clears them and the windows', async () => {
    clock.set(START + 420_000);
    for (let i = 0; i < 4; i++) await postOperation(emu.url, op, body, emu.apiKey);
    const stats = (await (await fetch(`${emu.url}/_emulator/stats`)).json()) as {
      by_key: Record<string, { requests: number; rate_limited: number; status_429: number }>;
      by_operation: Record<string, { requests: number; status_429: number }>;
      limits: { keys: Record<string, { window: { remaining: number } }> };
    };
    expect(stats.by_key[emu.keyIds.active]).toMatchObject({ requests: 4, rate_limited: 1, status_429: 1 });
    expect(stats.by_operation[op]).toMatchObject({ requests: 4, status_429: 1 });
    expect(stats.limits.keys[emu.keyIds.active]?.window.remaining).toBe(0);
    await fetch(`${emu.url}/_emulator/reset`, { method: 'POST' });
    expect((await postOperation(emu.url, op, body, emu.apiKey)).headers.get('x-ratelimit-remaining')).toBe(
      '2',
    );
    const after = (await (await fetch(`${emu.url}/_emulator/stats`)).json()) as typeof stats;
    expect(after.by_key[emu.keyIds.active]).toMatchObject({ requests: 1, status_429: 0 });
  });
});

describe('quotas per account first, then per key', () => {
  let emu: TestEmulator;
  // Frozen: the emulator's windows and Retry-After come out exact, whatever the machine's load.
  const clock = new TestClock(START).freeze();
  beforeAll(async () => {
    emu = await startTestEmulator({ clock });
  });
  afterAll(() => emu.close());

  type QuotaBody = { error: string; quota: string; scope: string; limit: number; used: number };

  it('key daily cap, then account daily cap, day rollover, then account monthly cap and month rollover', async () => {
    const { quotaLimited, quotaSibling } = emu.keys;
    clock.set(START);
    // Key cap (3/day) of quotaLimited.
    for (let i = 0; i < TEST_QUOTAS.keyDaily; i++) {
      expect((await postOperation(emu.url, op, body, quotaLimited)).status).toBe(200);
    }
    const keyCap = await postOperation<QuotaBody>(emu.url, op, body, quotaLimited);
    expect(keyCap.status).toBe(429);
    expect(keyCap.body).toEqual({
      error: 'daily quota exceeded',
      quota: 'daily',
      scope: 'api_key',
      limit: 3,
      used: 3,
    });
    const toMidnight = (Date.UTC(2026, 0, 16) - clock.now()) / 1000;
    expect(Number(keyCap.headers.get('retry-after'))).toBe(toMidnight);
    expect(keyCap.headers.get('x-ratelimit-limit')).toBe('1000');
    expect(validateResponse(op, 429, keyCap.body, headerRecord(keyCap.headers))).toEqual([]);

    // The sibling key still has the account's remaining 2 of 5: splitting keys does not help.
    expect((await postOperation(emu.url, op, body, quotaSibling)).status).toBe(200);
    expect((await postOperation(emu.url, op, body, quotaSibling)).status).toBe(200);
    const accountCap = await postOperation<QuotaBody>(emu.url, op, body, quotaSibling);
    expect(accountCap.body).toEqual({
      error: 'daily quota exceeded',
      quota: 'daily',
      scope: 'account',
      limit: 5,
      used: 5,
    });
    // Account before key: quotaLimited now reports the account cap.
    expect((await postOperation<QuotaBody>(emu.url, op, body, quotaLimited)).body.scope).toBe('account');

    // Next UTC day: daily counters restart, the monthly one (5 of 8) goes on.
    clock.set(Date.UTC(2026, 0, 16, 0, 0, 1));
    expect((await postOperation(emu.url, op, body, quotaLimited)).status).toBe(200);
    expect((await postOperation(emu.url, op, body, quotaSibling)).status).toBe(200);
    // Telemetry counts toward the daily counters (now 3 of 5) but not the monthly ones (still 7 of 8).
    expect(
      (await postOperation(emu.url, 'telemetry/proof-open', { evidence_key: 'e' }, quotaSibling)).status,
    ).toBe(202);
    expect((await postOperation(emu.url, op, body, quotaSibling)).status).toBe(200);
    const monthly = await postOperation<QuotaBody>(emu.url, op, body, quotaSibling);
    expect(monthly.status).toBe(429);
    expect(monthly.body).toEqual({
      error: 'monthly quota exceeded',
      quota: 'monthly',
      scope: 'account',
      limit: 8,
      used: 8,
    });
    const toMonthEnd = (Date.UTC(2026, 1, 1) - clock.now()) / 1000;
    expect(Number(monthly.headers.get('retry-after'))).toBe(toMonthEnd);
    // Telemetry still passes: it is outside the monthly quota (the daily one has room: 4 of 5).
    expect(
      (await postOperation(emu.url, 'telemetry/proof-open', { evidence_key: 'e' }, quotaSibling)).status,
    ).toBe(202);

    // First of the next month: everything restarts.
    clock.set(Date.UTC(2026, 1, 1, 0, 0, 0));
    expect((await postOperation(emu.url, op, body, quotaSibling)).status).toBe(200);
  });

  it('telemetry counts toward the daily quota', async () => {
    await fetch(`${emu.url}/_emulator/reset`, { method: 'POST' });
    clock.set(Date.UTC(2026, 2, 10, 8, 0, 0));
    for (let i = 0; i < TEST_QUOTAS.keyDaily; i++) {
      expect(
        (await postOperation(emu.url, 'telemetry/proof-open', { evidence_key: 'e' }, emu.keys.quotaLimited))
          .status,
      ).toBe(202);
    }
    const res = await postOperation(
      emu.url,
      'telemetry/proof-open',
      { evidence_key: 'e' },
      emu.keys.quotaLimited,
    );
    expect(res.status).toBe(429);
    expect(res.body).toMatchObject({ quota: 'daily', scope: 'api_key' });
  });
});

describe('overrides of the keys file', () => {
  it('--daily-quota applies to every account and key; null lifts a limit', async () => {
    // Frozen: the emulator's windows and Retry-After come out exact, whatever the machine's load.
    const clock = new TestClock(START).freeze();
    const emu = await startTestEmulator({
      clock,
      dailyQuota: 2,
      monthlyQuota: null,
      rateLimitPerMinute: null,
    });
    try {
      const first = await postOperation(emu.url, op, body, emu.apiKey);
      expect(first.headers.get('x-ratelimit-limit')).toBeNull();
      await postOperation(emu.url, op, body, emu.apiKey);
      const res = await postOperation(emu.url, op, body, emu.apiKey);
      expect(res.body).toEqual({
        error: 'daily quota exceeded',
        quota: 'daily',
        scope: 'account',
        limit: 2,
        used: 2,
      });
      // The quota account's own 5/day is overridden too.
      for (let i = 0; i < 2; i++) await postOperation(emu.url, op, body, emu.keys.quotaSibling);
      expect((await postOperation(emu.url, op, body, emu.keys.quotaSibling)).body).toMatchObject({
        limit: 2,
      });
    } finally {
      await emu.close();
    }
  });
});

describe('null overrides mean no limit', () => {
  const tightKey = TIGHT_KEY;
  const tightKeys = tightKeysFile();

  it('the keys file alone limits the key to one request', async () => {
    const emu = await startEmulator({ port: 0, keys: tightKeys, store: await bundledTestStore() });
    try {
      expect((await postOperation(emu.url, op, body, tightKey)).status).toBe(200);
      const second = await postOperation(emu.url, op, body, tightKey);
      expect(second.status).toBe(429);
      expect(second.body).toMatchObject({ error: 'Rate limit exceeded', limit: 1 });
    } finally {
      await emu.close();
    }
  });

  it('rateLimitPerMinute, dailyQuota and monthlyQuota null lift every limit: no headers, no 429', async () => {
    const emu = await startEmulator({
      port: 0,
      keys: tightKeys,
      store: await bundledTestStore(),
      rateLimitPerMinute: null,
      dailyQuota: null,
      monthlyQuota: null,
    });
    try {
      for (let i = 0; i < 4; i++) {
        const res = await postOperation(emu.url, op, body, tightKey);
        expect(res.status).toBe(200);
        expect(res.headers.get('x-ratelimit-limit')).toBeNull();
        expect(res.headers.get('x-ratelimit-remaining')).toBeNull();
        expect(res.headers.get('x-ratelimit-reset')).toBeNull();
      }
      const stats = (await (await fetch(`${emu.url}/_emulator/stats`)).json()) as {
        total: { requests: number; status_429: number };
      };
      expect(stats.total).toMatchObject({ requests: 4, status_429: 0 });
    } finally {
      await emu.close();
    }
  });

  it('refuses an override that is not a whole number >= 0 or null, naming it', async () => {
    const store = await bundledTestStore();
    const bad: [string, unknown][] = [
      ['rateLimitPerMinute', ''],
      ['rateLimitPerMinute', Number.NaN],
      ['rateLimitPerMinute', -3],
      ['dailyQuota', 1.5],
      ['monthlyQuota', 'none'],
    ];
    for (const [name, value] of bad) {
      const start = startEmulator({ port: 0, keys: tightKeys, store, [name]: value });
      await expect(start).rejects.toBeInstanceOf(EmulatorConfigError);
      await expect(start).rejects.toThrow(new RegExp(`^${name} must be a whole number >= 0, or null`));
    }
  });
});
