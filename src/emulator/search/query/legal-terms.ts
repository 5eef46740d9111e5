/**
 * Legal-domain expansion for `legal: true` (section 4.9). A query that mentions one phrase of a
 * family also searches the family's other phrases (e.g. "going concern" → "substantial doubt"),
 * because filings state the same condition in several standard wordings. Each phrase is an
 * alternative match: a chunk matches when it holds all terms of the query or of any expansion.
 */
import { queryTerms } from '../indexes/index.js';

const FAMILIES: readonly (readonly string[])[] = [
  ['going concern', 'substantial doubt', 'ability to continue as a going concern'],
  ['material weakness', 'significant deficiency', 'internal control over financial reporting', 'restatement'],
  ['covenant', 'debt covenant', 'financial covenant', 'covenant compliance', 'event of default', 'waiver'],
  ['litigation', 'legal proceedings', 'lawsuit', 'class action', 'plaintiff', 'settlement'],
  ['investigation', 'subpoena', 'regulatory inquiry', 'enforcement action', 'consent decree'],
  ['antitrust', 'competition law', 'anticompetitive', 'monopolization'],
  [
    'contingency',
    'loss contingency',
    'contingent liability',
    'accrual for losses',
    'reasonably possible loss',
  ],
  ['impairment', 'goodwill impairment', 'asset impairment', 'write-down'],
  ['indemnification', 'indemnify', 'indemnity', 'hold harmless'],
  ['bankruptcy', 'insolvency', 'chapter 11', 'reorganization'],
  ['default', 'event of default', 'cross-default', 'acceleration'],
  ['patent infringement', 'intellectual property litigation', 'infringement claim'],
  ['data breach', 'cybersecurity incident', 'unauthorized access', 'privacy regulation'],
  ['tax dispute', 'uncertain tax position', 'state aid', 'tax audit'],
  ['sanction', 'export control', 'trade restriction', 'tariff'],
];

/** Distinct query-term lists of each family phrase, precomputed. */
const PHRASES = FAMILIES.map((family) => family.map((phrase) => ({ phrase, terms: queryTerms(phrase) })));

/**
 * The expansion phrases of `query` (in family order, without the query itself): families whose
 * any phrase has all its terms in the query.
 */
export function expandLegal(query: string): string[] {
  const present = new Set(queryTerms(query));
  const out: string[] = [];
  const normalisedQuery = queryTerms(query).join(' ');
  for (const family of PHRASES) {
    if (!family.some((p) => p.terms.length > 0 && p.terms.every((t) => present.has(t)))) continue;
    for (const p of family) {
      if (p.terms.join(' ') === normalisedQuery || out.includes(p.phrase)) continue;
      out.push(p.phrase);
    }
  }
  return out;
}
