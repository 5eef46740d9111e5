/**
 * The shared per-minute gate in real Redis, against the real emulator over HTTP: one window for
 * every connection and process, the rate following X-RateLimit-Limit down, X-RateLimit-Remaining
 * spent by another client respected, per-minute 429s holding everyone for Retry-After (both
 * forms, capped), and holds seen by a second node process.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { errorFromResponse, FilingsClient, parseRateLimit } from '../../src/api/index.js';
import {
  AUTO_CEILING_EXPIRY_MS,
  AUTO_START_RPM,
  resolveBudgetConfig,
  type AcquireOutcome,
  type Budget,
  type BudgetConfigInput,
  type Permit,
} from '../../src/budget/index.js';
import { RateLimitedError } from '../../src/errors.js';
import type { Clock } from '../../src/types.js';
import { TestClock } from '../helpers/clock.js';
import { redisScope } from './redis-scope.js';
import { postOperation, startTestEmulator, type TestEmulator } from '../helpers/emulator.js';

const run = promisify(execFile);
const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const prefix = `test:budget-gate:${process.pid}`;
const scope = redisScope(prefix);
let tmp: string;
let childScript: string;

function budgetFor(apiKey: string, input: BudgetConfigInput, clock: Clock, sub: string): Budget {
  return scope.budget({ apiKey, config: resolveBudgetConfig(input), clock, prefix: `${prefix}:${sub}` });
}

/**
 * Runs `count` concurrent acquires in a separate node process sharing the clock (its offset, or
 * its instant when frozen), starting at the real time `startAt` (so they race with this process's
 * own acquires).
 */
async function acquireInChild(
  apiKey: string,
  input: BudgetConfigInput,
  clock: TestClock,
  sub: string,
  count: number,
  startAt = 0,
): Promise<AcquireOutcome[]> {
  const args = [
    join(repo, 'bin/run-ts.mjs'),
    childScript,
    inject('redisUrl'),
    `${prefix}:${sub}`,
    apiKey,
    JSON.stringify(input),
    String(clock.now() - Date.now()),
    clock.frozen ? String(clock.now()) : '',
    String(count),
    String(startAt),
  ];
  const { stdout } = await run(process.execPath, args, { cwd: repo });
  return JSON.parse(stdout) as AcquireOutcome[];
}

const granted = (outcomes: AcquireOutcome[]): number => outcomes.filter((o) => o.kind === 'granted').length;
const acquireMany = (b: Budget, n: number): Promise<AcquireOutcome[]> =>
  Promise.all(Array.from({ length: n }, () => b.acquire('facts/full')));

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'ffx-budget-gate-'));
  childScript = join(tmp, 'child.mts');
  const budgetUrl = pathToFileURL(join(repo, 'src/budget/index.ts')).href;
  await writeFile(
    childScript,
    `import { createBudget, resolveBudgetConfig } from ${JSON.stringify(budgetUrl)};
const [url, prefix, apiKey, input, offset, frozenAt, count, startAt] = process.argv.slice(2);
const clock = { now: () => (frozenAt ? Number(frozenAt) : Date.now() + Number(offset)) };
const budget = createBudget({ redis: url, apiKey, config: resolveBudgetConfig(JSON.parse(input)), clock, prefix });
await budget.describe(); // connected and scripts warm before the start signal
await new Promise((r) => setTimeout(r, Math.max(0, Number(startAt) - Date.now())));
const outcomes = await Promise.all(Array.from({ length: Number(count) }, () => budget.acquire('facts/full')));
await budget.close();
process.stdout.write(JSON.stringify(outcomes));
`,
  );
});

afterAll(async () => {
  await scope.close();
  await rm(tmp, { recursive: true, force: true });
});

