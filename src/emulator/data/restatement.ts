/**
 * Restatements (the emulator's `restatements` option): one fact of a bundled company given a new
 * value by a later filing, an amendment (10-K/A) filed on a given day. It is one more companyfacts
 * observation of the same concept, unit and period, so the usual winner rule serves the new value
 * from its filing date on (the as-of clock hides it before) under the same fact_key. Without
 * restatements the inputs are untouched.
 */
import { EmulatorConfigError } from '../errors.js';
import type { Company } from '../store.js';
import { checkAsOf } from './rows/index.js';
import type { CompanyFacts, CompanyFactsObservation } from './sec/index.js';

export interface Restatement {
  /** Ticker or CIK of a bundled company. */
  company: string;
  /** The fact's metric_id, `taxonomy#Concept` (e.g. `us-gaap#NetIncomeLoss`). */
  metricId: string;
  /** The period restated (`duration:START..END`, `instant:DATE`). @defaultValue the latest one reported */
  periodKey?: string;
  /** The new value, exact decimal text. */
  value: string;
  /** Filing date of the amendment, `YYYY-MM-DD`: before it the fact keeps its old value. */
  filed: string;
  /** @defaultValue `9999999999-<yy>-<n>`, one per restatement */
  accession?: string;
  /** @defaultValue `10-K/A` */
  form?: string;
}

/** Checks every restatement and keys them by the company's CIK; throws EmulatorConfigError naming the first bad one. */
export function restatementsByCik(
  list: readonly Restatement[],
  resolve: (scope: { ticker?: string; cik?: string }) => Company | undefined,
): Map<string, Restatement[]> {
  const out = new Map<string, Restatement[]>();
  list.forEach((r, i) => {
    const what = `restatements[${i}]`;
    const company = /^\d{1,10}$/.test(r.company) ? resolve({ cik: r.company }) : resolve({ ticker: r.company });
    if (company === undefined) throw new EmulatorConfigError(`${what}.company: unknown company "${r.company}" (a ticker or CIK)`);
    if (!/^[^#\s]+#[^#\s]+$/.test(r.metricId))
      throw new EmulatorConfigError(`${what}.metricId must be taxonomy#Concept, got ${JSON.stringify(r.metricId)}`);
    if (!/^-?\d+(\.\d+)?$/.test(r.value))
      throw new EmulatorConfigError(`${what}.value must be a decimal such as 123.45, got ${JSON.stringify(r.value)}`);
    checkAsOf(r.filed, `${what}.filed`);
    const numbered = { ...r, accession: r.accession ?? `9999999999-${r.filed.slice(2, 4)}-${String(i + 1).padStart(6, '0')}` };
    out.set(company.cik, [...(out.get(company.cik) ?? []), numbered]);
  });
  return out;
}

const periodOf = (o: CompanyFactsObservation): string =>
  o.start === null ? `instant:${o.end}` : `duration:${o.start}..${o.end}`;

/** The company's facts with one amended observation per restatement. */
export function restate(facts: CompanyFacts, list: readonly Restatement[]): CompanyFacts {
  const added = list.map((r) => amendment(facts, r));
  return { ...facts, observations: [...facts.observations, ...added] };
}

/** The restated fact's latest report, copied with the new value, filing and form. */
function amendment(facts: CompanyFacts, r: Restatement): CompanyFactsObservation {
  const reports = facts.observations.filter(
    (o) =>
      `${o.taxonomy}#${o.concept}` === r.metricId &&
      o.filed < r.filed &&
      (r.periodKey === undefined || periodOf(o) === r.periodKey),
  );
  const latest = reports.reduce<CompanyFactsObservation | undefined>(
    (best, o) => (best === undefined || o.end > best.end || (o.end === best.end && o.filed > best.filed) ? o : best),
    undefined,
  );
  if (latest === undefined)
    throw new EmulatorConfigError(
      `restatement of ${r.company} ${r.metricId}${r.periodKey !== undefined ? ` ${r.periodKey}` : ''}: no such fact filed before ${r.filed}`,
    );
  return { ...latest, val: r.value, accn: r.accession ?? latest.accn, form: r.form ?? '10-K/A', filed: r.filed };
}
