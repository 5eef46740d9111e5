/**
 * Admission of one authenticated request: the per-minute window first, then the quotas per account
 * first and per key second (section 5.5). A refused request (429) spends nothing; an admitted one
 * spends one window slot, one daily unit and (except telemetry) one monthly unit for its account
 * and its key, whatever its outcome afterwards (400, 404, 503 and injected faults included).
 */
import type { EmulatorClock } from '../runtime.js';
import type { QuotaKind, QuotaScope } from '../../contract/vocabulary.js';
import type { AuthenticatedKey } from '../auth/authenticator.js';
import { checkLimitOverrides, type LimitOverrides } from './overrides.js';
import { periodEndMs, QuotaLedger } from './quota-ledger.js';
import { RateWindows, WINDOW_MS, type WindowState } from './rate-window.js';

export type { LimitOverrides } from './overrides.js';

export type Admission =
  | { ok: true; window: WindowState | undefined }
  | {
      ok: false;
      kind: 'rate';
      window: WindowState;
      retryAfterS: number;
      body: { error: 'Rate limit exceeded'; retryAfter: number; limit: number; windowMs: number };
    }
  | {
      ok: false;
      kind: 'quota';
      window: WindowState | undefined;
      retryAfterS: number;
      body: { error: string; quota: QuotaKind; scope: QuotaScope; limit: number; used: number };
    };

export class Limiter {
  private readonly windows = new RateWindows();
  private readonly ledger = new QuotaLedger();

  constructor(
    private readonly clock: EmulatorClock,
    private readonly overrides: LimitOverrides = {},
  ) {
    checkLimitOverrides(overrides);
  }

  /** The key's per-minute limit, or undefined when it has none (then no X-RateLimit-* headers). */
  rateLimitOf(auth: AuthenticatedKey): number | undefined {
    const v =
      this.overrides.rateLimitPerMinute !== undefined
        ? this.overrides.rateLimitPerMinute
        : auth.key.rate_limit_per_minute;
    return v ?? undefined;
  }

  private quotaOf(auth: AuthenticatedKey, scope: QuotaScope, kind: QuotaKind): number | null {
    const override = kind === 'daily' ? this.overrides.dailyQuota : this.overrides.monthlyQuota;
    if (override !== undefined) return override;
    const spec = scope === 'account' ? auth.account.quota : auth.key.quota;
    return spec[kind];
  }

  /** Current window of a key without spending (stats). */
  window(auth: AuthenticatedKey): WindowState | undefined {
    const limit = this.rateLimitOf(auth);
    return limit === undefined ? undefined : this.windows.peek(auth.key.id, limit, this.clock.now());
  }

  /** Current usage of an account or key (stats). */
  usage(subject: string, kind: QuotaKind): number {
    return this.ledger.used(subject, kind, this.clock.now());
  }

  /**
   * Decides and, when admitted, spends. `countsMonthly` is false for telemetry/proof-open, which
   * section 4.15 keeps outside the monthly quota (it still counts toward the daily quota).
   */
  admit(auth: AuthenticatedKey, countsMonthly: boolean): Admission {
    const now = this.clock.now();
    const limit = this.rateLimitOf(auth);
    const keyId = auth.key.id;
    const peeked = limit === undefined ? undefined : this.windows.peek(keyId, limit, now);
    if (peeked && limit !== undefined && peeked.remaining <= 0) {
      const retryAfter = Math.max(1, Math.ceil((peeked.resetAtMs - now) / 1000));
      return {
        ok: false,
        kind: 'rate',
        window: peeked,
        retryAfterS: retryAfter,
        body: { error: 'Rate limit exceeded', retryAfter, limit, windowMs: WINDOW_MS },
      };
    }
    const subjects: [QuotaScope, string][] = [
      ['account', `account:${auth.account.id}`],
      ['api_key', `key:${keyId}`],
    ];
    const kinds: QuotaKind[] = countsMonthly ? ['daily', 'monthly'] : ['daily'];
    for (const [scope, subject] of subjects) {
      for (const kind of kinds) {
        const max = this.quotaOf(auth, scope, kind);
        if (max === null) continue;
        const used = this.ledger.used(subject, kind, now);
        if (used >= max) {
          return {
            ok: false,
            kind: 'quota',
            window: peeked,
            retryAfterS: Math.max(1, Math.ceil((periodEndMs(kind, now) - now) / 1000)),
            body: { error: `${kind} quota exceeded`, quota: kind, scope, limit: max, used },
          };
        }
      }
    }
    for (const [, subject] of subjects) for (const kind of kinds) this.ledger.add(subject, kind, now);
    const window = limit === undefined ? undefined : this.windows.spend(keyId, limit, now);
    return { ok: true, window };
  }

  /** `POST /_emulator/reset`: every window and quota counter back to zero. */
  reset(): void {
    this.windows.clear();
    this.ledger.clear();
  }
}
