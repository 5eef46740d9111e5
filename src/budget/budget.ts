import { Redis as IORedis, type Redis } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { ConfigError, type QuotaExceededError, type RateLimitedError } from '../errors.js';
import type { Logger } from '../log.js';
import { systemClock, type Clock, type QuotaKind, type QuotaScope, type RateLimitState } from '../types.js';
import { describeAuto } from './auto-rate.js';
import { effectiveRate } from './config.js';
import { keyFingerprint } from './fingerprint.js';
import { planRequests } from './plan.js';
import { ACQUIRE, OBSERVE, QUOTA_EXCEEDED, RATE_LIMITED, REFUND, runScript } from './scripts.js';
import { nextUtcMidnight, nextUtcMonthStart, utcDay, utcMonth } from './time.js';
import {
  WINDOW_MS,
  type AcquireOutcome,
  type BudgetConfig,
  type BudgetDescription,
  type Permit,
  type Plan,
  type QuotaSource,
} from './budget-types.js';
import { gateWindow, numOrNull, quotaMessage, quotaUsage, windowMarginMs } from './budget-readings.js';

export interface BudgetOptions {
  /** ioredis client or a Redis URL. Only non-blocking commands: it can share the worker's client. */
  redis: Redis | string;
  /** Resolved budget settings (`resolveBudgetConfig`). */
  config: BudgetConfig;
  /** The plaintext API key; only its fingerprint is kept. Give this or `keyFingerprint`. */
  apiKey?: string;
  /** Fingerprint of the key (`keyFingerprint(apiKey)`), when the caller has no key (status). */
  keyFingerprint?: string;
  /** @defaultValue systemClock */
  clock?: Clock;
  logger?: Logger;
  /** Prefix of every Redis key of the budget. @defaultValue `ffx:budget` */
  prefix?: string;
  /**
   * Whether the writes made so far on `redis` reached a replica of the node holding `key` (a
   * ReplicaAck of src/infra): a reservation is granted only once it would survive a failover.
   * @defaultValue always true (one server, or readers)
   */
  confirmWrite?: (key: string) => Promise<boolean>;
}

/** How long every worker holds when a reservation did not reach a replica (it was refunded). */
const UNREPLICATED_HOLD_MS = 1000;

/** A permit bound to its budget: `observe` feeds the response's headers back to the gate. */
export interface BoundPermit extends Permit {
  /** Feeds the response's rate-limit headers to the shared gate. Call once the headers are in. */
  observe(rateLimit: RateLimitState): Promise<void>;
}

export interface Budget {
  readonly keyFingerprint: string;
  readonly config: BudgetConfig;
  readonly clock: Clock;
  /**
   * Reserves one request atomically (Lua): quota units in the ledger and a slot in the shared
   * window, or says why not and until when. Never sends anything itself.
   */
  acquire(operation: string): Promise<AcquireOutcome>;
  /**
   * Feeds the rate-limit headers of the permit's response (success or error) to the gate.
   * `succeeded`: a 2xx answer, whose missing X-RateLimit-Limit means the key has no limit.
   */
  observe(permit: Permit, rateLimit: RateLimitState, opts?: { succeeded?: boolean }): Promise<void>;
  /**
   * Ends the permit. `sent: false` when the request never left (client-side validation): the
   * reservation is refunded. Otherwise the quota units stay spent (the server may have counted it).
   */
  release(permit: Permit, outcome?: { sent: boolean }): Promise<void>;
  /** A per-minute 429: holds every worker until Retry-After (capped), window closed until then. */
  onRateLimited(permit: Permit | null, err: RateLimitedError): Promise<{ untilMs: number; waitMs: number }>;
  /** A quota 429: records the server's used/limit and marks the quota spent until its reset. */
  onQuotaExceeded(
    permit: Permit | null,
    err: QuotaExceededError,
  ): Promise<{ quota: QuotaKind; scope: QuotaScope; untilMs: number; message: string }>;
  /** Rate, window, holds and quota usage now. */
  describe(): Promise<BudgetDescription>;
  /** Plans a snapshot of `requests` requests against the state now (see planRequests). */
  plan(requests: number, opts?: { telemetryRequests?: number; allowMultiDay?: boolean }): Promise<Plan>;
  /** Closes the Redis connection if the budget opened it. */
  close(): Promise<void>;
}

/** Operations outside the monthly quota (interface section 8). */
const MONTHLY_EXEMPT = new Set(['telemetry/proof-open']);
const DAY_TTL_S = 3 * 86_400;
const MONTH_TTL_S = 40 * 86_400;
/**
 * Windows (a minute or more each) a reservation's token is kept when its request never settles (a
 * worker killed): a refund or a replayed acquire later than that counts as a new request. Both come
 * within seconds.
 */