describe('one window for every worker', () => {
  it('two processes reserving at once get exactly the per-minute rate between them', async () => {
    const clock = new TestClock(Date.UTC(2026, 10, 21, 10, 0, 5));
    const cfg = { requestsPerMinute: 10, pacing: 'burst' } as const;
    const here = budgetFor('ffx_live_b2b_two_procs', cfg, clock, 'procs');
    const startAt = Date.now() + 3000; // both processes fire at the same instant
    const [mine, theirs] = await Promise.all([
      (async () => {
        await new Promise((r) => setTimeout(r, startAt - Date.now()));
        return Promise.all(Array.from({ length: 15 }, () => here.acquire('facts/full')));
      })(),
      acquireInChild('ffx_live_b2b_two_procs', cfg, clock, 'procs', 15, startAt),
    ]);
    expect(granted(mine) + granted(theirs)).toBe(10);
    const waits = [...mine, ...theirs].filter((o) => o.kind === 'window');
    expect(waits).toHaveLength(20);
    // Every refusal names the same reopening: the window's end plus the safety margin.
    expect(new Set(waits.map((o) => (o.kind === 'window' ? o.untilMs : 0))).size).toBe(1);
  });

  it('applies the share and reopens after the window with the injected clock', async () => {
    const clock = new TestClock(Date.UTC(2026, 10, 21, 10, 0, 5));
    const budget = budgetFor(
      'ffx_live_b2b_share',
      { requestsPerMinute: 8, share: 0.5, safetyMarginMs: 500, pacing: 'burst' },
      clock,
      'share',
    );
    const first = await Promise.all(Array.from({ length: 6 }, () => budget.acquire('facts/full')));
    expect(granted(first)).toBe(4);
    const wait = first.find((o) => o.kind === 'window');
    if (wait?.kind !== 'window') throw new Error('expected a window wait');
    expect(wait.untilMs - clock.now()).toBeGreaterThan(60_000);
    expect((await budget.describe()).holds[0]?.reason).toContain('window spent (4/4 sent)');
    clock.advance(wait.untilMs - clock.now());
    expect(granted(await Promise.all(Array.from({ length: 6 }, () => budget.acquire('facts/full'))))).toBe(4);
  });
});

describe('requests_per_minute: auto', () => {
  it("starts at the conservative rate, then follows the key's X-RateLimit-Limit up and down within the window", async () => {
    const clock = new TestClock(Date.UTC(2026, 10, 21, 10, 0, 5));
    const budget = budgetFor(
      'ffx_live_b2b_auto',
      { requestsPerMinute: 'auto', pacing: 'burst' },
      clock,
      'auto',
    );
    expect((await budget.describe()).effectiveRequestsPerMinute).toBe(AUTO_START_RPM);
    const plan = await budget.plan(6000);
    expect(plan.message).toContain(
      `rate auto: starting at ${AUTO_START_RPM}/min until the API's first answer`,
    );

    const first = await budget.acquire('facts/full');
    if (first.kind !== 'granted') throw new Error(first.kind);
    const reset = clock.now() + 55_000;
    await budget.observe(first.permit, { limit: 600, remaining: 599, resetAtMs: reset }, { succeeded: true });
    await budget.release(first.permit);
    // The window opened at the start rate grows to the key's limit at once: 200 more grants now.
    const more = await Promise.all(Array.from({ length: 200 }, () => budget.acquire('facts/full')));
    expect(granted(more)).toBe(200);
    const d = await budget.describe();
    expect(d).toMatchObject({
      configuredRequestsPerMinute: 'auto',
      serverLimitPerMinute: 600,
      effectiveRequestsPerMinute: 600,
    });
    expect((await budget.plan(6000)).message).toContain(
      'about 10.0 min (rate auto: learned from headers: 600/min)',
    );

    // The key's limit drops: the budget follows it down.
    const p = more.find((o) => o.kind === 'granted');
    if (p?.kind !== 'granted') throw new Error('no permit');
    await budget.observe(p.permit, { limit: 120, remaining: 0, resetAtMs: reset }, { succeeded: true });
    expect((await budget.describe()).effectiveRequestsPerMinute).toBe(120);
  });

  it('a key whose successful answers carry no limit header ramps while no 429 comes back; a number stays a cap', async () => {
    const clock = new TestClock(Date.UTC(2026, 10, 21, 10, 0, 5));
    const auto = budgetFor(
      'ffx_live_b2b_unlimited',
      { requestsPerMinute: 'auto', pacing: 'burst', autoCeiling: 200 },
      clock,
      'unl',
    );
    const a = await auto.acquire('facts/full');
    if (a.kind !== 'granted') throw new Error(a.kind);
    // An error body without headers (401/403 bodies omit them) says nothing about the limit.
    await auto.observe(a.permit, {});
    expect((await auto.describe()).auto?.mode).toBe('starting');
    await auto.observe(a.permit, {}, { succeeded: true });
    const d = await auto.describe();
    expect(d.effectiveRequestsPerMinute).toBe(AUTO_START_RPM);
    expect(d.auto?.message).toBe(`no rate headers: ramping, now ${AUTO_START_RPM}/min, ceiling 200`);
    // Each window spent without a 429 multiplies the rate, up to the ceiling: x4 here, as its
    // latency held (the one answer's is the lowest seen): 60, 200, 200, 200.
    const perWindow: number[] = [1 + granted(await acquireMany(auto, 300))];
    for (let w = 0; w < 3; w++) {
      clock.advance(62_000);
      perWindow.push(granted(await acquireMany(auto, 300)));
    }
    expect(perWindow).toEqual([60, 200, 200, 200]);
    expect((await auto.plan(1000)).message).toContain(
      'rate auto: no rate headers: ramping, now 200/min, ceiling 200, x4 per full minute without a 429 while latency holds (x2 once a 429 taught a ceiling)',
    );
    const capped = budgetFor(
      'ffx_live_b2b_capped',
      { requestsPerMinute: 100, pacing: 'burst' },
      clock,
      'cap',
    );
    const c = await capped.acquire('facts/full');
    if (c.kind !== 'granted') throw new Error(c.kind);
    await capped.observe(
      c.permit,
      { limit: 6000, remaining: 5999, resetAtMs: clock.now() + 50_000 },
      { succeeded: true },
    );
    expect((await capped.describe()).effectiveRequestsPerMinute).toBe(100);
  });
});

