/**
 * Daily (UTC day) and monthly (UTC month) request counters per account and per key. A counter
 * belongs to one period; reading it in a later period starts it at 0, so rollover needs no timer
 * and follows the injected clock.
 */
import type { QuotaKind } from '../../contract/vocabulary.js';

interface Counter {
  period: string;
  used: number;
}

/** `2026-11-21` for daily, `2026-11` for monthly (UTC). */
export function periodOf(kind: QuotaKind, now: number): string {
  const iso = new Date(now).toISOString();
  return kind === 'daily' ? iso.slice(0, 10) : iso.slice(0, 7);
}

/** Epoch ms at which the current period ends: next 00:00 UTC, or the 1st of next month 00:00 UTC. */
export function periodEndMs(kind: QuotaKind, now: number): number {
  const d = new Date(now);
  return kind === 'daily'
    ? Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1)
    : Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

export class QuotaLedger {
  private readonly counters = new Map<string, Counter>();

  /** Usage of `subject` (e.g. `account:acme`, `key:key_1`) in the current period. */
  used(subject: string, kind: QuotaKind, now: number): number {
    const c = this.counters.get(`${kind}|${subject}`);
    return c && c.period === periodOf(kind, now) ? c.used : 0;
  }

  add(subject: string, kind: QuotaKind, now: number): void {
    const id = `${kind}|${subject}`;
    const period = periodOf(kind, now);
    const c = this.counters.get(id);
    if (c && c.period === period) c.used += 1;
    else this.counters.set(id, { period, used: 1 });
  }

  clear(): void {
    this.counters.clear();
  }
}
