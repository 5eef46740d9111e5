/**
 * The budget's Lua scripts. Each runs atomically in Redis, so every worker process on every
 * machine sees one consistent gate and ledger. Times come from the injected Clock (ARGV), never
 * from Redis TIME, so quota resets and windows are testable with a clock set to 23:59:58.
 */
import type { Redis } from 'ioredis';
import { createHash } from 'node:crypto';
import {
  AUTO_BACKOFF_FACTOR,
  AUTO_CEILING_AFTER_429,
  AUTO_CEILING_EXPIRY_MS,
  AUTO_LATENCY_TOLERANCE,
} from './auto-rate.js';
import { AUTO_START_RPM } from './config.js';

/**
 * Gate hash fields: wid (window id), end (server's reset of the window, clock ms), confirmed
 * (1 once a response's X-RateLimit-Reset set `end`), used (our requests sent in the window),
 * cap (what the window allows us: effective rate, lowered by X-RateLimit-Remaining), inflight
 * (sent, headers not yet seen), serverLimit (last X-RateLimit-Limit; 0 = successful answers carry
 * none), holdUntil/holdReason (429). Without rate headers `auto` probes (auto-rate.ts): autoRate
 * (the key's rate now), autoCeil (ceiling a 429 taught), autoNoRamp (1 = a 429 came in this
 * window: it does not ramp), autoBackoffWid (window that already backed off), autoBackedAt/From,
 * autoLatSum/autoLatN (time to headers of the window's successful answers), autoLatBase (lowest
 * window mean), autoExpiredAt/autoExpiredCeil (the last learned ceiling that expired).
 *
 * Window rule: sends are allowed in [open, end - margin), paced evenly over that span; a new
 * window opens at end + margin.
 * The quiet time either side of the reset absorbs the 1 s resolution of X-RateLimit-Reset, so
 * a request counted in one of our windows always lands in the server's window of the same reset.
 * A key whose answers carry no rate headers has no reset to align to: its margin is 0
 * (`windowMarginMs`, budget.ts, says the same for `status`), but even pacing ends its slots the
 * margin and 1 s before the window's end, since a window opened by a 429's hold may trail the
 * server's minute by that much.
 */
