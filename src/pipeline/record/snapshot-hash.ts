/**
 * The snapshot record's hash in Redis (its keys: snapshot-store.ts): the Lua scripts that write it
 * in one step each, and the reading of its fields back into a SnapshotView. The field names
 * (`n:<dataset>:<status>`, `rows:<dataset>`, `reused:<dataset>`, `state`, …) are written here.
 */
import type { MissingCompany } from './missing.js';
import {
  ICEBERG_STATES,
  LOAD_OUTCOMES,
  noProgress,
  RECORDED_PART_STATUSES,
  type DatasetProgress,
  type IcebergState,
  type LoadOutcome,
  type SnapshotSpecHead,
  type SnapshotState,
  type SnapshotView,
} from './snapshot-states.js';

export const CREATE = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'spec', ARGV[1], 'companies', ARGV[6], 'company_count', ARGV[7], 'state', 'enqueuing', 'created_at', ARGV[2], 'updated_at', ARGV[2], 'total', ARGV[3], 'retries', 0)
redis.call('EXPIRE', KEYS[1], ARGV[4])
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[5])
return 1`;

// Records a part result once per (dataset, company); a later result of the same part (a retried
// snapshot) replaces the earlier one and moves the counters with it. A cancelled snapshot refuses
// results (0): a part that was in flight when it was cancelled is discarded, its counts stay put.
export const RECORD_PART = `
local state = redis.call('HGET', KEYS[1], 'state')
if not state then return -1 end
if state == 'cancelled' then return 0 end
local old = redis.call('HGET', KEYS[2], ARGV[1])
if old then
  local o = cjson.decode(old)
  local oldRows = tonumber(o.rows) or 0
  redis.call('HINCRBY', KEYS[1], 'n:' .. o.dataset .. ':' .. o.status, -1)
  -- 0 - x, not -x: Lua's -0 reaches Redis as "-0", which HINCRBY rejects.
  if oldRows ~= 0 then redis.call('HINCRBY', KEYS[1], 'rows:' .. o.dataset, 0 - oldRows) end
  if o.reusedFrom then redis.call('HINCRBY', KEYS[1], 'reused:' .. o.dataset, -1) end
end
if ARGV[8] == '1' then redis.call('HINCRBY', KEYS[1], 'reused:' .. ARGV[3], 1) end
if ARGV[9] ~= '' then
  redis.call('HSET', KEYS[3], ARGV[1], ARGV[9])
  redis.call('EXPIRE', KEYS[3], ARGV[7])
elseif old then redis.call('HDEL', KEYS[3], ARGV[1]) end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('HINCRBY', KEYS[1], 'n:' .. ARGV[3] .. ':' .. ARGV[4], 1)
redis.call('HINCRBY', KEYS[1], 'rows:' .. ARGV[3], tonumber(ARGV[5]))
redis.call('HSET', KEYS[1], 'updated_at', ARGV[6])
redis.call('EXPIRE', KEYS[2], ARGV[7])
return 1`;

// The record without its company list, for readers that poll (status, --wait, the dashboard) and
// every fixed-schema part job. Fields by name: HGETALL would copy the list (~70 bytes a company)
// into Lua on every call, ~0.9 ms of Redis's one thread at 10,000 companies against ~15 µs this
// way (docs/decisions.md).
export const VIEW = `
local want = {}
for _, f in ipairs(redis.call('HKEYS', KEYS[1])) do
  if f ~= 'companies' then want[#want + 1] = f end
end
if #want == 0 then return {} end
local values = redis.call('HMGET', KEYS[1], unpack(want))
local out = {}
for i, f in ipairs(want) do out[#out + 1] = f; out[#out + 1] = values[i] end
return out`;

// Sets fields of a record that exists: a commit of an older night whose record expired leaves no
// half record behind.
export const SET_IF_EXISTS = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1`;

// Moves the state only from the listed states; returns 1 when it moved.
export const TRANSITION = `
local cur = redis.call('HGET', KEYS[1], 'state')
if not cur then return -1 end
local allowed = cjson.decode(ARGV[1])
for _, s in ipairs(allowed) do
  if s == cur then
    redis.call('HSET', KEYS[1], 'state', ARGV[2], 'updated_at', ARGV[3])
    if ARGV[4] ~= '' then redis.call('HSET', KEYS[1], 'message', ARGV[4]) end
    if ARGV[5] == '1' then redis.call('HSET', KEYS[1], 'finished_at', ARGV[3]) end
    return 1
  end
end
return 0`;

// The cancel move and who made it, in one step: a part result recorded between two separate
// writes would otherwise count after the state said cancelled.
export const CANCEL = `
local cur = redis.call('HGET', KEYS[1], 'state')
if not cur then return -1 end
for _, s in ipairs(cjson.decode(ARGV[1])) do
  if s == cur then
    redis.call('HSET', KEYS[1], 'state', 'cancelled', 'updated_at', ARGV[2], 'finished_at', ARGV[2],
      'cancelled_at', ARGV[2], 'cancelled_by', ARGV[3], 'message', ARGV[4])
    return 1
  end
end
return 0`;

/** The record's fields from its hash (`spec` already parsed), `companies` parts per dataset. */
export function recordView(
  h: Record<string, string>,
  spec: SnapshotSpecHead,
  companies: number,
): SnapshotView {
  const progress: Record<string, DatasetProgress> = {};
  for (const ds of spec.datasets) {
    const p = noProgress(companies);
    for (const st of RECORDED_PART_STATUSES) p[st] = Number(h[`n:${ds}:${st}`] ?? 0);
    p.rows = Number(h[`rows:${ds}`] ?? 0);
    p.reused = Number(h[`reused:${ds}`] ?? 0);
    p.pending = Math.max(0, p.total - p.done - p.not_found - p.bad_request - p.failed);
    progress[ds] = p;
  }
  return {
    spec,
    state: (h.state ?? 'enqueuing') as SnapshotState,
    createdAtMs: Number(h.created_at ?? 0),
    updatedAtMs: Number(h.updated_at ?? 0),
    finishedAtMs: h.finished_at ? Number(h.finished_at) : null,
    total: Number(h.total ?? 0),
    progress,
    manifest: h.manifest ?? null,
    changesMissing: h.changes_missing ?? null,
    message: h.message ?? null,
    retries: Number(h.retries ?? 0),
    requests: Number(h.requests ?? 0),
    partRetries: Number(h.part_retries ?? 0),
    rateLimited429: Number(h.rate_limited_429 ?? 0),
    load:
      h.load_outcome !== undefined && isLoadOutcome(h.load_outcome)
        ? { outcome: h.load_outcome, atMs: Number(h.load_at ?? 0), message: h.load_message ?? '' }
        : null,
    iceberg:
      h.iceberg_state !== undefined && isIcebergState(h.iceberg_state)
        ? { state: h.iceberg_state, atMs: Number(h.iceberg_at ?? 0), message: h.iceberg_message ?? '' }
        : null,
    missing: h.missing ? (JSON.parse(h.missing) as MissingCompany[]) : [],
    missingCount: Number(h.missing_count ?? 0),
    cancelled:
      h.cancelled_by !== undefined ? { by: h.cancelled_by, atMs: Number(h.cancelled_at ?? 0) } : null,
  };
}

function isLoadOutcome(v: string): v is LoadOutcome {
  return (LOAD_OUTCOMES as readonly string[]).includes(v);
}

function isIcebergState(v: string): v is IcebergState {
  return (ICEBERG_STATES as readonly string[]).includes(v);
}
