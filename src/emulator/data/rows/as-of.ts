/**
 * The emulator's as-of date: it answers as if it were that day, so filings filed after it do not
 * exist. Applied to a company's inputs before anything is built, so facts, evidence, catalogs,
 * series versions and the issuer's as_of_date all follow from the same cut.
 */
import { EmulatorConfigError } from '../../errors.js';
import type { CompanyInputs } from './company.js';

const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** A calendar date `YYYY-MM-DD`, or a clear error naming `what`. */
export function checkAsOf(value: unknown, what: string): string {
  if (typeof value !== 'string' || !DATE.test(value) || new Date(`${value}T00:00:00Z`).toISOString().slice(0, 10) !== value)
    throw new EmulatorConfigError(`${what} must be a calendar date YYYY-MM-DD, got ${JSON.stringify(value)}`);
  return value;
}

/** What had been filed by the end of `asOf`: observations, submissions and documents filed later are dropped. */
export function filedBy(inputs: CompanyInputs, asOf: string): CompanyInputs {
  return {
    ...inputs,
    companyfacts:
      inputs.companyfacts === null
        ? null
        : { ...inputs.companyfacts, observations: inputs.companyfacts.observations.filter((o) => o.filed <= asOf) },
    submissions:
      inputs.submissions === null
        ? null
        : { ...inputs.submissions, filings: inputs.submissions.filings.filter((f) => f.filingDate <= asOf) },
    docs: inputs.docs.filter((d) => d.filedAt <= asOf),
  };
}

/** The latest filing date anywhere in a company's inputs (the issuer's as_of_date); null when none. */
export function latestFilingDate(inputs: CompanyInputs): string | null {
  let max: string | null = null;
  const see = (d: string | null | undefined): void => {
    if (d && (max === null || d > max)) max = d;
  };
  for (const o of inputs.companyfacts?.observations ?? []) see(o.filed);
  for (const f of inputs.submissions?.filings ?? []) see(f.filingDate);
  for (const d of inputs.docs) see(d.filedAt);
  return max;
}