export const ACQUIRE = `
local now = tonumber(ARGV[1])
local dayId, monthId = ARGV[2], ARGV[3]
local rpm, share, margin, windowMs = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local dq, mq = tonumber(ARGV[8]), tonumber(ARGV[9])
local countsMonthly = ARGV[10] == '1'
local hasAccount = ARGV[11] == '1'
local dayTtl, monthTtl = tonumber(ARGV[12]), tonumber(ARGV[13])
local even = ARGV[14] == 'even'
local autoCeiling, rampFactor = tonumber(ARGV[15]), tonumber(ARGV[16])
local token, keptWindows = ARGV[17], tonumber(ARGV[18])

-- 0. a replay of a reservation already made (ioredis resends a command whose answer a dropped
-- connection lost, perhaps to a promoted replica that has it): granted again in its own window,
-- counted once
local madeIn = redis.call('ZSCORE', KEYS[8], token)
if madeIn then return {'ok', tonumber(madeIn), 0} end

-- 1. quotas the server said are spent (429 quota body), per scope
local function spent(h, kind, period)
  local q = redis.call('HMGET', h, kind, kind .. '.scope', kind .. '.limit', kind .. '.used')
  if q[1] == period then return {'quota', kind, 'server', q[2] or 'api_key', tonumber(q[3]) or -1, tonumber(q[4]) or -1} end
  return nil
end
local r = spent(KEYS[6], 'daily', dayId) or spent(KEYS[7], 'daily', dayId)
if r then return r end
if countsMonthly then
  r = spent(KEYS[6], 'monthly', monthId) or spent(KEYS[7], 'monthly', monthId)
  if r then return r end
end

-- 2. the ledger: configured quotas and limits the server reported, checked before spending
local function limitOf(configured, h, kind)
  local learned = tonumber(redis.call('HGET', h, kind .. '.limit') or '-1')
  if configured >= 0 and (learned < 0 or configured <= learned) then return configured, 'configured' end
  if learned >= 0 then return learned, 'server' end
  return -1, 'none'
end
local ledgerScope = hasAccount and 'account' or 'api_key'
local dKey = hasAccount and KEYS[4] or KEYS[2]
local mKey = hasAccount and KEYS[5] or KEYS[3]
local qh = hasAccount and KEYS[7] or KEYS[6]
local dUsed = tonumber(redis.call('GET', dKey) or '0')
local dLimit, dSrc = limitOf(dq, qh, 'daily')
if dLimit >= 0 and dUsed + 1 > dLimit then return {'quota', 'daily', dSrc, ledgerScope, dLimit, dUsed} end
if countsMonthly then
  local mUsed = tonumber(redis.call('GET', mKey) or '0')
  local mLimit, mSrc = limitOf(mq, qh, 'monthly')
  if mLimit >= 0 and mUsed + 1 > mLimit then return {'quota', 'monthly', mSrc, ledgerScope, mLimit, mUsed} end
end

-- 3. a per-minute 429 holds everyone
local g = redis.call('HMGET', KEYS[1], 'holdUntil', 'holdReason', 'wid', 'end', 'used', 'cap', 'inflight', 'serverLimit', 'last', 'capAuto', 'autoRate', 'autoCeil', 'autoNoRamp')
local holdUntil = tonumber(g[1]) or 0
if holdUntil > now then return {'hold', holdUntil, g[2] or 'rate limited'} end

-- 4. the shared window
local serverLimit = tonumber(g[8])
-- Answers without rate headers (serverLimit 0): no server window to align to, no quiet time.
-- Even pacing still stops short of the window's end there: its start came from a 429's hold
-- (Retry-After in whole seconds, plus the margin), so it may trail the server's minute by up to
-- the margin and 1 s, and slots in that tail would count in the server's next minute.
local paceTail = 0
if serverLimit == 0 then
  paceTail = margin + 1000
  margin = 0
end
local wid = tonumber(g[3]) or 0
local wend = tonumber(g[4]) or 0
local used = tonumber(g[5]) or 0
local cap = tonumber(g[6])
local inflight = tonumber(g[7]) or 0
local last = tonumber(g[9]) or 0
local opening = wid == 0 or now >= wend + margin
-- auto without rate headers (auto-rate.ts): a window whose allowance we spent with no 429 in it
-- multiplies the rate, up to the ceiling (the configured one, lowered by what a 429 taught until
-- it expires); by the factor squared while no ceiling is in force and the window's latency held.
local autoCeil = math.min(autoCeiling, tonumber(g[12]) or autoCeiling)
local autoRate = math.min(autoCeil, tonumber(g[11]) or ${AUTO_START_RPM})
if rpm < 0 and serverLimit == 0 and opening and wid > 0 then
  local a = redis.call('HMGET', KEYS[1], 'autoBackedAt', 'autoLatSum', 'autoLatN', 'autoLatBase')
  local learned = g[12] ~= false
  local backedAt = tonumber(a[1])
  if learned and backedAt and now - backedAt >= ${AUTO_CEILING_EXPIRY_MS} then
    redis.call('HDEL', KEYS[1], 'autoCeil', 'autoBackedAt', 'autoBackedFrom')
    redis.call('HSET', KEYS[1], 'autoExpiredAt', now, 'autoExpiredCeil', autoCeil)
    learned = false
    autoCeil = autoCeiling
  end
  if g[13] ~= '1' and cap and used >= cap then
    local step = rampFactor
    local n = tonumber(a[3]) or 0
    if n > 0 then
      local mean = (tonumber(a[2]) or 0) / n
      local base = math.min(tonumber(a[4]) or mean, mean)
      redis.call('HSET', KEYS[1], 'autoLatBase', base)
      if not learned and mean <= base * ${AUTO_LATENCY_TOLERANCE} then step = rampFactor * rampFactor end
    end
    autoRate = math.min(autoCeil, math.max(autoRate + 1, math.floor(autoRate * step)))
  end
  redis.call('HSET', KEYS[1], 'autoRate', autoRate, 'autoNoRamp', 0, 'autoLatSum', 0, 'autoLatN', 0)
end
-- rpm < 0: auto, the key's own limit (0 = the server sends none: the probed rate); else a cap.
local keyLimit = rpm
if rpm < 0 then
  if serverLimit and serverLimit > 0 then keyLimit = serverLimit
  elseif serverLimit == 0 then keyLimit = autoRate
  else keyLimit = ${AUTO_START_RPM} end
elseif serverLimit and serverLimit > 0 and serverLimit < rpm then keyLimit = serverLimit end
local effective = math.max(1, math.floor(keyLimit * share + 1e-9))
cap = cap or effective
if opening then
  wid = wid + 1
  wend = now + windowMs
  used = 0
  cap = effective
  inflight = 0
  redis.call('HSET', KEYS[1], 'wid', wid, 'end', wend, 'confirmed', 0, 'used', 0, 'cap', cap, 'inflight', 0, 'opened', now, 'last', 0, 'capAuto', (rpm < 0 and not serverLimit) and 1 or 0)
elseif now >= wend - margin then
  return {'window', wend + margin}
end
-- A window opened on the auto start rate grows to the key's limit once the first answer tells it.
if g[10] == '1' and cap < effective and serverLimit then
  cap = effective
  redis.call('HSET', KEYS[1], 'cap', cap, 'capAuto', 0)
end
if cap > effective then cap = effective end
if used >= cap then return {'window', wend + margin} end
-- Even pacing: the window's remaining slots spread over its remaining time, counted from the
-- last grant. Nothing is reserved ahead: a caller told to wait for the next slot asks again then,
-- so every grant sees the holds and Remaining reports that arrived meanwhile.
if even and used > 0 and last > 0 then
  local paceEnd = wend - margin - paceTail
  local slot = math.floor(last + (paceEnd - last) / (cap - used + 1))
  if slot >= paceEnd then return {'window', wend + margin} end
  if slot > now then return {'pace', slot} end
end
redis.call('HSET', KEYS[1], 'used', used + 1, 'inflight', inflight + 1, 'last', now)

-- 5. spend: the key's counters always, the account's when configured
local function spend(k, ttl)
  if redis.call('INCR', k) == 1 then redis.call('EXPIRE', k, ttl) end
end
spend(KEYS[2], dayTtl)
if countsMonthly then spend(KEYS[3], monthTtl) end
if hasAccount then
  spend(KEYS[4], dayTtl)
  if countsMonthly then spend(KEYS[5], monthTtl) end
end
-- 6. the reservation, by token, scored by its window, until its request is settled or refunded
-- (or keptWindows windows have opened since)
redis.call('ZREMRANGEBYSCORE', KEYS[8], '-inf', '(' .. (wid - keptWindows))
redis.call('ZADD', KEYS[8], wid, token)
redis.call('PEXPIRE', KEYS[8], keptWindows * windowMs)
return {'ok', wid, wend}
`;

