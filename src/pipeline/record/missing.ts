/**
 * Companies a snapshot asked for that the API does not know: every part of theirs was answered
 * 404. Named as the user typed them, with what the API answered, for `run`, `status` and the page.
 * A snapshot in which no company was found is a failed snapshot (jobs/publish-snapshot.ts): its
 * empty tables must never reach `latest`, a warehouse or the base of an incremental night.
 */
import type { PartPointer } from '../../types.js';
import { companyAsTyped, companyKey, type Company } from './universe.js';

/** One company the API did not know. */
export interface MissingCompany {
  /** As the user typed it (`zzzzz`, `CIK0000000001`). */
  company: string;
  /** What the API answered, e.g. `facts/full: company not found: ticker ZZZZZ (404 Unknown ticker: ZZZZZ)`. */
  answer: string;
}

/** The missing companies a record keeps: enough to name them, bounded at any universe size. */
export const MISSING_KEPT = 100;

/** The companies whose every part ended `not_found`, in the order they were asked for. */
export function missingCompanies(
  companies: readonly Company[],
  parts: readonly PartPointer[],
): MissingCompany[] {
  const byCompany = new Map<string, PartPointer[]>();
  for (const p of parts) byCompany.set(p.ticker, [...(byCompany.get(p.ticker) ?? []), p]);
  return companies.flatMap((c) => {
    const own = [...(byCompany.get(companyKey(c)) ?? [])].sort((a, b) => a.dataset.localeCompare(b.dataset));
    const first = own[0];
    if (first === undefined || own.some((p) => p.status !== 'not_found')) return [];
    return [{ company: companyAsTyped(c), answer: first.message ?? 'not found (404)' }];
  });
}

/** `1 company`, `2 companies`. */
export function companiesCount(n: number): string {
  return `${n} ${n === 1 ? 'company' : 'companies'}`;
}

/** One line naming them: `2 companies not found: ZZZZZ, QQQQQ` (`… and 3 more` past `shown`). */
export function missingLine(missing: readonly MissingCompany[], count = missing.length, shown = 20): string {
  const names = missing.slice(0, shown).map((m) => m.company);
  const more = count - names.length;
  return `${companiesCount(count)} not found: ${names.join(', ')}${more > 0 ? ` and ${more} more` : ''}`;
}

/** The reason a snapshot in which no company was found ends failed, with what to do. */
export function noneFoundMessage(missing: readonly MissingCompany[], count = missing.length): string {
  return (
    `no requested company was found (${missingLine(missing, count)}); nothing published, ` +
    '`latest` and the warehouse are unchanged. Check the tickers and CIKs ' +
    '(a CIK may be written 320193, 0000320193 or CIK0000320193)'
  );
}

/** A line per missing company, `not found: zzzzz: <the API's answer>`, then how many more. */
export function missingDetailLines(missing: readonly MissingCompany[], count = missing.length): string[] {
  const lines = missing.map((m) => `not found: ${m.company}: ${m.answer}`);
  if (count > missing.length)
    lines.push(`… and ${count - missing.length} more not found (the manifest's parts list them all)`);
  return lines;
}
