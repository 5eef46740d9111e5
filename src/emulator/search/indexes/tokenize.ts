/**
 * One tokenizer for documents and queries, so both sides agree: lower case, split on anything that is
 * not a letter or digit, possessives dropped, Lucene's English stop words removed, then Harman's
 * "S" stemmer (1991) folds regular plurals (covenants → covenant, liabilities → liability). No
 * aggressive stemming: financial terms must stay distinguishable (operating ≠ operations).
 */

/** Lucene's classic English stop set (EnglishAnalyzer.ENGLISH_STOP_WORDS_SET). */
export const STOP_WORDS: ReadonlySet<string> = new Set([
  'a',
  'an',
  'and',
  'are',
  'as',
  'at',
  'be',
  'but',
  'by',
  'for',
  'if',
  'in',
  'into',
  'is',
  'it',
  'no',
  'not',
  'of',
  'on',
  'or',
  'such',
  'that',
  'the',
  'their',
  'then',
  'there',
  'these',
  'they',
  'this',
  'to',
  'was',
  'will',
  'with',
]);

const WORD_RE = /[\p{L}\p{N}]+/gu;

/** Harman's S-stemmer: ies→y (not eies/aies), es→e (not aes/ees/oes), s→'' (not us/ss). */
export function sStem(word: string): string {
  if (word.length <= 3) return word;
  if (word.endsWith('ies') && !word.endsWith('eies') && !word.endsWith('aies'))
    return `${word.slice(0, -3)}y`;
  if (word.endsWith('es') && !word.endsWith('aes') && !word.endsWith('ees') && !word.endsWith('oes')) {
    return word.slice(0, -1);
  }
  if (word.endsWith('s') && !word.endsWith('us') && !word.endsWith('ss')) return word.slice(0, -1);
  return word;
}

/** Normalises one raw word to its index term, or null for a stop word. */
export function normaliseTerm(word: string): string | null {
  const lower = word.toLowerCase();
  if (STOP_WORDS.has(lower)) return null;
  return sStem(lower);
}

/** Tokens of `text` in order (duplicates kept): what BM25 counts. */
export function tokenize(text: string): string[] {
  // Drop possessive 's / ’s before splitting so "Company’s" indexes as "company".
  const cleaned = text.replace(/['\u2019]s\b/gi, '');
  const out: string[] = [];
  for (const m of cleaned.matchAll(WORD_RE)) {
    const term = normaliseTerm(m[0]);
    if (term !== null) out.push(term);
  }
  return out;
}

/** Distinct query terms in first-seen order (the unit of the "at least 2 terms" rule). */
export function queryTerms(query: string): string[] {
  return [...new Set(tokenize(query))];
}
