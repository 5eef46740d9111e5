/**
 * Collects every reported value of one company (companyfacts observations and numeric facts of the
 * bundled filing documents) and picks, per fact identity (metric, dimensions, unit, period), the
 * winning report (chooseWinner).
 */
import type { Decimal } from '../fields/index.js';
import { equalDecimal, parseDecimal } from '../fields/index.js';
import type { FilingDocument } from '../sec/index.js';
import type { DocumentFact } from '../sec/index.js';
import type { CompanyFacts, CompanyFactsObservation, Submissions } from '../sec/index.js';
import type { DimensionMember } from '../sec/index.js';

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
  /** `periodKeyOf(periodKind, start, end)`, computed once. */
  periodKey: string;
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
  return c.fact.inTable ? 3 : 2;
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
  const filings = repeatsAFiling(candidates) ? onePerFiling(candidates) : candidates.slice();
  sortByFiling(filings);
  let winner = filings[0] as Candidate;
  for (const f of filings) if (!equalDecimal(f.value, winner.value)) winner = f;
  return winner;
}

/** Lists up to this long are checked pair by pair and sorted by insertion: no Map, no closure. */
const SHORT_LIST = 16;

/** Whether two candidates come from one filing (long lists: assume so, onePerFiling is exact anyway). */
function repeatsAFiling(cs: readonly Candidate[]): boolean {
  if (cs.length > SHORT_LIST) return true;
  for (let i = 1; i < cs.length; i += 1) {
    const acc = (cs[i] as Candidate).accession;
    for (let j = 0; j < i; j += 1) if ((cs[j] as Candidate).accession === acc) return true;
  }
  return false;
}

/** One candidate per filing: its most precise value, located where it is best shown, filed first. */
function onePerFiling(candidates: readonly Candidate[]): Candidate[] {
  const byAccession = new Map<string, Candidate[]>();
  for (const c of candidates) {
    const l = byAccession.get(c.accession);
    if (l === undefined) byAccession.set(c.accession, [c]);
    else l.push(c);
  }
  const filings: Candidate[] = [];
  for (const list of byAccession.values()) {
    const head = list[0] as Candidate;
    if (list.length === 1) {
      filings.push(head);
      continue;
    }
    let value = head;
    for (const c of list) if (precision(c) > precision(value)) value = c;
    let located = value;
    for (const c of list) if (equalDecimal(c.value, value.value) && rank(c) > rank(located)) located = c;
    let filed = value.filed;
    for (const c of list) if (c.filed < filed) filed = c.filed;
    // located's value equals value's; only the filing date may need the filing's earliest.
    filings.push(located.filed === filed ? located : { ...located, value: value.value, filed });
  }
  return filings;
}

/** Filing order: filed date, then accession (unique per filing, so the order is total). */
function compareFiling(a: Candidate, b: Candidate): number {
  if (a.filed !== b.filed) return a.filed < b.filed ? -1 : 1;
  return a.accession < b.accession ? -1 : a.accession > b.accession ? 1 : 0;
}

function sortByFiling(filings: Candidate[]): void {
  if (filings.length > SHORT_LIST) {
    filings.sort(compareFiling);
    return;
  }
  for (let i = 1; i < filings.length; i += 1) {
    const x = filings[i] as Candidate;
    let j = i - 1;
    for (; j >= 0 && compareFiling(filings[j] as Candidate, x) > 0; j -= 1) filings[j + 1] = filings[j] as Candidate;
    filings[j + 1] = x;
  }
}

/** The dimensions of one context, as every fact in it needs them. */
interface ContextDims {
  dims: DimensionMember[];
  dimsKey: string | null;
  dimsPath: string | null;
  periodKey: string;
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

/**
 * Fact groups by series (metric | dims_key | unit), then by period_key; `all` keeps the order of
 * their first report. Two levels spare a long key string per observation.
 */
class GroupCollector {
  readonly all: FactGroup[] = [];
  private readonly bySeries = new Map<string, Map<string, FactGroup>>();

