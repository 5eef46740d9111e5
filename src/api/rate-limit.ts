/**
 * Rate-limit state from response headers (section 8): X-RateLimit-Limit / -Remaining / -Reset
 * (Unix seconds) and Retry-After in both HTTP forms, delta-seconds (`120`) and HTTP-date
 * (`Wed, 21 Oct 2026 07:28:00 GMT`, RFC 9110 §10.2.3). The HTTP-date form needs "now", hence the
 * explicit `nowMs`: the client passes its injected Clock.
 */
import type { RateLimitState } from '../types.js';

/** Header bag as undici and node:http give it (lower-case names). */
export type HeaderBag = Record<string, string | string[] | undefined>;

function header(headers: HeaderBag, name: string): string | undefined {
  const v = headers[name] ?? headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
}

function nonNegativeInt(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const t = value.trim();
  if (!/^\d{1,15}$/.test(t)) return undefined;
  return Number(t);
}

/**
 * Retry-After → milliseconds to wait, or undefined when absent or unparsable.
 * Delta-seconds gives seconds × 1000; an HTTP-date gives the time from `nowMs` to it (0 when past).
 */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined) return undefined;
  const t = value.trim();
  if (t === '') return undefined;
  const seconds = nonNegativeInt(t);
  if (seconds !== undefined) return seconds * 1000;
  const at = parseHttpDate(t);
  if (at === undefined) return undefined;
  return Math.max(0, at - nowMs);
}

const IMF_FIXDATE = /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/;
const RFC850_DATE = /^[A-Z][a-z]+, \d{2}-[A-Z][a-z]{2}-\d{2} \d{2}:\d{2}:\d{2} GMT$/;
const ASCTIME_DATE = /^[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \d{4}$/;

/**
 * The three HTTP-date forms of RFC 9110 §5.6.7 → epoch ms (IMF-fixdate, obsolete RFC 850 and
 * asctime; asctime carries no zone and means GMT). Anything else → undefined.
 */
export function parseHttpDate(value: string): number | undefined {
  let text: string;
  if (IMF_FIXDATE.test(value) || RFC850_DATE.test(value)) text = value;
  else if (ASCTIME_DATE.test(value)) text = `${value} GMT`;
  else return undefined;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : at;
}

/** Every rate-limit field present in `headers`; absent or malformed headers are left out. */
export function parseRateLimit(headers: HeaderBag, nowMs: number): RateLimitState {
  const state: RateLimitState = {};
  const limit = nonNegativeInt(header(headers, 'x-ratelimit-limit'));
  if (limit !== undefined) state.limit = limit;
  const remaining = nonNegativeInt(header(headers, 'x-ratelimit-remaining'));
  if (remaining !== undefined) state.remaining = remaining;
  const reset = nonNegativeInt(header(headers, 'x-ratelimit-reset'));
  if (reset !== undefined) state.resetAtMs = reset * 1000;
  const retryAfterMs = parseRetryAfter(header(headers, 'retry-after'), nowMs);
  if (retryAfterMs !== undefined) state.retryAfterMs = retryAfterMs;
  return state;
}