/**
 * Feeds one response's X-RateLimit-* to the gate. ARGV: now, wid, limit, remaining, resetAtMs,
 * margin, settle (1 = this permit's request stops counting as in flight), unlimited (1 = a
 * successful answer without X-RateLimit-Limit: the key has no per-minute limit), latency (ms from
 * the grant to the headers: `auto`'s latency signal for such answers), the permit's token (its
 * reservation, KEYS[2], ends when it settles). -1 = header absent.
 * Remaining is applied as: what we may still send = remaining - our other requests in flight
 * (they may not have reached the server yet), so Remaining 0 closes the window until its reset.
 */
export const OBSERVE = `
local now, pwid = tonumber(ARGV[1]), tonumber(ARGV[2])
local L, rem, R, margin = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local settle = ARGV[7] == '1'
if settle then redis.call('ZREM', KEYS[2], ARGV[10]) end
if L > 0 then redis.call('HSET', KEYS[1], 'serverLimit', L)
elseif ARGV[8] == '1' then
  redis.call('HSET', KEYS[1], 'serverLimit', 0)
  local lat = tonumber(ARGV[9]) or -1
  if lat >= 0 then
    redis.call('HINCRBY', KEYS[1], 'autoLatSum', math.floor(lat))
    redis.call('HINCRBY', KEYS[1], 'autoLatN', 1)
  end
end
local g = redis.call('HMGET', KEYS[1], 'wid', 'end', 'used', 'cap', 'inflight', 'confirmed')
if tonumber(g[1]) ~= pwid then return 0 end
local wend, used, cap, inflight = tonumber(g[2]), tonumber(g[3]), tonumber(g[4]), tonumber(g[5])
local confirmed = g[6] == '1'
if settle and inflight > 0 then inflight = inflight - 1 end
local applies = false
if R >= 0 and R + margin > now then
  -- The latest reset reported for this window wins: our sends so far all landed in server
  -- windows ending no later than it, so opening the next window after it is safe.
  if not confirmed then wend = R; confirmed = true elseif R > wend then wend = R end
  applies = (R == wend)
end
if applies and rem >= 0 then
  local c = used + rem - inflight
  if c < cap then cap = c end
end
redis.call('HSET', KEYS[1], 'end', wend, 'confirmed', confirmed and 1 or 0, 'cap', cap, 'inflight', inflight)
return 1
`;

/**
 * A per-minute 429: the server's window is full until now + Retry-After. Closes the current
 * window (cap = used) until then and records the hold. ARGV: now, wid, waitMs, margin, limit
 * (X-RateLimit-Limit, else the 429 body's), settle, reason, header (1 = limit came from the
 * header), autoCeiling, the permit's token ('' = none; settling ends its reservation, KEYS[2]).
 * On a key without rate headers (serverLimit 0) the limit is not taken as the key's: `auto` backs
 * off instead, once per window (auto-rate.ts, backedOff).
 */