describe('requests_per_minute: auto on a key without rate headers', () => {
  const headerless429 = (limit?: number): RateLimitedError =>
    new RateLimitedError('Rate limit exceeded', {
      operation: 'facts/full',
      status: 429,
      retryAfterMs: 10_000,
      ...(limit !== undefined ? { limit } : {}),
      rateLimit: { retryAfterMs: 10_000 },
    });

  /**
   * Spends the window (burst), feeding every grant a headerless 200 `latencyMs` after its grant
   * (the clock is frozen: the latency is exactly that); returns the grants.
   */
  async function spendWindow(b: Budget, clock?: TestClock, latencyMs = 0, n = 400): Promise<Permit[]> {
    const permits = (await acquireMany(b, n)).flatMap((o) => (o.kind === 'granted' ? [o.permit] : []));
    clock?.advance(latencyMs);
    for (const p of permits) await b.observe(p, {}, { succeeded: true });
    return permits;
  }

  it('backs off once per window on a 429, learns a ceiling below it, ramps again only after a clean window', async () => {
    const clock = new TestClock(Date.UTC(2026, 10, 21, 11, 0, 5)).freeze();
    const b = budgetFor('ffx_live_b2b_hidden', { requestsPerMinute: 'auto', pacing: 'burst' }, clock, 'hid');
    expect((await spendWindow(b)).length).toBe(60);
    clock.advance(62_000);
    // No 429 and latency held: slow start, x4.
    const second = await spendWindow(b);
    expect(second.length).toBe(240);
    // Two 429s in the same window (requests in flight meet it too): one back-off, from 240.
    const at = clock.now();
    await b.onRateLimited(second[0] ?? null, headerless429());
    clock.advance(5);
    await b.onRateLimited(second[1] ?? null, headerless429());
    const d = await b.describe();
    expect(d.serverLimitPerMinute).toBe(0);
    expect(d.auto).toMatchObject({
      mode: 'backed_off',
      ratePerMinute: 120,
      ceilingPerMinute: 216,
      backedOffFromPerMinute: 240,
      backedOffAt: new Date(at).toISOString(),
    });
    expect(d.auto?.message).toContain(`backed off after 429 at ${new Date(at).toISOString()} (from 240/min)`);
    // Held until Retry-After; the window after it keeps the halved rate (the 429's window does not ramp).
    expect((await b.acquire('facts/full')).kind).toBe('hold');
    clock.advance(12_000);
    expect((await spendWindow(b)).length).toBe(120);
    // A clean full window ramps again, by the factor only now, up to the learned ceiling.
    clock.advance(62_000);
    expect((await spendWindow(b)).length).toBe(216);
    // A window not spent (demand below the rate) says nothing about the limit: no ramp.
    clock.advance(62_000);
    expect(granted(await acquireMany(b, 10))).toBe(10);
    clock.advance(62_000);
    expect((await b.describe()).auto?.ratePerMinute).toBe(216);
  });

  it('has no quiet time around its window reset: there is no server window to land in', async () => {
    const t0 = Date.UTC(2026, 10, 21, 11, 30, 5);
    const clock = new TestClock(t0).freeze();
    const cfg = { requestsPerMinute: 'auto', pacing: 'burst' } as const;
    const b = budgetFor('ffx_live_b2b_hidden_quiet', cfg, clock, 'hid-quiet');
    // A key that reported nothing yet keeps the quiet time: it may still send headers.
    const told = budgetFor('ffx_live_b2b_told_quiet', cfg, clock, 'told-quiet');
    expect(await spendWindow(b, clock, 0, 1)).toHaveLength(1);
    expect(granted(await acquireMany(told, 1))).toBe(1);
    clock.advance(60_000 - 500); // half a second before both windows' end
    expect((await b.acquire('facts/full')).kind).toBe('granted');
    expect((await b.describe()).holds).toEqual([]);
    expect(await told.acquire('facts/full')).toMatchObject({ kind: 'window', untilMs: t0 + 61_000 });
    expect((await told.describe()).holds[0]?.reason).toBe('quiet time around the window reset');
    clock.advance(500); // the end: a new window opens at once, not a margin later
    const next = await b.acquire('facts/full');
    expect(next.kind).toBe('granted');
    expect(next.kind === 'granted' && next.permit.windowId).toBe(2);
  });

  it('ramps by the factor squared while latency holds, by the factor once it grows past 1.5 x the lowest', async () => {
    const clock = new TestClock(Date.UTC(2026, 10, 21, 13, 0, 5)).freeze();
    const b = budgetFor('ffx_live_b2b_latency', { requestsPerMinute: 'auto', pacing: 'burst' }, clock, 'lat');
    const counts: number[] = [];
    for (const latencyMs of [100, 400, 120, 100]) {
      counts.push((await spendWindow(b, clock, latencyMs, 3000)).length);
      clock.advance(62_000);
    }
    // 60 (100 ms: the lowest) -> x4 = 240 (400 ms: 4 x the lowest) -> x2 = 480 (120 ms: holds) -> x4.
    expect(counts).toEqual([60, 240, 480, 1920]);
  });

  it('forgets a learned ceiling 30 min after the last 429 and probes upward again', async () => {
    const clock = new TestClock(Date.UTC(2026, 10, 21, 14, 0, 5)).freeze();
    const b = budgetFor('ffx_live_b2b_expiry', { requestsPerMinute: 'auto', pacing: 'burst' }, clock, 'exp');
    await spendWindow(b);
    clock.advance(62_000);
    const second = await spendWindow(b);
    const at = clock.now();
    await b.onRateLimited(second[0] ?? null, headerless429(100));
    expect((await b.describe()).auto).toMatchObject({
      mode: 'backed_off',
      ratePerMinute: 100,
      ceilingPerMinute: 100,
    });
    clock.advance(12_000);
    // Within the half hour the ceiling holds, however many clean windows go by.
    for (let w = 0; w < 27; w++) {
      expect((await spendWindow(b)).length).toBe(100);
      clock.advance(62_000);
    }
    expect(clock.now() - at).toBeLessThan(AUTO_CEILING_EXPIRY_MS);
    expect((await b.describe()).auto?.message).toContain(
      `ceiling 100 until ${new Date(at + AUTO_CEILING_EXPIRY_MS).toISOString()} unless another 429 comes`,
    );
    clock.set(at + AUTO_CEILING_EXPIRY_MS);
    // The next window forgets it; the clean window before ramps from 100 (x4: latency held).
    expect((await spendWindow(b)).length).toBe(400);
    const d = await b.describe();
    expect(d.auto).toMatchObject({ mode: 'ramping', ratePerMinute: 400, ceilingPerMinute: 6000 });
    expect(d.auto?.message).toBe(
      `no rate headers: ramping, now 400/min, ceiling 6,000; the ceiling of 100 a 429 taught expired at ${new Date(at + AUTO_CEILING_EXPIRY_MS).toISOString()}: probing upward`,
    );
  });

  it("takes a 429 body's limit as the ceiling and never spends past a configured daily quota while ramping", async () => {
    const clock = new TestClock(Date.UTC(2026, 10, 21, 12, 0, 5)).freeze();
    const b = budgetFor(
      'ffx_live_b2b_hidden_q',
      { requestsPerMinute: 'auto', pacing: 'burst', dailyQuota: 300 },
      clock,
      'hidq',
    );
    const counts: number[] = [];
    for (let w = 0; w < 4; w++) {
      counts.push((await spendWindow(b)).length);
      clock.advance(62_000);
    }
    expect(counts).toEqual([60, 240, 0, 0]);
    expect((await b.acquire('facts/full')).kind).toBe('quota');

    const c = budgetFor(
      'ffx_live_b2b_hidden_b',
      { requestsPerMinute: 'auto', pacing: 'burst' },
      clock,
      'hidb',
    );
    await spendWindow(c);
    clock.advance(62_000);
    const second = await spendWindow(c);
    await c.onRateLimited(second[0] ?? null, headerless429(100));
    const d = await c.describe();
    expect(d.serverLimitPerMinute).toBe(0);
    expect(d.auto).toMatchObject({ mode: 'backed_off', ratePerMinute: 100, ceilingPerMinute: 100 });
  });
});

