/**
 * `auto` on a key without rate headers, the pure rules (src/budget/auto-rate.ts): the ramp, the
 * back-off after a 429, the plan's duration counting the ramp, what `status` says, and the two
 * settings validated with a message naming them (file and code). The same rules in Redis, shared
 * by every worker: test/budget/budget-gate.test.ts; end to end against the emulator: test/budget/budget-auto-e2e.test.ts.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  AUTO_START_RPM,
  WINDOW_MS,
  backedOff,
  describeAuto,
  planRequests,
  rampDurationMs,
  rampedRate,
  resolveBudgetConfig,
  type BudgetDescription,
} from '../../src/budget/index.js';
import { loadConfig } from '../../src/config/load.js';
import { ConfigError } from '../../src/errors.js';

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

describe('the ramp', () => {
  it('multiplies per clean window, at least +1, never past the ceiling', () => {
    const rates = [AUTO_START_RPM];
    for (let i = 0; i < 8; i++) rates.push(rampedRate(rates[rates.length - 1] ?? 0, 2, 6000));
    expect(rates).toEqual([60, 120, 240, 480, 960, 1920, 3840, 6000, 6000]);
    expect(rampedRate(1, 1.2, 100)).toBe(2);
    expect(rampedRate(90, 1.5, 100)).toBe(100);
  });

  it('a 429 halves the rate and sets the ceiling under the rate it came at, or to the body limit', () => {
    expect(backedOff(240, 6000, null)).toEqual({ rate: 120, ceiling: 216 });
    expect(backedOff(240, 6000, 100)).toEqual({ rate: 120, ceiling: 100 });
    // A body limit above what we sent (others share the key) does not raise the ceiling.
    expect(backedOff(240, 6000, 1000)).toEqual({ rate: 120, ceiling: 216 });
    expect(backedOff(1, 1, null)).toEqual({ rate: 1, ceiling: 1 });
  });

  it('the duration counts one window per ramp step, then the ceiling', () => {
    const ramp = { rate: 60, factor: 2, ceiling: 6000, share: 1 };
    // 60 + 120 + 240 + 480 + 960 + 1920 + 3840 = 7620 in 7 windows, the rest at 6000/min.
    expect(rampDurationMs(20_000, ramp)).toBe(7 * WINDOW_MS + Math.round((12_380 / 6000) * WINDOW_MS));
    expect(rampDurationMs(30, ramp)).toBe(WINDOW_MS / 2);
    // share applies to every step: half of 60, then half of 120.
    expect(rampDurationMs(90, { ...ramp, share: 0.5 })).toBe(2 * WINDOW_MS);
    expect(rampDurationMs(0, ramp)).toBe(0);
  });
});

const none = { autoRate: null, autoCeil: null, autoBackedAt: null, autoBackedFrom: null };
describe('what status and the plan say', () => {
  it('one line per mode', () => {
    expect(describeAuto({ serverLimit: null, ...none }, 6000).message).toBe(
      "starting at 60/min until the API's first answer",
    );
    expect(describeAuto({ serverLimit: 600, ...none }, 6000).message).toBe('learned from headers: 600/min');
    expect(describeAuto({ ...none, serverLimit: 0, autoRate: 240 }, 6000).message).toBe(
      'no rate headers: ramping, now 240/min, ceiling 6,000',
    );
    const at = Date.UTC(2026, 10, 26, 3, 0, 0);
    const backed = describeAuto(
      { serverLimit: 0, autoRate: 120, autoCeil: 216, autoBackedAt: at, autoBackedFrom: 240 },
      6000,
    );
    expect(backed).toMatchObject({ mode: 'backed_off', ratePerMinute: 120, ceilingPerMinute: 216 });
    expect(backed.message).toBe(
      'no rate headers: backed off after 429 at 2026-11-26T03:00:00.000Z (from 240/min); ramping again, now 120/min, ceiling 216',
    );
    // A configured ceiling lowered after the ramp rose caps what is shown and used.
    expect(describeAuto({ ...none, serverLimit: 0, autoRate: 4000 }, 1000).ratePerMinute).toBe(1000);
  });

  it('the plan for 20,000 parts on a headerless key counts the ramp, not 60/min for ever', () => {
    const auto = describeAuto(
      { serverLimit: 0, autoRate: 60, autoCeil: null, autoBackedAt: null, autoBackedFrom: null },
      6000,
    );
    const quota = {
      period: '2026-11',
      used: 0,
      limit: null,
      remaining: null,
      exhaustedUntil: null,
      resetsAt: '',
    };
    const state: BudgetDescription = {
      keyFingerprint: '0123456789abcdef',
      accountId: null,
      configuredRequestsPerMinute: 'auto',
      share: 1,
      serverLimitPerMinute: 0,
      effectiveRequestsPerMinute: 60,
      window: null,
      holds: [],
      daily: quota,
      monthly: quota,
      auto,
    };
    const now = Date.UTC(2026, 10, 26, 1, 0, 0);
    const plan = planRequests({ requests: 20_000, state, now, allowMultiDay: false, autoRampFactor: 2 });
    expect(plan.expectedDurationMs).toBe(
      rampDurationMs(20_000, { rate: 60, factor: 2, ceiling: 6000, share: 1 }),
    );
    // Before the first answer: 60/min, and what the ramp would take if no headers come.
    const starting = planRequests({
      requests: 20_000,
      state: {
        ...state,
        serverLimitPerMinute: null,
        auto: describeAuto({ ...none, serverLimit: null }, 6000),
      },
      now,
      allowMultiDay: false,
      autoRampFactor: 2,
      autoCeiling: 6000,
    });
    expect(starting.expectedDurationMs).toBe((20_000 / 60) * WINDOW_MS);
    expect(starting.message).toContain('about 5.6 h (rate auto: starting at 60/min');
    expect(starting.message).toContain(
      "likely sooner; about 9.1 min if the key's answers carry no rate headers)",
    );
    expect(plan.message).toContain(
      '20,000 requests ramping from 60 requests/min: about 9.1 min (rate auto: no rate headers: ramping, now 60/min, ceiling 6,000, x2 per full minute without a 429; the time counts the ramp)',
    );
  });
});

describe('settings', () => {
  it('defaults, and bad values named as written in the file and in code', async () => {
    expect(resolveBudgetConfig()).toMatchObject({ autoCeiling: 6000, autoRampFactor: 2 });
    expect(() => resolveBudgetConfig({ autoRampFactor: 1 })).toThrow(
      new ConfigError('budget.autoRampFactor: must be greater than 1 and at most 10 (got 1)'),
    );
    expect(() => resolveBudgetConfig({ autoCeiling: 0 })).toThrow(
      new ConfigError('budget.autoCeiling: must be greater than 0 (got 0)'),
    );
    const dir = await mkdtemp(join(tmpdir(), 'ffx-auto-rate-'));
    dirs.push(dir);
    const p = join(dir, 'c.yaml');
    await writeFile(p, 'budget:\n  auto_ramp_factor: 20\n');
    expect(() => loadConfig({ configPath: p, env: {} })).toThrow(
      `config.budget.auto_ramp_factor: must be greater than 1 and at most 10 (got 20) in ${p}`,
    );
    await writeFile(p, 'budget:\n  auto_ceiling: 0\n');
    expect(() => loadConfig({ configPath: p, env: {} })).toThrow(
      `config.budget.auto_ceiling: must be greater than 0 (got 0) in ${p}`,
    );
  });
});
