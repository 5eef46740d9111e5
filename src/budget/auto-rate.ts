/**
 * `auto` on a key whose answers carry no X-RateLimit-* headers: the API reports no limit, so the
 * rate is probed (AIMD, as TCP does). It starts at AUTO_START_RPM; each minute window whose
 * allowance we spent without a 429 multiplies it by `autoRampFactor`, up to the ceiling, and by
 * its square while no 429 taught a ceiling and the window's latency held (slow start, as TCP's);
 * a 429 halves it and lowers the ceiling to what that 429 taught, for AUTO_CEILING_EXPIRY_MS after
 * the last 429: then the ceiling is forgotten and the ramp probes upward again. The gate's Lua
 * (scripts.ts) applies these rules in Redis, shared by every worker; the functions here state them
 * once for the plan, `status` and the scripts' constants.
 */
import { AUTO_START_RPM } from './config.js';
import { WINDOW_MS, type AutoRateState } from './budget-types.js';

/** A 429 multiplies the rate it came at by this (multiplicative decrease). */
export const AUTO_BACKOFF_FACTOR = 0.5;
/** After a 429 the ramp stops below the rate it came at: ceiling = floor(that rate × this). */
export const AUTO_CEILING_AFTER_429 = 0.9;

/**
 * A ceiling a 429 taught is forgotten this long after the last 429 (the gate then probes upward
 * again): a key whose limit was raised, or a 429 from a passing overload, never caps it for ever.
 * Half an hour costs at most one probing 429 per half hour on a key that really has that limit.
 */
export const AUTO_CEILING_EXPIRY_MS = 30 * 60_000;
/**
 * Latency holds while a window's mean time to the response headers is at most this times the
 * lowest window mean seen: the ramp may then go fast (factor squared) until a 429 teaches a ceiling.
 */
export const AUTO_LATENCY_TOLERANCE = 1.5;

/** The factor of a window spent with no 429, no ceiling in force and latency holding. */
export function fastRampFactor(factor: number): number {
  return factor * factor;
}

/** The rate after a minute window spent without a 429: × factor, at least +1, at most the ceiling. */
export function rampedRate(rate: number, factor: number, ceiling: number): number {
  return Math.min(ceiling, Math.max(rate + 1, Math.floor(rate * factor)));
}

/**
 * The rate and ceiling after a 429 that came at `rate`: half the rate; the ceiling drops below the
 * rate that was too much, and to the limit a 429 body names (`bodyLimit`) when that is lower.
 */
export function backedOff(
  rate: number,
  ceiling: number,
  bodyLimit: number | null,
): { rate: number; ceiling: number } {
  let next = Math.min(ceiling, Math.max(1, Math.floor(rate * AUTO_CEILING_AFTER_429)));
  if (bodyLimit !== null && bodyLimit > 0 && bodyLimit < next) next = bodyLimit;
  return { rate: Math.max(1, Math.floor(rate * AUTO_BACKOFF_FACTOR)), ceiling: next };
}

/**
 * Milliseconds to send `requests` while ramping from `rate` (the key's rate, before `share`): one
 * minute window per step, each full window multiplying the rate until the ceiling. Assumes no 429.
 */
export function rampDurationMs(
  requests: number,
  ramp: { rate: number; factor: number; ceiling: number; share: number; fast?: boolean },
): number {
  const factor = ramp.fast === true ? fastRampFactor(ramp.factor) : ramp.factor;
  let left = requests;
  let rate = Math.min(ramp.rate, ramp.ceiling);
  let ms = 0;
  while (left > 0) {
    const perWindow = Math.max(1, Math.floor(rate * ramp.share + 1e-9));
    if (left <= perWindow || rate >= ramp.ceiling) return ms + Math.round((left / perWindow) * WINDOW_MS);
    left -= perWindow;
    ms += WINDOW_MS;
    rate = rampedRate(rate, factor, ramp.ceiling);
  }
  return ms;
}

/** The raw gate fields `describeAuto` reads (null when absent). */
export interface AutoGateFields {
  /** Last X-RateLimit-Limit: null before any answer, 0 when successful answers carry none. */
  serverLimit: number | null;
  autoRate: number | null;
  autoCeil: number | null;
  autoBackedAt: number | null;
  autoBackedFrom: number | null;
  /** When a learned ceiling expired (AUTO_CEILING_EXPIRY_MS after its last 429), and what it was. */
  autoExpiredAt?: number | null;
  autoExpiredCeil?: number | null;
}

const fmt = (n: number): string => n.toLocaleString('en-US');

/** What `auto` does now, for `status` and the plan. */
export function describeAuto(f: AutoGateFields, configuredCeiling: number): AutoRateState {
  if (f.serverLimit === null)
    return {
      mode: 'starting',
      ratePerMinute: AUTO_START_RPM,
      ceilingPerMinute: null,
      backedOffAt: null,
      backedOffFromPerMinute: null,
      message: `starting at ${fmt(AUTO_START_RPM)}/min until the API's first answer`,
    };
  if (f.serverLimit > 0)
    return {
      mode: 'headers',
      ratePerMinute: f.serverLimit,
      ceilingPerMinute: null,
      backedOffAt: null,
      backedOffFromPerMinute: null,
      message: `learned from headers: ${fmt(f.serverLimit)}/min`,
    };
  const ceiling = Math.min(configuredCeiling, f.autoCeil ?? configuredCeiling);
  const rate = Math.min(ceiling, f.autoRate ?? AUTO_START_RPM);
  const ramping = `now ${fmt(rate)}/min, ceiling ${fmt(ceiling)}`;
  if (f.autoBackedAt === null) {
    const expired =
      f.autoExpiredAt != null && f.autoExpiredCeil != null
        ? `; the ceiling of ${fmt(f.autoExpiredCeil)} a 429 taught expired at ${new Date(f.autoExpiredAt).toISOString()}: probing upward`
        : '';
    return {
      mode: 'ramping',
      ratePerMinute: rate,
      ceilingPerMinute: ceiling,
      backedOffAt: null,
      backedOffFromPerMinute: null,
      message: `no rate headers: ramping, ${ramping}${expired}`,
    };
  }
  const at = new Date(f.autoBackedAt).toISOString();
  const from = f.autoBackedFrom ?? rate;
  const expires = new Date(f.autoBackedAt + AUTO_CEILING_EXPIRY_MS).toISOString();
  return {
    mode: 'backed_off',
    ratePerMinute: rate,
    ceilingPerMinute: ceiling,
    backedOffAt: at,
    backedOffFromPerMinute: from,
    message: `no rate headers: backed off after 429 at ${at} (from ${fmt(from)}/min); ramping again, ${ramping} until ${expires} unless another 429 comes`,
  };
}