  /** The groups of one series by period_key. */
  seriesGroups(metricId: string, dimsKey: string | null, unit: string): Map<string, FactGroup> {
    const key = `${metricId}|${dimsKey ?? ''}|${unit}`;
    let m = this.bySeries.get(key);
    if (m === undefined) this.bySeries.set(key, (m = new Map()));
    return m;
  }

  /** Opens the group of a fact at its first report. */
  open(
    groups: Map<string, FactGroup>,
    metricId: string,
    qname: string,
    unit: string,
    periodKind: 'instant' | 'duration',
    start: string | null,
    end: string,
    periodKey: string,
    dimsOf: ContextDims | undefined,
    cand: Candidate,
  ): void {
    const g: FactGroup = {
      metricId,
      qname,
      unit,
      periodKind,
      start,
      end,
      periodKey,
      dims: dimsOf?.dims ?? [],
      dimsKey: dimsOf?.dimsKey ?? null,
      dimsPath: dimsOf?.dimsPath ?? null,
      candidates: [cand],
      winner: cand,
    };
    groups.set(periodKey, g);
    this.all.push(g);
  }
}

/** The later of two dates (null: none). */
function laterDate(a: string | null, b: string | null): string | null {
  return b !== null && (a === null || b > a) ? b : a;
}

export function collectFacts(
  companyfacts: CompanyFacts | null,
  submissions: Submissions | null,
  docs: readonly FilingDocument[],
): CollectedFacts {
  const collector = new GroupCollector();
  let asOfDate = companyfacts ? collectCompanyFacts(companyfacts, collector) : null;
  asOfDate = laterDate(asOfDate, collectDocumentFacts(docs, collector));
  const { reportPeriods, primaryDocuments, latestFiled } = filingFacts(companyfacts, submissions, docs);
  asOfDate = laterDate(asOfDate, latestFiled);
  for (const g of collector.all) if (g.candidates.length > 1) g.winner = chooseWinner(g.candidates);
  return { groups: collector.all, reportPeriods, primaryDocuments, asOfDate };
}

/** Adds every companyfacts observation with a value; returns the latest filing date among them. */
function collectCompanyFacts(companyfacts: CompanyFacts, collector: GroupCollector): string | null {
  let latest: string | null = null;
  // Observations come grouped by concept and unit: names and the series map are looked up once per run.
  let lastTaxonomy = '';
  let lastConcept = '';
  let lastUnit = '';
  let metricId = '';
  let qname = '';
  let groups = new Map<string, FactGroup>();
  for (const o of companyfacts.observations) {
    const value = parseDecimal(o.val);
    if (value === undefined) continue;
    if (latest === null || o.filed > latest) latest = o.filed;
    if (o.concept !== lastConcept || o.taxonomy !== lastTaxonomy || o.unit !== lastUnit) {
      lastTaxonomy = o.taxonomy;
      lastConcept = o.concept;
      lastUnit = o.unit;
      metricId = `${o.taxonomy}#${o.concept}`;
      qname = `${o.taxonomy}:${o.concept}`;
      groups = collector.seriesGroups(metricId, null, o.unit);
    }
    const periodKind = o.start === null ? 'instant' : 'duration';
    const periodKey = periodKeyOf(periodKind, o.start, o.end);
    const cand: Candidate = {
      value,
      accession: o.accn,
      form: o.form === '' ? null : o.form,
      filed: o.filed,
      doc: null,
      fact: null,
      cf: o,
    };
    const g = groups.get(periodKey);
    if (g !== undefined) g.candidates.push(cand);
    else collector.open(groups, metricId, qname, o.unit, periodKind, o.start, o.end, periodKey, undefined, cand);
  }
  return latest;
}

/** Adds every numeric fact of the bundled documents; returns the latest filing date of the documents. */
function collectDocumentFacts(docs: readonly FilingDocument[], collector: GroupCollector): string | null {
  let latest: string | null = null;
  for (const doc of docs) {
    latest = laterDate(latest, doc.filedAt);
    const { contexts, units } = doc.parsed;
    const byContext = new Map<string, ContextDims>();
    for (const fact of doc.parsed.facts) {
      const ctx = contexts.get(fact.contextRef);
      if (ctx === undefined) continue;
      const unit = fact.unitRef !== null ? units.get(fact.unitRef)?.name : undefined;
      if (unit === undefined) continue;
      let dimsOf = byContext.get(fact.contextRef);
      if (dimsOf === undefined) byContext.set(fact.contextRef, (dimsOf = contextDims(ctx)));
      const colon = fact.concept.indexOf(':');
      const prefix = colon > 0 ? fact.concept.slice(0, colon) : 'unknown';
      const local = colon > 0 ? fact.concept.slice(colon + 1) : fact.concept;
      const metricId = `${prefix}#${local}`;
      const groups = collector.seriesGroups(metricId, dimsOf.dimsKey, unit);
      const cand: Candidate = {
        value: fact.value,
        accession: doc.accession,
        form: doc.formType,
        filed: doc.filedAt,
        doc,
        fact,
        cf: null,
      };
      const g = groups.get(dimsOf.periodKey);
      if (g !== undefined) g.candidates.push(cand);
      else {
        collector.open(groups, metricId, fact.concept, unit, ctx.periodKind, ctx.start, ctx.end, dimsOf.periodKey, dimsOf, cand);
      }
    }
  }
  return latest;
}

type DocumentContext = FilingDocument['parsed']['contexts'] extends Map<string, infer C> ? C : never;

/** The dimensions of one context (sorted by axis, and in document order for the raw path). */
function contextDims(ctx: DocumentContext): ContextDims {
  const dims = [...ctx.dims].sort((a, b) => (a.axis < b.axis ? -1 : a.axis > b.axis ? 1 : 0));
  return {
    dims,
    dimsKey: dimsKeyOf(dims),
    dimsPath: ctx.dims.length === 0 ? null : ctx.dims.map((d) => `${d.axis}/${d.member}`).join('|'),
    periodKey: periodKeyOf(ctx.periodKind, ctx.start, ctx.end),
  };
}

/**
 * What each filing says of itself: its report period and primary document, and the latest filing
 * date of the submissions. Report period: the document's dei period › submissions reportDate › the
 * latest period end carried by at least 3 of the filing's us-gaap observations in companyfacts (the
 * current period is the latest one a filing reports; the threshold skips odd subsequent-event dates).
 */
function filingFacts(
  companyfacts: CompanyFacts | null,
  submissions: Submissions | null,
  docs: readonly FilingDocument[],
): { reportPeriods: Map<string, string>; primaryDocuments: Map<string, string>; latestFiled: string | null } {
  const reportPeriods = companyfacts ? observedReportPeriods(companyfacts) : new Map<string, string>();
  const primaryDocuments = new Map<string, string>();
  let latestFiled: string | null = null;
  for (const f of submissions?.filings ?? []) {
    latestFiled = laterDate(latestFiled, f.filingDate);
    if (f.reportDate !== null) reportPeriods.set(f.accession, f.reportDate);
    if (f.primaryDocument !== null) primaryDocuments.set(f.accession, f.primaryDocument);
  }
  for (const d of docs) {
    if (d.periodEnd !== null) reportPeriods.set(d.accession, d.periodEnd);
    primaryDocuments.set(d.accession, d.documentName);
  }
  return { reportPeriods, primaryDocuments, latestFiled };
}

/** Accession → the latest period end carried by at least 3 us-gaap observations (else the latest one). */
function observedReportPeriods(companyfacts: CompanyFacts): Map<string, string> {
  const reportPeriods = new Map<string, string>();
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
  return reportPeriods;
}