const RESERVATION_KEPT_WINDOWS = 60;

export function createBudget(opts: BudgetOptions): Budget {
  return new RedisBudget(opts);
}

class RedisBudget implements Budget {
  readonly keyFingerprint: string;
  readonly config: BudgetConfig;
  readonly clock: Clock;
  private readonly redis: Redis;
  private readonly ownsRedis: boolean;
  private readonly prefix: string;
  private readonly logger: Logger | undefined;
  private readonly confirmWrite: (key: string) => Promise<boolean>;
  /** Permits whose in-flight count was already settled in this process. */
  private readonly settled = new WeakSet<Permit>();

  constructor(opts: BudgetOptions) {
    const fp = opts.keyFingerprint ?? (opts.apiKey !== undefined ? keyFingerprint(opts.apiKey) : undefined);
    if (!fp) throw new ConfigError('budget: an apiKey or a keyFingerprint is required to identify the key');
    if (!/^[0-9a-f]{16}$/.test(fp))
      throw new ConfigError(`budget: keyFingerprint must be 16 hex digits, got ${JSON.stringify(fp)}`);
    this.keyFingerprint = fp;
    this.config = opts.config;
    this.clock = opts.clock ?? systemClock;
    this.prefix = opts.prefix ?? 'ffx:budget';
    this.logger = opts.logger;
    this.confirmWrite = opts.confirmWrite ?? (() => Promise.resolve(true));
    if (typeof opts.redis === 'string') {
      this.redis = new IORedis(opts.redis, { maxRetriesPerRequest: null, lazyConnect: false });
      this.ownsRedis = true;
    } else {
      this.redis = opts.redis;
      this.ownsRedis = false;
    }
  }

  // ---- Redis key names: per key fingerprint, per account ----
  private get gateKey(): string {
    return `${this.prefix}:key:${this.keyFingerprint}:gate`;
  }
  private keyQuotaHash(): string {
    return `${this.prefix}:key:${this.keyFingerprint}:quota`;
  }
  private acctQuotaHash(): string {
    const a = this.config.accountId;
    return a ? `${this.prefix}:acct:${a}:quota` : this.keyQuotaHash();
  }
  /** Tokens of the reservations made and not yet settled: what a refund may take back. */
  private reservationsKey(): string {
    return `${this.prefix}:key:${this.keyFingerprint}:reservations`;
  }
  private counters(day: string, month: string): [string, string, string, string] {
    const k = `${this.prefix}:key:${this.keyFingerprint}`;
    const a = this.config.accountId ? `${this.prefix}:acct:${this.config.accountId}` : k;
    return [`${k}:d:${day}`, `${k}:m:${month}`, `${a}:d:${day}`, `${a}:m:${month}`];
  }
  private now(): number {
    return Math.floor(this.clock.now());
  }

  /** Runs ACQUIRE for one reservation named `token`: its raw answer, read by `acquire`. */
  private async runAcquire(
    now: number,
    period: { day: string; month: string },
    countsMonthly: boolean,
    token: string,
  ): Promise<(string | number)[]> {
    const { day, month } = period;
    const c = this.config;
    return (await runScript(
      this.redis,
      ACQUIRE,
      [
        this.gateKey,
        ...this.counters(day, month),
        this.keyQuotaHash(),
        this.acctQuotaHash(),
        this.reservationsKey(),
      ],
      [
        now,
        day,
        month,
        c.requestsPerMinute === 'auto' ? -1 : c.requestsPerMinute,
        c.share,
        c.safetyMarginMs,
        WINDOW_MS,
        c.dailyQuota ?? -1,
        c.monthlyQuota ?? -1,
        countsMonthly ? 1 : 0,
        c.accountId ? 1 : 0,
        DAY_TTL_S,
        MONTH_TTL_S,
        c.pacing,
        c.autoCeiling,
        c.autoRampFactor,
        token,
        RESERVATION_KEPT_WINDOWS,
      ],
    )) as (string | number)[];
  }

