/**
 * Okapi BM25 as SQLite FTS5's bm25() computes it (k1 = 1.2, b = 0.75, idf = ln((N − n + 0.5) /
 * (n + 0.5)) floored at 1e-6, document length = number of tokens), over pre-tokenized documents.
 * Corpus statistics (N, n, average length) cover the whole corpus whatever the filter, as FTS5's do
 * whatever the WHERE clause. Our own ~80 lines rather than MiniSearch: MiniSearch normalises by the
 * number of distinct terms and multiplies by the number of matched query terms, so its scores are
 * not BM25 (measured in docs/decisions.md, Search). test/emulator/emulator-search-bm25.test.ts checks the
 * scores against the formula on a hand-made corpus.
 */

export interface Bm25Params {
  /** Term-frequency saturation. @defaultValue 1.2 */
  k1?: number;
  /** Length normalisation. @defaultValue 0.75 */
  b?: number;
}

export interface Bm25Hit {
  id: number;
  /** BM25 relevance, higher is better (callers negate it for the interface's "lower is better"). */
  bm25: number;
  /** Distinct query terms found in the document. */
  matched: string[];
}

/** FTS5 floors non-positive idf (terms in more than half the documents) at this value. */
export const MIN_IDF = 1e-6;

interface Posting {
  ids: Int32Array;
  tfs: Int32Array;
}

export class Bm25Index {
  private readonly postings = new Map<string, Posting>();
  private readonly lengths: Float64Array;
  private readonly avgLength: number;
  private readonly k1: number;
  private readonly b: number;

  /** `docs` hold already-normalised tokens (see tokenize.ts); ids are dense 0…N−1. */
  constructor(docs: ReadonlyArray<{ id: number; tokens: readonly string[] }>, params: Bm25Params = {}) {
    this.k1 = params.k1 ?? 1.2;
    this.b = params.b ?? 0.75;
    this.lengths = new Float64Array(docs.length);
    const building = new Map<string, { ids: number[]; tfs: number[] }>();
    let total = 0;
    for (const doc of docs) {
      if (!Number.isInteger(doc.id) || doc.id < 0 || doc.id >= docs.length) {
        throw new RangeError(`BM25 document id ${doc.id} is outside 0..${docs.length - 1}`);
      }
      this.lengths[doc.id] = doc.tokens.length;
      total += doc.tokens.length;
      const tf = new Map<string, number>();
      for (const t of doc.tokens) tf.set(t, (tf.get(t) ?? 0) + 1);
      for (const [term, n] of tf) {
        let p = building.get(term);
        if (!p) building.set(term, (p = { ids: [], tfs: [] }));
        p.ids.push(doc.id);
        p.tfs.push(n);
      }
    }
    for (const [term, p] of building) {
      this.postings.set(term, { ids: Int32Array.from(p.ids), tfs: Int32Array.from(p.tfs) });
    }
    this.avgLength = docs.length > 0 ? total / docs.length : 0;
  }

  get size(): number {
    return this.lengths.length;
  }

  /** Number of distinct terms in the index. */
  get vocabulary(): number {
    return this.postings.size;
  }

  /** FTS5's idf of `term`; 0 for a term in no document. */
  idf(term: string): number {
    const n = this.postings.get(term)?.ids.length ?? 0;
    if (n === 0) return 0;
    const N = this.lengths.length;
    return Math.max(MIN_IDF, Math.log((N - n + 0.5) / (n + 0.5)));
  }

  /**
   * Documents holding any of `terms` (OR), best first (ties: lower id first); `accept` filters by id
   * before scoring, which never changes another document's score.
   */
  search(terms: readonly string[], accept?: (id: number) => boolean): Bm25Hit[] {
    const distinct = [...new Set(terms.filter((t) => t.length > 0))];
    const scores = new Map<number, { bm25: number; matched: string[] }>();
    const { k1, b, avgLength } = this;
    for (const term of distinct) {
      const p = this.postings.get(term);
      if (!p) continue;
      const idf = this.idf(term);
      for (let i = 0; i < p.ids.length; i++) {
        const id = p.ids[i] as number;
        if (accept && !accept(id)) continue;
        const tf = p.tfs[i] as number;
        const len = this.lengths[id] as number;
        const s = (idf * (tf * (k1 + 1))) / (tf + k1 * (1 - b + (b * len) / (avgLength || 1)));
        const entry = scores.get(id);
        if (entry) {
          entry.bm25 += s;
          entry.matched.push(term);
        } else scores.set(id, { bm25: s, matched: [term] });
      }
    }
    const hits: Bm25Hit[] = [];
    for (const [id, e] of scores) hits.push({ id, bm25: e.bm25, matched: e.matched });
    return hits.sort((x, y) => y.bm25 - x.bm25 || x.id - y.id);
  }
}