describe('even pacing', () => {
  it('spreads the window over evenly spaced slots, one grant per slot across processes', async () => {
    const clock = new TestClock(Date.UTC(2026, 10, 21, 10, 0, 5));
    const cfg = { requestsPerMinute: 4, safetyMarginMs: 500 };
    const here = budgetFor('ffx_live_b2b_pacing', cfg, clock, 'pacing');
    const startAt = Date.now() + 3000;
    const [mine, theirs] = await Promise.all([
      (async () => {
        await new Promise((r) => setTimeout(r, startAt - Date.now()));
        return Promise.all(Array.from({ length: 10 }, () => here.acquire('facts/full')));
      })(),
      acquireInChild('ffx_live_b2b_pacing', cfg, clock, 'pacing', 10, startAt),
    ]);
    // The first slot is now; everyone else is told the same next slot: a quarter of 59.5 s later.
    expect(granted(mine) + granted(theirs)).toBe(1);
    const grantAt = [...mine, ...theirs].find((o) => o.kind === 'granted')!;
    const paces = [...mine, ...theirs].filter((o) => o.kind === 'pace');
    expect(paces).toHaveLength(19);
    const next = new Set(paces.map((o) => (o.kind === 'pace' ? o.untilMs : 0)));
    expect(next.size).toBe(1);
    const opened = grantAt.kind === 'granted' ? grantAt.permit.reservedAtMs : 0;
    expect([...next][0]! - opened).toBe(Math.floor(59_500 / 4));
    // Walking the clock slot by slot grants the remaining three, then the window is spent. Frozen,
    // the clock moves only by the waits the budget names, so every slot is exact.
    clock.freeze();
    const slots = [opened];
    for (;;) {
      const o = await here.acquire('facts/full');
      if (o.kind === 'pace') clock.advance(o.waitMs);
      else if (o.kind === 'granted') slots.push(o.permit.reservedAtMs);
      else {
        expect(o).toMatchObject({ kind: 'window', untilMs: opened + 60_500 });
        break;
      }
    }
    const gaps = slots.slice(1).map((t, i) => t - slots[i]!);
    expect(gaps).toEqual([14_875, 14_875, 14_875]);
  });
});

