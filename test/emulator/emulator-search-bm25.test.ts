/**
 * The search building blocks without HTTP: tokenizer, BM25 scores against the formula (FTS5's
 * bm25()), AND matching with alternatives, legal expansion, date helpers, review derivation.
 */
import { describe, expect, it } from 'vitest';
import { Bm25Index, MIN_IDF } from '../../src/emulator/search/indexes/bm25.js';
import { parseAfter, yearsBefore } from '../../src/emulator/search/query/dates.js';
import { expandLegal } from '../../src/emulator/search/query/legal-terms.js';
import { reviewFor } from '../../src/emulator/search/chunks/review.js';
import { preview } from '../../src/emulator/search/query/snippet.js';
import { queryTerms, sStem, tokenize } from '../../src/emulator/search/indexes/tokenize.js';

/** Okapi BM25 straight from its definition, with FTS5's idf. */
function referenceBm25(docs: string[][], query: string[], id: number, k1 = 1.2, b = 0.75): number {
  const N = docs.length;
  const avg = docs.reduce((n, d) => n + d.length, 0) / N;
  const doc = docs[id] ?? [];
  let score = 0;
  for (const term of new Set(query)) {
    const n = docs.filter((d) => d.includes(term)).length;
    if (n === 0) continue;
    const idf = Math.max(1e-6, Math.log((N - n + 0.5) / (n + 0.5)));
    const tf = doc.filter((t) => t === term).length;
    if (tf === 0) continue;
    score += (idf * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * doc.length) / avg));
  }
  return score;
}

const CORPUS = [
  'The Company is subject to a going concern uncertainty and substantial doubt about liquidity.',
  'Revenue increased due to higher iPhone sales in Greater China and Europe.',
  'Covenants under the credit facility require a minimum interest coverage ratio; covenants were met.',
  'Legal proceedings: the Company is a defendant in litigation alleging patent infringement.',
  'Foreign exchange rate risk and interest rate risk are managed with derivative instruments.',
  'Gross margin decreased because of product mix and foreign exchange rate changes.',
].map((text) => tokenize(text));

describe('tokenizer', () => {
  it('lower-cases, drops stop words and possessives, folds regular plurals', () => {
    expect(tokenize("The Company's covenants AND liabilities of the Companies")).toEqual([
      'company',
      'covenant',
      'liability',
      'company',
    ]);
    expect(sStem('business')).toBe('business');
    expect(sStem('status')).toBe('status');
    expect(sStem('processes')).toBe('processe');
    expect(queryTerms('risk risks RISK')).toEqual(['risk']);
  });
});

describe('BM25', () => {
  const index = new Bm25Index(CORPUS.map((tokens, id) => ({ id, tokens })));

  it('scores every document exactly as the BM25 formula does', () => {
    for (const q of [
      'interest rate risk',
      'foreign exchange rate',
      'going concern substantial doubt',
      'covenants',
    ]) {
      const terms = queryTerms(q);
      const hits = index.search(terms);
      expect(hits.length).toBeGreaterThan(0);
      for (const h of hits) expect(h.bm25).toBeCloseTo(referenceBm25(CORPUS, terms, h.id), 12);
      for (let i = 1; i < hits.length; i++) expect(hits[i - 1]!.bm25).toBeGreaterThanOrEqual(hits[i]!.bm25);
    }
  });

  it('ranks the document about the query first and reports matched terms', () => {
    const [top] = index.search(queryTerms('interest rate risk'));
    expect(top?.id).toBe(4);
    expect(new Set(top?.matched)).toEqual(new Set(['interest', 'rate', 'risk']));
  });

  it('floors the idf of terms in more than half the documents (as FTS5 does)', () => {
    const common = new Bm25Index([['a1'], ['a1'], ['a1'], ['b1']].map((tokens, id) => ({ id, tokens })));
    expect(common.idf('a1')).toBe(MIN_IDF);
    expect(common.idf('b1')).toBeCloseTo(Math.log(3.5 / 1.5), 12);
  });

  it('filters without changing the scores of the documents it keeps', () => {
    const terms = queryTerms('foreign exchange rate');
    const all = index.search(terms);
    const only5 = index.search(terms, (id) => id === 5);
    expect(only5.map((h) => h.id)).toEqual([5]);
    expect(only5[0]?.bm25).toBe(all.find((h) => h.id === 5)?.bm25);
  });
});

describe('legal expansion', () => {
  it('expands going concern into its standard wordings', () => {
    const terms = expandLegal('going concern');
    expect(terms).toContain('substantial doubt');
    expect(terms).not.toContain('going concern');
    expect(expandLegal('revenue growth')).toEqual([]);
  });

  it('expands covenants and material weakness families', () => {
    expect(expandLegal('covenants')).toContain('event of default');
    expect(expandLegal('material weakness')).toContain('internal control over financial reporting');
  });
});

describe('dates and review', () => {
  it('parses after as a date, a relative window or all', () => {
    expect(parseAfter('2024-01-31')).toEqual({ kind: 'date', date: '2024-01-31' });
    expect(parseAfter('5y')).toEqual({ kind: 'relative', years: 5, text: '5y' });
    expect(parseAfter('all')).toEqual({ kind: 'all' });
    for (const bad of ['0y', '51y', '2024-02-30', 'yesterday', 3])
      expect(() => parseAfter(bad)).toThrow(/after must be/);
    expect(yearsBefore(Date.parse('2026-11-22T10:00:00Z'), 3)).toBe('2023-11-22');
  });

  it('derives manual_review deterministically from confidence and result_key', () => {
    expect(reviewFor('00'.padEnd(64, '0'), 0.3, '2025-01-01').status).toBe('needs_review');
    expect(reviewFor('05'.padEnd(64, '0'), 0.95, '2025-01-01')).toMatchObject({
      status: 'needs_review',
      reviewer: null,
    });
    expect(reviewFor('0b'.padEnd(64, '0'), 0.95, '2025-01-01')).toMatchObject({ status: 'rejected' });
    expect(reviewFor('ff'.padEnd(64, '0'), 0.95, '2025-01-01')).toEqual({
      status: 'verified',
      reviewer: 'emulator-review',
      note: null,
      reviewed_at: '2025-01-03T15:00:00.000Z',
    });
  });

  it('centres the preview on the first matched term', () => {
    const text = `${'Lorem ipsum dolor sit amet. '.repeat(30)}The covenant was waived. ${'More text here. '.repeat(20)}`;
    const p = preview(text, new Set(['covenant']));
    expect(p).toContain('covenant was waived');
    expect(p.startsWith('…')).toBe(true);
    expect(p.length).toBeLessThanOrEqual(242);
  });
});
