/**
 * API outages: when parts fail one after another on faults that say the API itself is away
 * (connection refused or reset, DNS failure, timeouts, 5xx; the `hold_on_outage` rows of the
 * failure policy), the whole parts queue holds, as for a 429, instead of every part burning its
 * attempts within the outage. One part at a time is let through as the probe, with exponential
 * backoff; the first answer of any kind ends the outage. An outage longer than
 * `retry.outage_max_ms` fails the parts that meet it, with a message saying so; the next enqueue
 * (a `--retry`, the next night) starts afresh.
 *
 * "Global" means failures of several *different* parts with no answer in between: one company
 * whose requests keep failing while others succeed is that part's problem, retried per part.
 *
 * State lives in Redis, shared by every worker of the queue on every machine:
 *   <prefix>:<queue base>:outage         hash: since, next_probe, probes, probing_until (the
 *                                        probe's lease), last_error
 *   <prefix>:<queue base>:outage:streak  set: parts that failed since the last answer
 */
import type { Redis } from 'ioredis';
import { assertNever, type Clock } from '../../types.js';

export interface OutageSettings {
  /** Different parts failing in a row (no answer between) that declare an outage. @defaultValue 3 */
  failuresToHold: number;
  /** First probe this long after the outage is declared; doubles per failed probe. */
  probeBaseMs: number;
  /** Cap of the wait between probes. */
  probeMaxMs: number;
  /** An outage longer than this fails the parts that meet it (`retry.outage_max_ms`). */
  maxOutageMs: number;
}

/** What a part may do before its request. */
export type OutageGate =
  | { kind: 'open' }
  /** This part's request is the probe (one at a time). */
  | { kind: 'probe'; since: number }
  /** Hold the queue until `untilMs`; the part goes back without spending an attempt. */
  | { kind: 'hold'; since: number; untilMs: number }
  /** The outage outlasted `maxOutageMs`: the part fails. */
  | { kind: 'expired'; since: number; lastError: string };

/** What a global-looking failure leads to. */
export type OutageVerdict =
  { kind: 'counting'; failures: number } | { kind: 'outage'; since: number; nextProbeMs: number };

export interface OutageState {
  since: number;
  nextProbeMs: number;
  probes: number;
  lastError: string;
}

// KEYS[1] outage hash; ARGV: now, maxOutageMs, probeLeaseMs, recheckMs
const GATE = `
local since = tonumber(redis.call('HGET', KEYS[1], 'since'))
if not since then return {'open'} end
local now = tonumber(ARGV[1])
if now - since > tonumber(ARGV[2]) then
  return {'expired', tostring(since), redis.call('HGET', KEYS[1], 'last_error') or ''}
end
local nextProbe = tonumber(redis.call('HGET', KEYS[1], 'next_probe')) or now
local probing = tonumber(redis.call('HGET', KEYS[1], 'probing_until')) or 0
if now < nextProbe then return {'hold', tostring(since), tostring(nextProbe)} end
-- While the probe is out, the others look again soon (the probe's lease only guards against a
-- probe that died): a hold is queue-wide, so it must not outlast the probe's answer by much.
if now < probing then return {'hold', tostring(since), tostring(math.min(probing, now + tonumber(ARGV[4])))} end
redis.call('HSET', KEYS[1], 'probing_until', now + tonumber(ARGV[3]))
return {'probe', tostring(since)}`;

/** What the GATE script answers (Lua arrays of strings). */
type GateReply = ['open'] | ['probe', string] | ['hold', string, string] | ['expired', string, string];

// KEYS[1] outage hash, KEYS[2] streak set; ARGV: now, failuresToHold, probeBaseMs, probeMaxMs,
// lastError, ttlSeconds, part
const FAILED = `
local now = tonumber(ARGV[1])
redis.call('SADD', KEYS[2], ARGV[7])
redis.call('EXPIRE', KEYS[2], ARGV[6])
local n = redis.call('SCARD', KEYS[2])
redis.call('HSET', KEYS[1], 'last_error', ARGV[5])
redis.call('EXPIRE', KEYS[1], ARGV[6])
local since = tonumber(redis.call('HGET', KEYS[1], 'since'))
local probes = 0
if since then
  probes = redis.call('HINCRBY', KEYS[1], 'probes', 1)
elseif n >= tonumber(ARGV[2]) then
  since = now
  redis.call('HSET', KEYS[1], 'since', now, 'probes', 0)
else
  return {'counting', tostring(n)}
end
local wait = math.min(tonumber(ARGV[4]), tonumber(ARGV[3]) * math.pow(2, probes))
redis.call('HSET', KEYS[1], 'next_probe', now + wait, 'probing_until', 0)
return {'outage', tostring(since), tostring(now + wait)}`;