describe('against the emulator', () => {
  let emulator: TestEmulator;
  // Frozen: the budget and the emulator see the same instant until a test moves it.
  const clock = new TestClock().freeze();
  let client: FilingsClient;
  let n = 0;
  // Every test starts 5 s into a fresh minute of the shared clock: windows are deterministic.
  beforeEach(async () => {
    clock.set(Date.UTC(2026, 10, 21, 10, ++n, 5));
    await fetch(`${emulator.url}/_emulator/reset`, { method: 'POST' });
  });
  beforeAll(async () => {
    emulator = await startTestEmulator({ clock, rateLimitPerMinute: 10 });
    client = new FilingsClient({ baseUrl: emulator.url, apiKey: emulator.apiKey, clock });
  });
  afterAll(async () => {
    await client?.close();
    await emulator?.close();
  });

  const minuteEnd = (): number => Math.ceil(clock.now() / 60_000) * 60_000;
  const stats = async (): Promise<{ requests: number; status_429: number }> => {
    const s = (await (await fetch(`${emulator.url}/_emulator/stats`)).json()) as {
      by_key: Record<string, { requests: number; status_429: number }>;
    };
    return s.by_key[emulator.keyIds.active] ?? { requests: 0, status_429: 0 };
  };
  /** One request through the budget; returns the HTTP status or the refusal. */
  const attempt = async (budget: Budget): Promise<number | AcquireOutcome> => {
    let o = await budget.acquire('issuer/reference');
    while (o.kind === 'pace') {
      clock.advance(o.waitMs); // the emulator shares this clock: its window moves with it
      o = await budget.acquire('issuer/reference');
    }
    if (o.kind !== 'granted') return o;
    try {
      const res = await client.issuerReference({ ticker: 'MSFT' });
      await budget.observe(o.permit, res.rateLimit);
      return res.status;
    } catch (err) {
      if (err instanceof RateLimitedError) {
        await budget.onRateLimited(o.permit, err);
        return 429;
      }
      throw err;
    }
  };

  it('follows X-RateLimit-Limit down and aligns its window to X-RateLimit-Reset', async () => {
    const budget = budgetFor(
      emulator.apiKey,
      { requestsPerMinute: 100, share: 0.5, safetyMarginMs: 700 },
      clock,
      'adapt',
    );
    expect(await attempt(budget)).toBe(200);
    const d = await budget.describe();
    expect(d.serverLimitPerMinute).toBe(10);
    expect(d.effectiveRequestsPerMinute).toBe(5); // floor(min(100, 10) * 0.5)
    expect(d.window?.endsAt).toBe(new Date(minuteEnd()).toISOString());
    const results: (number | AcquireOutcome)[] = [];
    for (let i = 0; i < 6; i++) results.push(await attempt(budget));
    expect(results.slice(0, 4)).toEqual([200, 200, 200, 200]);
    expect(results[4]).toMatchObject({ kind: 'window', untilMs: minuteEnd() + 700 });
    expect(await stats()).toMatchObject({ requests: 5, status_429: 0 });
  });

  it('uses what another client left of the window, without a 429', async () => {
    for (let i = 0; i < 4; i++)
      expect(
        (await postOperation(emulator.url, 'issuer/reference', { ticker: 'AAPL' }, emulator.apiKey)).status,
      ).toBe(200);
    const budget = budgetFor(emulator.apiKey, { requestsPerMinute: 10 }, clock, 'shared');
    const results: (number | AcquireOutcome)[] = [];
    for (let i = 0; i < 8; i++) results.push(await attempt(budget));
    expect(results.filter((r) => r === 200)).toHaveLength(6);
    expect(results[6]).toMatchObject({ kind: 'window', untilMs: minuteEnd() + 1000 });
    expect(await stats()).toMatchObject({ requests: 10, status_429: 0 });
  });

  it('a per-minute 429 holds every worker, in every process, until Retry-After', async () => {
    for (let i = 0; i < 10; i++)
      await postOperation(emulator.url, 'issuer/reference', { ticker: 'AAPL' }, emulator.apiKey);
    const cfg = { requestsPerMinute: 10 };
    const budget = budgetFor(emulator.apiKey, cfg, clock, 'hold');
    const o = await budget.acquire('issuer/reference');
    if (o.kind !== 'granted') throw new Error(`expected a grant, got ${o.kind}`);
    const err = await client.issuerReference({ ticker: 'AAPL' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitedError);
    const retryAfterMs = (err as RateLimitedError).retryAfterMs;
    expect(retryAfterMs).toBe(Math.ceil((minuteEnd() - clock.now()) / 1000) * 1000);
    const hold = await budget.onRateLimited(o.permit, err as RateLimitedError);
    // Retry-After is whole seconds from "now" (5 s into the minute): the hold ends at the minute's
    // end, plus the safety margin.
    expect(clock.now() + retryAfterMs).toBe(minuteEnd());
    expect(hold.untilMs).toBe(minuteEnd() + 1000);
    const here = await budget.acquire('issuer/reference');
    expect(here).toMatchObject({ kind: 'hold', untilMs: hold.untilMs });
    const there = await acquireInChild(emulator.apiKey, cfg, clock, 'hold', 3);
    expect(there.map((x) => x.kind)).toEqual(['hold', 'hold', 'hold']);
    expect((await budget.describe()).holds[0]).toMatchObject({ until: new Date(hold.untilMs).toISOString() });
    expect(await stats()).toMatchObject({ requests: 11, status_429: 1 });
  });

  it('caps a long Retry-After at maxRetryAfterMs', async () => {
    for (let i = 0; i < 10; i++)
      await postOperation(emulator.url, 'issuer/reference', { ticker: 'AAPL' }, emulator.apiKey);
    const budget = budgetFor(
      emulator.apiKey,
      { requestsPerMinute: 10, maxRetryAfterMs: 2000, safetyMarginMs: 100 },
      clock,
      'cap',
    );
    const o = await budget.acquire('issuer/reference');
    if (o.kind !== 'granted') throw new Error(`expected a grant, got ${o.kind}`);
    const err = (await client
      .issuerReference({ ticker: 'AAPL' })
      .catch((e: unknown) => e)) as RateLimitedError;
    expect(err.retryAfterMs).toBeGreaterThan(50_000);
    const before = clock.now();
    const hold = await budget.onRateLimited(o.permit, err);
    expect(hold.untilMs - before).toBe(2100);
    expect((await budget.describe()).holds[0]?.reason).toContain('capped to 2000 ms');
  });

  it('honours Retry-After given as an HTTP-date', async () => {
    const budget = budgetFor(emulator.apiKey, { requestsPerMinute: 10, safetyMarginMs: 0 }, clock, 'date');
    const o = await budget.acquire('facts/full');
    if (o.kind !== 'granted') throw new Error(`expected a grant, got ${o.kind}`);
    // HTTP-dates have whole seconds: 20 s ahead, rounded down to the second.
    const at = Math.floor((clock.now() + 20_000) / 1000) * 1000;
    const rateLimit = parseRateLimit(
      { 'retry-after': new Date(at).toUTCString(), 'x-ratelimit-limit': '10' },
      clock.now(),
    );
    const err = errorFromResponse({
      status: 429,
      operation: 'facts/full',
      bodyText: JSON.stringify({ error: 'Rate limit exceeded', retryAfter: 20, limit: 10, windowMs: 60000 }),
      rateLimit,
      apiKey: emulator.apiKey,
    });
    expect(err).toBeInstanceOf(RateLimitedError);
    const hold = await budget.onRateLimited(o.permit as Permit, err as RateLimitedError);
    expect(hold.untilMs).toBe(at);
    expect(await budget.acquire('facts/full')).toMatchObject({ kind: 'hold', untilMs: hold.untilMs });
  });
});
