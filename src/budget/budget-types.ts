/**
 * Public types of the budget: the configuration, what `acquire` decides, what `describe` and the
 * planner report. The implementation lives next door; src/budget/index.ts re-exports all of it.
 */
import type { QuotaKind, QuotaScope } from '../types.js';

/** The API's rate-limit window: fixed 60 s per key (interface section 8). */
export const WINDOW_MS = 60_000;

/**
 * Budget configuration, one per API key (the `budget` section of the config file).
 * Validate and default raw input with `resolveBudgetConfig`.
 */
export interface BudgetConfig {
  /**
   * `auto`: the key's own limit, as each response's X-RateLimit-Limit reports it (up or down; a key
   * whose successful answers carry no limit header is unlimited), starting at AUTO_START_RPM until
   * the first answer. A number caps it: `floor(min(requestsPerMinute, X-RateLimit-Limit) * share)`.
   * @defaultValue 'auto'
   */
  requestsPerMinute: number | 'auto';
  /**
   * Share of the key's per-minute limit this exporter may use, 0 < share <= 1 (other systems may
   * use the same key). @defaultValue 1
   */
  share: number;
  /** Requests per UTC day the exporter may spend (null: only the server's quota applies). @defaultValue null */
  dailyQuota: number | null;
  /** Requests per UTC month, telemetry excluded (null: only the server's quota applies). @defaultValue null */
  monthlyQuota: number | null;
  /**
   * Account the key belongs to. When set, the configured quotas count every key of the account
   * (the server counts per account first, section 5.5). @defaultValue undefined (quotas per key)
   */
  accountId?: string | undefined;
  /** Longest Retry-After honoured after a per-minute 429; longer ones are capped. @defaultValue 120000 */
  maxRetryAfterMs: number;
  /** How many times one part job may be put back after a per-minute 429 before it fails. @defaultValue 10 */
  maxRateLimitRequeues: number;
  /** Let a snapshot that cannot fit this month's quota start anyway and spread over months. @defaultValue false */
  allowMultiDay: boolean;
  /**
   * How a window's requests are spread: `even` paces them over the window (kind to other users of
   * the key and to the API; a job waits at most one slot, 60 s / rate); `burst` allows them all at
   * once, as BullMQ's own limiter does (a small ad hoc snapshot finishes sooner). @defaultValue 'even'
   */
  pacing: 'even' | 'burst';
  /**
   * Quiet time either side of the server's window reset (X-RateLimit-Reset has 1 s resolution;
   * machines' clocks differ a little). @defaultValue 1000
   */
  safetyMarginMs: number;
  /**
   * `auto` on a key whose answers carry no X-RateLimit-* headers: the highest rate (requests per
   * minute, before `share`) the ramp may reach. @defaultValue 6000
   */
  autoCeiling: number;
  /**
   * `auto` without rate headers: each minute window our share spent without a 429 multiplies the
   * rate by this (1 < factor <= 10); a 429 halves it. @defaultValue 2
   */
  autoRampFactor: number;
}

/** Raw budget configuration as it appears in a config file: everything but the rate optional. */
export type BudgetConfigInput = Partial<BudgetConfig>;

/** The BullMQ Worker `limiter` option: counts job starts per fixed window, global per queue. */
export interface LimiterOptions {
  max: number;
  duration: number;
}

/** A reservation of one request: window slot and quota units. Handed back to `observe`/`release`. */
export interface Permit {
  /** Operation the request is for, e.g. `facts/full`. */
  readonly operation: string;
  /** Gate window the slot belongs to (internal; stale permits are recognised by it). */
  readonly windowId: number;
  /** Names the reservation in Redis (internal): a refund or a replayed acquire counts it once. */
  readonly token: string;
  /** Clock time of the reservation (epoch ms). */
  readonly reservedAtMs: number;

  /** Whether the reservation counted towards the monthly quota (telemetry does not). */
  readonly countsMonthly: boolean;
  /** UTC day (YYYY-MM-DD) and month (YYYY-MM) the quota units were taken from. */
  readonly day: string;
  readonly month: string;
}

/** Why `acquire` refused for now, and until when (clock time). */
export type AcquireOutcome =
  | { kind: 'granted'; permit: Permit }
  /** The window's requests are paced evenly: the next slot is this soon (ms); ask again then. */
  | { kind: 'pace'; waitMs: number; untilMs: number }
  /** The current window is used up (our share spent, or the server said Remaining 0): wait for its reset. */
  | { kind: 'window'; waitMs: number; untilMs: number }
  /** A per-minute 429 holds every worker until Retry-After (capped by maxRetryAfterMs). */
  | { kind: 'hold'; waitMs: number; untilMs: number; reason: string }
  /** A daily or monthly quota is spent: wait until the next UTC midnight / first of the month. */
  | {
      kind: 'quota';
      quota: QuotaKind;
      untilMs: number;
      source: QuotaSource;
      scope: QuotaScope;
      message: string;
    };

