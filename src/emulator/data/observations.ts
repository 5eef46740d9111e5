/**
 * Collects every reported value of one company (companyfacts observations and numeric facts of the
 * bundled filing documents) and picks, per fact identity (metric, dimensions, unit, period), the
 * winning report (chooseWinner).
 */
import type { Decimal } from './decimal.js';
import { equalDecimal, parseDecimal } from './decimal.js';
import type { FilingDocument } from './documents.js';
import type { DocumentFact } from './ixbrl.js';
import type { CompanyFacts, CompanyFactsObservation, Submissions } from './sec-json.js';
import type { DimensionMember } from './xbrl-common.js';

export interface Candidate {
  value: Decimal;
  accession: string;
  form: string | null;
  filed: string;
  doc: FilingDocument | null;
  fact: DocumentFact | null;
  cf: CompanyFactsObservation | null;
}

export interface FactGroup {
  metricId: string;
  /** QName of the concept (`us-gaap:Revenues`), for label lookups. */
  qname: string;
  unit: string;
  periodKind: 'instant' | 'duration';
  start: string | null;
  end: string;
  /** Sorted by axis. Empty for consolidated facts. */
  dims: DimensionMember[];
  dimsKey: string | null;
  /** Document order of the dimensions (the raw path). */
  dimsPath: string | null;
  candidates: Candidate[];
  winner: Candidate;
}

export function periodKeyOf(kind: 'instant' | 'duration', start: string | null, end: string): string {
  return kind === 'instant' ? `instant:${end}` : `duration:${start ?? ''}..${end}`;
}

export function dimsKeyOf(dims: readonly DimensionMember[]): string | null {
  return dims.length === 0 ? null : dims.map((d) => `${d.axis}=${d.member}`).join(';');
}

function rank(c: Candidate): number {
  if (c.fact === null) return 0;
  if (c.fact.hidden) return 1;
  return c.fact.table !== null ? 3 : 2;
}

/** Precision of a report: companyfacts first (the SEC's pick), then the `decimals` attribute. */
function precision(c: Candidate): number {
  if (c.cf !== null) return Number.POSITIVE_INFINITY;
  const d = c.fact?.decimals ?? null;
  if (d === null || d === 'INF') return 1e9;
  const n = Number.parseInt(d, 10);
  return Number.isFinite(n) ? n : -1e9;
}

/**
 * The winning report of a fact. Per filing, one value: companyfacts' if it has one, else the most
 * precise report in the documents. Filings in filing order (filed date, then accession): the first
 * filing's value stands until a later filing reports a DIFFERENT value (a restatement), which then
 * wins; a later filing repeating the same value as a comparative does not displace the original.
 * Within the winning filing, the report located in a bundled document (in a table, visible) is used.
 */
export function chooseWinner(candidates: readonly Candidate[]): Candidate {
  const byAccession = new Map<string, Candidate[]>();
  for (const c of candidates) {
    const l = byAccession.get(c.accession);
    if (l === undefined) byAccession.set(c.accession, [c]);
    else l.push(c);
  }
  const filings = [...byAccession.values()].map((list) => {
    let value = list[0] as Candidate;
    for (const c of list) if (precision(c) > precision(value)) value = c;
    let located = value;
    for (const c of list) if (equalDecimal(c.value, value.value) && rank(c) > rank(located)) located = c;
    const filed = list.reduce((m, c) => (c.filed < m ? c.filed : m), value.filed);
    return { located: { ...located, value: value.value, filed }, filed, accession: value.accession };
  });
  filings.sort((a, b) => (a.filed !== b.filed ? (a.filed < b.filed ? -1 : 1) : a.accession < b.accession ? -1 : a.accession > b.accession ? 1 : 0));
  let winner = filings[0]?.located as Candidate;
  for (const f of filings) if (!equalDecimal(f.located.value, winner.value)) winner = f.located;
  return winner;
}

export interface CollectedFacts {
  groups: FactGroup[];
  /** Accession → the filing's own report period end. */
  reportPeriods: Map<string, string>;
  /** Accession → EDGAR primary document name (from submissions). */
  primaryDocuments: Map<string, string>;
  /** Latest filing date seen anywhere in the company's data. */
  asOfDate: string | null;
}

