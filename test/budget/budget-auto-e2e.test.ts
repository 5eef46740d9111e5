/**
 * `auto` against a key whose limit is hidden, end to end: real Redis, the real emulator over HTTP
 * (a key with `rate_limit_headers: false` and a per-minute limit of 100), the real client, eight
 * concurrent senders sharing one budget, and one injected clock for both (jumped to each wait's
 * end, so a minute passes in milliseconds). The ramp reaches the hidden limit, backs off once on
 * the first 429s, then settles at the limit; the assertions are counts per window and the order of
 * events, never durations.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { FilingsClient } from '../../src/api/index.js';
import { AUTO_START_RPM, createBudget, resolveBudgetConfig, type Budget } from '../../src/budget/index.js';
import type { KeysFile } from '../../src/emulator/auth/keys-file.js';
import { startEmulator } from '../../src/emulator/index.js';
import { RateLimitedError } from '../../src/errors.js';
import type { SnapshotRecord } from '../../src/pipeline/record/snapshot-states.js';
import { formatStatus, statusReport } from '../../src/pipeline/status-view.js';
import { TestClock } from '../helpers/clock.js';
import { bundledTestStore, postOperation } from '../helpers/emulator.js';

const HIDDEN_LIMIT = 100;
const SENDERS = 8;
const KEY = `ffx_live_b2b_test_hidden_${randomBytes(12).toString('hex')}`;
const prefix = `test:budget-auto-e2e:${process.pid}`;
// 5 s into a minute: the emulator's windows are whole minutes of this clock.
const clock = new TestClock(Date.UTC(2026, 10, 26, 2, 0, 5));
let dir: string;
let emulator: Awaited<ReturnType<typeof startEmulator>>;
let client: FilingsClient;
let redis: Redis;
const budgets: Budget[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ffx-auto-e2e-'));
  const keys: KeysFile = {
    accounts: [
      {
        id: 'acct_hidden',
        status: 'active',
        quota: { daily: null, monthly: null },
        keys: [
          {
            id: 'key_hidden',
            sha256: createHash('sha256').update(KEY).digest('hex'),
            status: 'active',
            expires_at: null,
            entitlements: [],
            rate_limit_per_minute: HIDDEN_LIMIT,
            rate_limit_headers: false,
            quota: { daily: null, monthly: null },
          },
        ],
      },
    ],
  };
  await writeFile(join(dir, 'keys.json'), JSON.stringify(keys));
  emulator = await startEmulator({
    port: 0,
    keys: join(dir, 'keys.json'),
    store: await bundledTestStore(),
    clock,
  });
  client = new FilingsClient({ baseUrl: emulator.url, apiKey: KEY, clock });
  redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: null });
});

afterAll(async () => {
  await Promise.all(budgets.map((b) => b.close()));
  const stale = await redis?.keys(`${prefix}:*`);
  if (stale?.length) await redis.del(...stale);
  await redis?.quit();
  await client?.close();
  await emulator?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('a key whose responses carry no rate headers', () => {
  it('the emulator hides the limit but enforces it: no X-RateLimit-*, then the 429 with Retry-After', async () => {
    const ok = await postOperation(emulator.url, 'issuer/reference', { ticker: 'AAPL' }, KEY);
    expect(ok.status).toBe(200);
    expect([...ok.headers.keys()].filter((h) => h.startsWith('x-ratelimit'))).toEqual([]);
    for (let i = 1; i < HIDDEN_LIMIT; i++)
      expect((await postOperation(emulator.url, 'issuer/reference', { ticker: 'AAPL' }, KEY)).status).toBe(
        200,
      );
    const refused = await postOperation(emulator.url, 'issuer/reference', { ticker: 'AAPL' }, KEY);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect([...refused.headers.keys()].filter((h) => h.startsWith('x-ratelimit'))).toEqual([]);
    expect(refused.body).toMatchObject({
      error: 'Rate limit exceeded',
      limit: HIDDEN_LIMIT,
      windowMs: 60000,
    });
    await fetch(`${emulator.url}/_emulator/reset`, { method: 'POST' });
  });

  it.each([
    ['burst', 10],
    ['even', 20],
  ] as const)(
    'auto (%s pacing) ramps up to the hidden limit, backs off once on the first 429s, then settles at the limit',
    async (pacing, minute) => {
      clock.set(Date.UTC(2026, 10, 26, 2, minute, 5));
      await fetch(`${emulator.url}/_emulator/reset`, { method: 'POST' });
      const budget = createBudget({
        redis,
        apiKey: KEY,
        config: resolveBudgetConfig({ requestsPerMinute: 'auto', pacing }),
        clock,
        prefix: `${prefix}:${pacing}`,
      });
      budgets.push(budget);
      const ok = new Map<number, number>(); // gate window → 200s
      const events: string[] = [];
      const rateLimited: number[] = []; // gate window of each 429
      const WINDOWS = 5;
      let inFlight = 0;
      // Senders between asking for a permit and counting its request in flight: a grant is
      // unseen until its answer arrives, so the clock may not jump over it meanwhile.
      let asking = 0;
      // The waits of the senders told to wait (sender → until when), and the senders still sending.
      const waits = new Map<number, number>();
      let live = SENDERS;
      const sender = async (id: number): Promise<void> => {
        for (;;) {
          asking += 1;
          const o = await budget.acquire('issuer/reference').finally(() => (asking -= 1));
          if (o.kind === 'quota') throw new Error(o.message);
          if (o.kind !== 'granted') {
            // The shared clock (the emulator's minute moves with it) jumps only when every sender
            // waits and no request is in flight or about to be, and only to the earliest wait's
            // end: a real sender's request never lands late, and no paced slot is skipped.
            waits.set(id, o.untilMs);
            while (clock.now() < o.untilMs) {
              const next = Math.min(...waits.values());
              if (inFlight === 0 && asking === 0 && waits.size === live && next > clock.now())
                clock.advance(next - clock.now());
              await sleep(2);
            }
            waits.delete(id);
            continue;
          }
          const wid = o.permit.windowId;
          if (wid > WINDOWS) {
            await budget.release(o.permit, { sent: false });
            return;
          }
          inFlight += 1;
          try {
            const res = await client.issuerReference({ ticker: 'MSFT' });
            await budget.observe(o.permit, res.rateLimit, { succeeded: true });
            ok.set(wid, (ok.get(wid) ?? 0) + 1);
          } catch (err) {
            if (!(err instanceof RateLimitedError)) throw err;
            rateLimited.push(wid);
            if (rateLimited.length === 1) events.push(`429 in window ${wid}`);
            await budget.onRateLimited(o.permit, err);
          } finally {
            inFlight -= 1;
          }
        }
      };
      const before = await budget.describe();
      expect(before.auto?.mode).toBe('starting');
      await Promise.all(Array.from({ length: SENDERS }, (_, id) => sender(id).finally(() => (live -= 1))));

      // 60 (start), ramp x4 to 240 (no 429 yet, latency held): up to 100 pass and the rest meet the
      // hidden limit; back off to 120, capped by the 429 body's limit as the ceiling: 100, 100, 100.
      // Burst sends window 2 inside one server minute (exactly 100 pass); even pacing spreads it over
      // two, the first shared with window 1's last requests, so a few fewer pass before the 429.
      const perWindow = [...ok.entries()].sort((a, b) => a[0] - b[0]).map(([, n]) => n);
      expect(perWindow).toHaveLength(5);
      expect([perWindow[0], ...perWindow.slice(2)]).toEqual([
        AUTO_START_RPM,
        HIDDEN_LIMIT,
        HIDDEN_LIMIT,
        HIDDEN_LIMIT,
      ]);
      if (pacing === 'burst') expect(perWindow[1]).toBe(HIDDEN_LIMIT);
      expect(perWindow[1]).toBeGreaterThan(AUTO_START_RPM);
      expect(perWindow[1]).toBeLessThanOrEqual(HIDDEN_LIMIT);
      expect(events).toEqual(['429 in window 2']);
      expect(new Set(rateLimited)).toEqual(new Set([2]));
      // Requests already in flight meet the 429 too, at most one per sender.
      expect(rateLimited.length).toBeGreaterThanOrEqual(1);
      expect(rateLimited.length).toBeLessThanOrEqual(SENDERS);
      const after = await budget.describe();
      expect(after.serverLimitPerMinute).toBe(0);
      expect(after.auto).toMatchObject({
        mode: 'backed_off',
        ratePerMinute: HIDDEN_LIMIT,
        ceilingPerMinute: HIDDEN_LIMIT,
        backedOffFromPerMinute: 4 * AUTO_START_RPM,
      });
      expect(after.auto?.message).toMatch(
        /^no rate headers: backed off after 429 at \S+ \(from 240\/min\); ramping again, now 100\/min, ceiling 100 until \S+ unless another 429 comes$/,
      );
      // `status` says what auto is doing, under the rate line.
      const rec: SnapshotRecord = {
        spec: {
          id: 'auto-e2e',
          date: '2026-11-26',
          trigger: 'adhoc',
          companies: [],
          datasets: [],
          formats: [],
          outDir: dir,
        },
        state: 'running',
        createdAtMs: clock.now(),
        updatedAtMs: clock.now(),
        finishedAtMs: null,
        total: 0,
        progress: {},
        manifest: null,
        changesMissing: null,
        load: null,
        iceberg: null,
        cancelled: null,
        message: null,
        retries: 0,
        requests: 0,
        partRetries: 0,
        rateLimited429: 0,
        missing: [],
        missingCount: 0,
      };
      const lines = formatStatus(statusReport(rec, null, [], null, after), clock.now()).split('\n');
      const rateAt = lines.findIndex((l) => l.startsWith('rate: 100 requests/min (configured auto'));
      expect(rateAt).toBeGreaterThanOrEqual(0);
      expect(lines[rateAt]).toContain("the key's X-RateLimit-Limit: none");
      expect(lines[rateAt + 1]).toBe(`  auto: ${after.auto?.message ?? ''}`);
      // The emulator agrees: every 429 it sent was a rate 429, all of them counted above.
      const stats = (await (await fetch(`${emulator.url}/_emulator/stats`)).json()) as {
        by_key: Record<string, { requests: number; rate_limited: number }>;
      };
      expect(stats.by_key.key_hidden).toMatchObject({
        requests: perWindow.reduce((a, b) => a + b, 0) + rateLimited.length,
        rate_limited: rateLimited.length,
      });
    },
  );
});