/** Who said the quota is spent: our own ledger against a configured quota, or the server's 429. */
export type QuotaSource = 'configured' | 'server';

/** Usage of one quota period. */
export interface QuotaUsage {
  /** `YYYY-MM-DD` (daily) or `YYYY-MM` (monthly), UTC. */
  period: string;
  /** Requests we counted in the period (for the account when accountId is set, else for the key). */
  used: number;
  /** The tighter of the configured quota and what the server reported in a 429 body; null = unknown. */
  limit: number | null;
  /** limit - used, or null when the limit is unknown. */
  remaining: number | null;
  /** Set while the server or the ledger says this quota is spent: when it resets (ISO). */
  exhaustedUntil: string | null;
  /** When the period resets (ISO). */
  resetsAt: string;
}

/** What `status` shows of the budget. */
export interface BudgetDescription {
  /** sha256 of the key, first 16 hex: identifies the key without revealing it. */
  keyFingerprint: string;
  accountId: string | null;
  configuredRequestsPerMinute: number | 'auto';
  share: number;
  /** Last X-RateLimit-Limit reported by the server, null until a response was seen. */
  serverLimitPerMinute: number | null;
  /** Requests per minute the exporter actually allows itself. */
  effectiveRequestsPerMinute: number;
  /** The current gate window: requests sent in it and how many it allows (null if none open). */
  window: { sent: number; allowed: number; endsAt: string; inFlight: number } | null;
  /** Holds in force now (per-minute 429 or an exhausted window), empty when none. */
  holds: { reason: string; until: string }[];
  daily: QuotaUsage;
  monthly: QuotaUsage;
  /** What `auto` is doing (null when the rate is a configured number). */
  auto: AutoRateState | null;
}

/**
 * `auto`'s state: `starting` (no answer yet, AUTO_START_RPM), `headers` (the key's
 * X-RateLimit-Limit), `ramping` (no rate headers: growing while no 429 comes back) or
 * `backed_off` (no rate headers: a 429 halved the rate; it ramps again up to the learned ceiling).
 */
export interface AutoRateState {
  mode: 'starting' | 'headers' | 'ramping' | 'backed_off';
  /** The key's rate auto uses now, before `share` (requests per minute). */
  ratePerMinute: number;
  /** How high the ramp may go: autoCeiling, lowered by what a 429 taught (null with headers). */
  ceilingPerMinute: number | null;
  /** The last 429 that made the ramp back off (ISO) and the rate it came at; null if none. */
  backedOffAt: string | null;
  backedOffFromPerMinute: number | null;
  /** One line for `status`: `no rate headers: ramping, now 240/min, ceiling 6,000`. */
  message: string;
}

/** Input of the snapshot planner. */
export interface PlanInput {
  /** Requests the snapshot needs (one per part). */
  requests: number;
  /** How many of them are telemetry (outside the monthly quota). @defaultValue 0 */
  telemetryRequests?: number;
  /** Budget state, usually `await budget.describe()`. */
  state: BudgetDescription;
  /** Clock time (epoch ms). */
  now: number;
  /** Whether the snapshot may spread over several days/months (the `--allow-multi-day` flag). */
  allowMultiDay: boolean;
  /** `autoRampFactor` of the budget: with it, a ramping `auto` rate counts the ramp in the duration. */
  autoRampFactor?: number;
  /** `autoCeiling` of the budget: with the factor, a starting `auto` plan also says how long a key without rate headers would take. */
  autoCeiling?: number;
}

/** The planner's answer: printed before a snapshot starts. */
export interface Plan {
  requests: number;
  effectiveRequestsPerMinute: number;
  /** requests / effective rate, ignoring quota pauses. */
  expectedDurationMs: number;
  /** Whether the requests fit what is left of today's and this month's quota (true when unknown). */
  fitsToday: boolean;
  fitsMonth: boolean;
  remainingToday: number | null;
  remainingThisMonth: number | null;
  /** Estimated UTC days the snapshot spans, counting daily quota pauses (1 when it fits today). */
  days: number;
  /** When the snapshot is expected to finish, counting quota pauses (ISO). */
  expectedFinishAt: string;
  /** Whether the snapshot may start (false only when it cannot fit the month and multi-day is off). */
  ok: boolean;
  /** One line a person reads, naming the numbers. */
  message: string;
}