  async acquire(operation: string): Promise<AcquireOutcome> {
    const now = this.now();
    const day = utcDay(now);
    const month = utcMonth(now);
    const countsMonthly = !MONTHLY_EXEMPT.has(operation);
    const token = randomUUID();
    const res = await this.runAcquire(now, { day, month }, countsMonthly, token);
    const kind = String(res[0]);
    switch (kind) {
      case 'ok':
        return this.grant({
          operation,
          windowId: Number(res[1]),
          token,
          reservedAtMs: now,
          countsMonthly,
          day,
          month,
        });
      case 'pace': {
        const untilMs = Number(res[1]);
        return { kind: 'pace', untilMs, waitMs: Math.max(1, untilMs - now) };
      }
      case 'window': {
        const untilMs = Number(res[1]);
        return { kind: 'window', untilMs, waitMs: Math.max(1, untilMs - now) };
      }
      case 'hold': {
        const untilMs = Number(res[1]);
        return { kind: 'hold', untilMs, waitMs: Math.max(1, untilMs - now), reason: String(res[2]) };
      }
      case 'quota': {
        const quota = String(res[1]) as QuotaKind;
        const source = String(res[2]) as QuotaSource;
        const scope = String(res[3]) as QuotaScope;
        const limit = Number(res[4]);
        const used = Number(res[5]);
        const untilMs = quota === 'daily' ? nextUtcMidnight(now) : nextUtcMonthStart(now);
        return {
          kind: 'quota',
          quota,
          source,
          scope,
          untilMs,
          message: quotaMessage(quota, scope, source, limit, used, untilMs),
        };
      }
      default:
        throw new Error(`budget: unexpected answer from the acquire script: ${JSON.stringify(res)}`);
    }
  }

  /**
   * A reservation no replica acknowledged could vanish in a failover after its request was sent,
   * and the quota would be spent twice: it is refunded unsent and every worker holds briefly.
   */
  private async grant(permit: Permit): Promise<AcquireOutcome> {
    if (await this.confirmWrite(this.gateKey)) return { kind: 'granted', permit };
    await this.release(permit, { sent: false });
    const now = this.now();
    return {
      kind: 'hold',
      untilMs: now + UNREPLICATED_HOLD_MS,
      waitMs: UNREPLICATED_HOLD_MS,
      reason: 'the reservation reached no Redis replica; refunded and retried so a failover cannot lose it',
    };
  }

  async observe(
    permit: Permit,
    rateLimit: RateLimitState,
    opts: { succeeded?: boolean } = {},
  ): Promise<void> {
    const settle = !this.settled.has(permit);
    this.settled.add(permit);
    await runScript(
      this.redis,
      OBSERVE,
      [this.gateKey, this.reservationsKey()],
      [
        this.now(),
        permit.windowId,
        rateLimit.limit ?? -1,
        rateLimit.remaining ?? -1,
        rateLimit.resetAtMs ?? -1,
        this.config.safetyMarginMs,
        settle ? 1 : 0,
        opts.succeeded === true ? 1 : 0,
        this.now() - permit.reservedAtMs,
        permit.token,
      ],
    );
  }

  async release(permit: Permit, outcome: { sent: boolean } = { sent: true }): Promise<void> {
    if (!outcome.sent) {
      if (this.settled.has(permit)) return;
      this.settled.add(permit);
      await runScript(
        this.redis,
        REFUND,
        [this.gateKey, ...this.counters(permit.day, permit.month), this.reservationsKey()],
        [permit.windowId, permit.countsMonthly ? 1 : 0, this.config.accountId ? 1 : 0, permit.token],
      );
      return;
    }
    if (!this.settled.has(permit)) await this.observe(permit, {});
  }

  async onRateLimited(
    permit: Permit | null,
    err: RateLimitedError,
  ): Promise<{ untilMs: number; waitMs: number }> {
    const settle = permit !== null && !this.settled.has(permit);
    if (permit) this.settled.add(permit);
    const now = this.now();
    const reported = err.retryAfterMs ?? err.rateLimit.retryAfterMs;
    // No Retry-After: fall back to the reset header, else a whole window.
    const fromReset = err.rateLimit.resetAtMs !== undefined ? err.rateLimit.resetAtMs - now : undefined;
    const raw = Number.isFinite(reported) && reported >= 0 ? reported : (fromReset ?? WINDOW_MS);
    const waitMs = Math.max(0, Math.min(raw, this.config.maxRetryAfterMs));
    const reason = `429 ${err.operation}: Retry-After ${Math.ceil(raw / 1000)} s${raw > waitMs ? ` (capped to ${waitMs} ms)` : ''}`;
    const holdUntil = Number(
      await runScript(
        this.redis,
        RATE_LIMITED,
        [this.gateKey, this.reservationsKey()],
        [
          now,
          permit?.windowId ?? -1,
          waitMs,
          this.config.safetyMarginMs,
          err.rateLimit.limit ?? err.limit ?? -1,
          settle ? 1 : 0,
          reason,
          err.rateLimit.limit !== undefined ? 1 : 0,
          this.config.autoCeiling,
          permit?.token ?? '',
        ],
      ),
    );
    this.logger?.warn(
      { key: this.keyFingerprint, waitMs, holdUntil: new Date(holdUntil).toISOString() },
      'budget: per-minute rate limit hit; every worker holds',
    );
    return { untilMs: holdUntil, waitMs: Math.max(1, holdUntil - now) };
  }

