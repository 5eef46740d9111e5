/**
 * facts/core normalisation (seed 4.3): 10-K filings report the fiscal year, not its fourth quarter,
 * so a quarterly flow series has a hole at every fiscal year end. For every consolidated monetary
 * duration series, where a fiscal-year value (350–380 days) exists and no quarter (80–100 days)
 * ends on the same date, a Q4 row is derived with exact decimal arithmetic:
 *   Q4 = FY − 9-month YTD (same start as FY), or else Q4 = FY − (Q1 + Q2 + Q3) for three
 *   contiguous reported quarters from the FY start.
 * Derived rows carry `is_derived: true`, `derivation`, `derived_from_fact_keys` and
 * `derived_from_period_keys` (the rows subtracted, FY first), the annual row's
 * source filing, and null evidence. Reported rows carry `is_derived: false`. FY rows stay as they are.
 */
import type { FactRow } from '../../store.js';
import { addDecimal, decimalFields, parseDecimal, subtractDecimal, type Decimal } from '../fields/index.js';
import { seriesIdentity, sha256Hex } from '../fields/index.js';

function days(start: string, end: string): number {
  return Math.round((Date.parse(`${end}T00:00:00Z`) - Date.parse(`${start}T00:00:00Z`)) / 86_400_000) + 1;
}

function nextDay(date: string): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
}

const isQuarter = (d: number): boolean => d >= 80 && d <= 100;
const isYear = (d: number): boolean => d >= 350 && d <= 380;
const isNineMonths = (d: number): boolean => d >= 260 && d <= 285;

function value(r: FactRow): Decimal {
  const d = parseDecimal(r.value_num);
  if (d === undefined) throw new Error(`unparsable value_num ${r.value_num}`);
  return d;
}

function derivedRow(fy: FactRow, start: string, v: Decimal, how: string, from: FactRow[]): FactRow {
  const periodKey = `duration:${start}..${fy.period_end}`;
  const identity = `${seriesIdentity(fy.cik, fy.metric_id, null, fy.unit_signature)}|${periodKey}`;
  return {
    ...fy,
    fact_key: sha256Hex(identity),
    period_key: periodKey,
    period_start: start,
    ...decimalFields(v),
    evidence_key: null,
    evidence_url: null,
    is_derived: true,
    derivation: how,
    derived_from_fact_keys: from.map((r) => r.fact_key),
    derived_from_period_keys: from.map((r) => r.period_key),
  };
}

/** Adds derived Q4 rows to consolidated rows (any order in, same rows plus derived out, unsorted). */
export function normaliseCore(rows: readonly FactRow[]): FactRow[] {
  const out: FactRow[] = rows.map((r) => ({ ...r, is_derived: false }));
  const bySeries = new Map<string, FactRow[]>();
  for (const r of rows) {
    if (r.unit_class !== 'monetary' || r.period_kind !== 'duration' || r.period_start === null) continue;
    let l = bySeries.get(r.series_key);
    if (l === undefined) bySeries.set(r.series_key, (l = []));
    l.push(r);
  }
  for (const list of bySeries.values()) {
    const byStart = new Map<string, FactRow[]>();
    const quarterEnds = new Set<string>();
    for (const r of list) {
      const s = r.period_start ?? '';
      let l = byStart.get(s);
      if (l === undefined) byStart.set(s, (l = []));
      l.push(r);
      if (isQuarter(days(s, r.period_end))) quarterEnds.add(r.period_end);
    }
    for (const fy of list) {
      const start = fy.period_start ?? '';
      if (!isYear(days(start, fy.period_end)) || quarterEnds.has(fy.period_end)) continue;
      const sameStart = byStart.get(start) ?? [];
      const ytd = sameStart.find((r) => isNineMonths(days(start, r.period_end)) && r.period_end < fy.period_end);
      if (ytd !== undefined) {
        out.push(derivedRow(fy, nextDay(ytd.period_end), subtractDecimal(value(fy), value(ytd)), 'FY - 9M YTD', [fy, ytd]));
        continue;
      }
      const q1 = sameStart.find((r) => isQuarter(days(start, r.period_end)));
      const q2 = q1 && (byStart.get(nextDay(q1.period_end)) ?? []).find((r) => isQuarter(days(r.period_start ?? '', r.period_end)));
      const q3 = q2 && (byStart.get(nextDay(q2.period_end)) ?? []).find((r) => isQuarter(days(r.period_start ?? '', r.period_end)));
      if (q1 && q2 && q3 && q3.period_end < fy.period_end) {
        const sum = addDecimal(addDecimal(value(q1), value(q2)), value(q3));
        out.push(derivedRow(fy, nextDay(q3.period_end), subtractDecimal(value(fy), sum), 'FY - (Q1 + Q2 + Q3)', [fy, q1, q2, q3]));
      }
    }
  }
  return out;
}