export function collectFacts(
  companyfacts: CompanyFacts | null,
  submissions: Submissions | null,
  docs: readonly FilingDocument[],
): CollectedFacts {
  const groups = new Map<string, FactGroup>();
  const add = (
    base: Omit<FactGroup, 'candidates' | 'winner'>,
    cand: Candidate,
  ): void => {
    const key = `${base.metricId}|${base.dimsKey ?? ''}|${base.unit}|${periodKeyOf(base.periodKind, base.start, base.end)}`;
    const g = groups.get(key);
    if (g === undefined) groups.set(key, { ...base, candidates: [cand], winner: cand });
    else g.candidates.push(cand);
  };

  let asOfDate: string | null = null;
  const seeDate = (d: string | null): void => {
    if (d !== null && (asOfDate === null || d > asOfDate)) asOfDate = d;
  };

  if (companyfacts) {
    for (const o of companyfacts.observations) {
      const value = parseDecimal(o.val);
      if (value === undefined) continue;
      seeDate(o.filed);
      add(
        {
          metricId: `${o.taxonomy}#${o.concept}`,
          qname: `${o.taxonomy}:${o.concept}`,
          unit: o.unit,
          periodKind: o.start === null ? 'instant' : 'duration',
          start: o.start,
          end: o.end,
          dims: [],
          dimsKey: null,
          dimsPath: null,
        },
        { value, accession: o.accn, form: o.form === '' ? null : o.form, filed: o.filed, doc: null, fact: null, cf: o },
      );
    }
  }
  for (const doc of docs) {
    seeDate(doc.filedAt);
    const { contexts, units } = doc.parsed;
    for (const fact of doc.parsed.facts) {
      const ctx = contexts.get(fact.contextRef);
      if (ctx === undefined) continue;
      const unit = fact.unitRef !== null ? units.get(fact.unitRef)?.name : undefined;
      if (unit === undefined) continue;
      const colon = fact.concept.indexOf(':');
      const prefix = colon > 0 ? fact.concept.slice(0, colon) : 'unknown';
      const local = colon > 0 ? fact.concept.slice(colon + 1) : fact.concept;
      const dims = [...ctx.dims].sort((a, b) => (a.axis < b.axis ? -1 : a.axis > b.axis ? 1 : 0));
      add(
        {
          metricId: `${prefix}#${local}`,
          qname: fact.concept,
          unit,
          periodKind: ctx.periodKind,
          start: ctx.start,
          end: ctx.end,
          dims,
          dimsKey: dimsKeyOf(dims),
          dimsPath: ctx.dims.length === 0 ? null : ctx.dims.map((d) => `${d.axis}/${d.member}`).join('|'),
        },
        { value: fact.value, accession: doc.accession, form: doc.formType, filed: doc.filedAt, doc, fact, cf: null },
      );
    }
  }

  // Report period of each filing: the document's dei period › submissions reportDate › the latest
  // period end carried by at least 3 of the filing's us-gaap observations in companyfacts (the
  // current period is the latest one a filing reports; the threshold skips odd subsequent-event dates).
  const reportPeriods = new Map<string, string>();
  const primaryDocuments = new Map<string, string>();
  if (companyfacts) {
    const counts = new Map<string, Map<string, number>>();
    for (const o of companyfacts.observations) {
      if (o.taxonomy !== 'us-gaap') continue;
      let m = counts.get(o.accn);
      if (m === undefined) counts.set(o.accn, (m = new Map()));
      m.set(o.end, (m.get(o.end) ?? 0) + 1);
    }
    for (const [acc, m] of counts) {
      let best: string | null = null;
      let fallback: string | null = null;
      for (const [end, n] of m) {
        if (fallback === null || end > fallback) fallback = end;
        if (n >= 3 && (best === null || end > best)) best = end;
      }
      const period = best ?? fallback;
      if (period !== null) reportPeriods.set(acc, period);
    }
  }
  for (const f of submissions?.filings ?? []) {
    seeDate(f.filingDate);
    if (f.reportDate !== null) reportPeriods.set(f.accession, f.reportDate);
    if (f.primaryDocument !== null) primaryDocuments.set(f.accession, f.primaryDocument);
  }
  for (const d of docs) {
    if (d.periodEnd !== null) reportPeriods.set(d.accession, d.periodEnd);
    primaryDocuments.set(d.accession, d.documentName);
  }
  const all = [...groups.values()];
  for (const g of all) if (g.candidates.length > 1) g.winner = chooseWinner(g.candidates);
  return { groups: all, reportPeriods, primaryDocuments, asOfDate };
}