  async onQuotaExceeded(
    permit: Permit | null,
    err: QuotaExceededError,
  ): Promise<{ quota: QuotaKind; scope: QuotaScope; untilMs: number; message: string }> {
    if (permit && !this.settled.has(permit)) await this.observe(permit, err.rateLimit);
    const now = this.now();
    const day = utcDay(now);
    const month = utcMonth(now);
    const [kd, km, ad, am] = this.counters(day, month);
    const daily = err.quota === 'daily';
    const accountScope = err.scope === 'account';
    const hash = accountScope ? this.acctQuotaHash() : this.keyQuotaHash();
    const counter = daily ? (accountScope ? ad : kd) : accountScope ? am : km;
    await runScript(
      this.redis,
      QUOTA_EXCEEDED,
      [hash, counter],
      [
        err.quota,
        daily ? day : month,
        err.scope,
        err.limit ?? -1,
        err.used ?? -1,
        daily ? DAY_TTL_S : MONTH_TTL_S,
      ],
    );
    const untilMs = daily ? nextUtcMidnight(now) : nextUtcMonthStart(now);
    const message = quotaMessage(err.quota, err.scope, 'server', err.limit ?? -1, err.used ?? -1, untilMs);
    this.logger?.warn(
      {
        key: this.keyFingerprint,
        quota: err.quota,
        scope: err.scope,
        until: new Date(untilMs).toISOString(),
      },
      `budget: ${message}`,
    );
    return { quota: err.quota, scope: err.scope, untilMs, message };
  }

  async describe(): Promise<BudgetDescription> {
    const now = this.now();
    const day = utcDay(now);
    const month = utcMonth(now);
    const [kd, km, ad, am] = this.counters(day, month);
    const hasAccount = Boolean(this.config.accountId);
    const [gate, counts, keyQ, acctQ] = await Promise.all([
      this.redis.hgetall(this.gateKey),
      this.redis.mget(hasAccount ? ad : kd, hasAccount ? am : km),
      this.redis.hgetall(this.keyQuotaHash()),
      this.redis.hgetall(this.acctQuotaHash()),
    ]);
    const serverLimit = numOrNull(gate.serverLimit);
    const auto =
      this.config.requestsPerMinute === 'auto'
        ? describeAuto(
            {
              serverLimit,
              autoRate: numOrNull(gate.autoRate),
              autoCeil: numOrNull(gate.autoCeil),
              autoBackedAt: numOrNull(gate.autoBackedAt),
              autoBackedFrom: numOrNull(gate.autoBackedFrom),
              autoExpiredAt: numOrNull(gate.autoExpiredAt),
              autoExpiredCeil: numOrNull(gate.autoExpiredCeil),
            },
            this.config.autoCeiling,
          )
        : null;
    const effective = effectiveRate(this.config, serverLimit, auto?.ratePerMinute);
    const { window, holds } = gateWindow(
      gate,
      now,
      effective,
      windowMarginMs(gate, this.config.safetyMarginMs),
    );
    const learned = [keyQ, acctQ];
    return {
      keyFingerprint: this.keyFingerprint,
      accountId: this.config.accountId ?? null,
      configuredRequestsPerMinute: this.config.requestsPerMinute,
      share: this.config.share,
      serverLimitPerMinute: serverLimit,
      effectiveRequestsPerMinute: effective,
      window,
      holds,
      daily: quotaUsage(learned, now, 'daily', day, Number(counts[0] ?? 0), this.config.dailyQuota),
      monthly: quotaUsage(learned, now, 'monthly', month, Number(counts[1] ?? 0), this.config.monthlyQuota),
      auto,
    };
  }

  async plan(
    requests: number,
    opts: { telemetryRequests?: number; allowMultiDay?: boolean } = {},
  ): Promise<Plan> {
    return planRequests({
      requests,
      telemetryRequests: opts.telemetryRequests ?? 0,
      state: await this.describe(),
      now: this.now(),
      allowMultiDay: opts.allowMultiDay ?? this.config.allowMultiDay,
      autoRampFactor: this.config.autoRampFactor,
      autoCeiling: this.config.autoCeiling,
    });
  }

  async close(): Promise<void> {
    if (this.ownsRedis) await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