export const RATE_LIMITED = `
local now, pwid, waitMs, margin, L = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local g = redis.call('HMGET', KEYS[1], 'wid', 'used', 'inflight', 'holdUntil', 'serverLimit', 'autoRate', 'autoCeil', 'autoBackoffWid')
if ARGV[6] == '1' then redis.call('ZREM', KEYS[2], ARGV[10]) end
if tonumber(g[5]) == 0 and ARGV[8] ~= '1' then
  local wid = tonumber(g[1]) or 0
  if tonumber(g[8]) ~= wid then
    local autoCeiling = tonumber(ARGV[9])
    local ceil = math.min(autoCeiling, tonumber(g[7]) or autoCeiling)
    local rate = math.min(ceil, tonumber(g[6]) or ${AUTO_START_RPM})
    local nextCeil = math.min(ceil, math.max(1, math.floor(rate * ${AUTO_CEILING_AFTER_429})))
    if L > 0 and L < nextCeil then nextCeil = L end
    redis.call('HSET', KEYS[1], 'autoRate', math.max(1, math.floor(rate * ${AUTO_BACKOFF_FACTOR})), 'autoCeil', nextCeil,
      'autoBackoffWid', wid, 'autoBackedAt', now, 'autoBackedFrom', rate)
  end
  redis.call('HSET', KEYS[1], 'autoNoRamp', 1)
elseif L > 0 then redis.call('HSET', KEYS[1], 'serverLimit', L) end
local inflight = tonumber(g[3]) or 0
if ARGV[6] == '1' and tonumber(g[1]) == pwid and inflight > 0 then inflight = inflight - 1 end
local untilMs = now + waitMs
local holdUntil = untilMs + margin
if (tonumber(g[4]) or 0) > holdUntil then holdUntil = tonumber(g[4]) end
redis.call('HSET', KEYS[1], 'end', untilMs, 'confirmed', 1, 'cap', tonumber(g[2]) or 0, 'inflight', inflight, 'last', 0,
  'holdUntil', holdUntil, 'holdReason', ARGV[7])
if (tonumber(g[1]) or 0) == 0 then redis.call('HSET', KEYS[1], 'wid', 1, 'used', 0) end
return holdUntil
`;

/**
 * A quota 429: marks the quota spent for its period and sets our counter to the server's `used`. KEYS: quota hash of the scope, counter of the scope and period.
 * ARGV: kind, period, scope, limit, used, ttl.
 */
export const QUOTA_EXCEEDED = `
local kind, period, scope, L, used, ttl = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
redis.call('HSET', KEYS[1], kind, period, kind .. '.scope', scope)
if L >= 0 then redis.call('HSET', KEYS[1], kind .. '.limit', L) end
if used >= 0 then
  redis.call('HSET', KEYS[1], kind .. '.used', used)
  -- The server's count is the truth for its scope (our own may include requests it refused).
  redis.call('SET', KEYS[2], used, 'EX', ttl)
end
return 1
`;

/**
 * Gives back a reservation whose request was never sent, once, and only where it is held: after a
 * failover the new primary may lack it, and taking back what it never counted would undercount
 * the quota. KEYS: gate, the four counters, the reservations. ARGV: wid, countsMonthly,
 * hasAccount, token.
 */
export const REFUND = `
if redis.call('ZREM', KEYS[6], ARGV[4]) == 0 then return 0 end
local g = redis.call('HMGET', KEYS[1], 'wid', 'used', 'inflight')
if tonumber(g[1]) == tonumber(ARGV[1]) then
  redis.call('HSET', KEYS[1], 'used', math.max(0, (tonumber(g[2]) or 0) - 1), 'inflight', math.max(0, (tonumber(g[3]) or 0) - 1))
end
local function back(k) if tonumber(redis.call('GET', k) or '0') > 0 then redis.call('DECR', k) end end
back(KEYS[2])
if ARGV[2] == '1' then back(KEYS[3]) end
if ARGV[3] == '1' then
  back(KEYS[4])
  if ARGV[2] == '1' then back(KEYS[5]) end
end
return 1
`;

/** Runs a script by its sha, loading it on NOSCRIPT (after a Redis restart or on a fresh server). */
export async function runScript(
  redis: Redis,
  script: string,
  keys: string[],
  args: (string | number)[],
): Promise<unknown> {
  const sha = shaOf(script);
  try {
    return await redis.evalsha(sha, keys.length, ...keys, ...args);
  } catch (err) {
    if (err instanceof Error && err.message.includes('NOSCRIPT')) {
      return await redis.eval(script, keys.length, ...keys, ...args);
    }
    throw err;
  }
}

const shas = new Map<string, string>();
function shaOf(script: string): string {
  let sha = shas.get(script);
  if (!sha) {
    sha = createHash('sha1').update(script).digest('hex');
    shas.set(script, sha);
  }
  return sha;
}