export class OutageGuard {
  constructor(
    private readonly redis: Redis,
    private readonly key: string,
    private readonly settings: OutageSettings,
    private readonly clock: Clock,
  ) {}

  private get streakKey(): string {
    return `${this.key}:streak`;
  }

  /** The guard's clock (status lines are relative to it). */
  now(): number {
    return this.clock.now();
  }

  /** Before a part's request: go on, be the probe, hold, or give up. */
  async gate(): Promise<OutageGate> {
    // A probe that dies without an answer must not block the others for ever.
    const lease = Math.max(30_000, this.settings.probeMaxMs);
    const r = (await this.redis.eval(
      GATE,
      1,
      this.key,
      this.clock.now(),
      this.settings.maxOutageMs,
      lease,
      this.settings.probeBaseMs,
    )) as GateReply;
    switch (r[0]) {
      case 'open':
        return { kind: 'open' };
      case 'probe':
        return { kind: 'probe', since: Number(r[1]) };
      case 'hold':
        return { kind: 'hold', since: Number(r[1]), untilMs: Number(r[2]) };
      case 'expired':
        return { kind: 'expired', since: Number(r[1]), lastError: r[2] };
      default:
        return assertNever(r[0], 'outage gate reply');
    }
  }

  /** A part failed on a fault that may be global: count it, declare or extend the outage. */
  async failed(part: string, message: string): Promise<OutageVerdict> {
    const s = this.settings;
    const ttl = Math.ceil((s.maxOutageMs + 86_400_000) / 1000);
    const r = (await this.redis.eval(
      FAILED,
      2,
      this.key,
      this.streakKey,
      this.clock.now(),
      s.failuresToHold,
      s.probeBaseMs,
      s.probeMaxMs,
      message.slice(0, 300),
      ttl,
      part,
    )) as string[];
    if (r[0] === 'outage') return { kind: 'outage', since: Number(r[1]), nextProbeMs: Number(r[2]) };
    return { kind: 'counting', failures: Number(r[1]) };
  }

  /**
   * The API answered (any status): the streak of failures ends, and so does an outage. Returns how
   * long the outage lasted, or null when there was none.
   */
  async answered(): Promise<number | null> {
    const since = await this.redis.eval(
      `local s = redis.call('HGET', KEYS[1], 'since')
       if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('DEL', KEYS[1]) end
       if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('DEL', KEYS[2]) end
       return s`,
      2,
      this.key,
      this.streakKey,
    );
    return typeof since === 'string' ? this.clock.now() - Number(since) : null;
  }

  /** The outage in force, for `status` (also one that expired). */
  async describe(): Promise<OutageState | null> {
    const h = await this.redis.hgetall(this.key);
    if (h.since === undefined) return null;
    return {
      since: Number(h.since),
      nextProbeMs: Number(h.next_probe ?? h.since),
      probes: Number(h.probes ?? 0),
      lastError: h.last_error ?? '',
    };
  }

  /** A new enqueue starts afresh after an outage that outlasted the limit (the API may be back). */
  async clearIfExpired(): Promise<boolean> {
    const state = await this.describe();
    if (state === null || this.clock.now() - state.since <= this.settings.maxOutageMs) return false;
    await this.redis.del(this.key, this.streakKey);
    return true;
  }
}

/** The outage line of a pipeline, or null when the API answers. */
export async function outageStatus(ctx: {
  outage: OutageGuard;
  config: { retry: { outage_max_ms: number } };
}): Promise<string | null> {
  const s = await ctx.outage.describe();
  return s === null ? null : outageLine(s, ctx.outage.now(), ctx.config.retry.outage_max_ms);
}

/** The human line for `status` and logs. */
export function outageLine(s: OutageState, now: number, maxOutageMs: number): string {
  const since = new Date(s.since).toISOString();
  if (now - s.since > maxOutageMs)
    return `API unreachable since ${since}: gave up after retry.outage_max_ms=${maxOutageMs} ms (${s.lastError}); resume with --retry`;
  return `API unreachable since ${since}, next probe at ${new Date(s.nextProbeMs).toISOString()} (${s.probes} probes so far; ${s.lastError})`;
}
