/**
 * What the budget reads back from its Redis hashes, as `describe` and the quota refusals say it:
 * pure functions of the stored fields and the clock (budget.ts does the I/O).
 */
import type { QuotaKind, QuotaScope } from '../types.js';
import { nextUtcMidnight, nextUtcMonthStart } from './time.js';
import type { BudgetDescription, QuotaSource, QuotaUsage } from './budget-types.js';
import { counted } from '../counted.js';

/** A number stored in a Redis hash, or null when the field is missing or empty. */
export function numOrNull(v: string | undefined | null): number | null {
  return v === undefined || v === null || v === '' ? null : Number(v);
}

/**
 * The quiet time either side of the gate's window reset: the configured margin, or none on a key
 * whose successful answers carry no rate headers (`serverLimit` 0): there is no server window to
 * land in, only auto's own. The ACQUIRE script (scripts.ts) applies the same rule.
 */
export function windowMarginMs(gate: Record<string, string>, configured: number): number {
  return gate.serverLimit === '0' ? 0 : configured;
}

/**
 * The gate's current window as `describe` shows it (null when none is open) and what holds
 * requests back now: a 429's hold, else a spent window or the quiet time around its reset.
 */
export function gateWindow(
  gate: Record<string, string>,
  now: number,
  effective: number,
  margin: number,
): Pick<BudgetDescription, 'window' | 'holds'> {
  const end = numOrNull(gate.end);
  const holds: { reason: string; until: string }[] = [];
  const holdUntil = numOrNull(gate.holdUntil);
  if (holdUntil !== null && holdUntil > now)
    holds.push({ reason: gate.holdReason ?? 'rate limited', until: new Date(holdUntil).toISOString() });
  let window: BudgetDescription['window'] = null;
  if (end !== null && now < end + margin) {
    const used = numOrNull(gate.used) ?? 0;
    const allowed = Math.min(numOrNull(gate.cap) ?? effective, effective);
    window = {
      sent: used,
      allowed,
      endsAt: new Date(end).toISOString(),
      inFlight: numOrNull(gate.inflight) ?? 0,
    };
    if (holds.length === 0 && (used >= allowed || now >= end - margin)) {
      holds.push({
        reason:
          used >= allowed ? `window spent (${used}/${allowed} sent)` : 'quiet time around the window reset',
        until: new Date(end + margin).toISOString(),
      });
    }
  }
  return { window, holds };
}

/**
 * One quota's use: the tighter of the configured limit and those learned from 429 bodies (the
 * key's and the account's quota hashes, `learned`), spent when a hash marks the period or the
 * count reached the limit.
 */
export function quotaUsage(
  learned: readonly Record<string, string>[],
  now: number,
  kind: QuotaKind,
  period: string,
  used: number,
  configured: number | null,
): QuotaUsage {
  const limits = [
    ...(configured !== null ? [configured] : []),
    ...learned.map((h) => numOrNull(h[`${kind}.limit`])).filter((v): v is number => v !== null),
  ];
  const limit = limits.length ? Math.min(...limits) : null;
  const resets = kind === 'daily' ? nextUtcMidnight(now) : nextUtcMonthStart(now);
  const spent = learned.some((h) => h[kind] === period) || (limit !== null && used >= limit);
  return {
    period,
    used,
    limit,
    remaining: limit === null ? null : Math.max(0, limit - used),
    exhaustedUntil: spent ? new Date(resets).toISOString() : null,
    resetsAt: new Date(resets).toISOString(),
  };
}

export function quotaMessage(
  quota: QuotaKind,
  scope: QuotaScope,
  source: QuotaSource,
  limit: number,
  used: number,
  untilMs: number,
): string {
  const who = scope === 'account' ? 'account' : 'API key';
  const what =
    source === 'configured'
      ? `configured ${quota} quota of ${counted(limit, 'request')} (${who}) is spent: ${used} used`
      : `server reports the ${who}'s ${quota} quota spent${limit >= 0 ? `: ${used >= 0 ? used : '?'} of ${limit} used` : ''}`;
  return `${what}; requests wait until ${new Date(untilMs).toISOString()} and then resume by themselves`;
}
