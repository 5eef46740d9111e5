/**
 * The BM25 index over the chunk corpus. Matching follows SQLite FTS5's implicit AND: a chunk matches
 * when it holds every term of the query, or every term of one alternative (legal expansions). Scores
 * are BM25 over the union of all terms, returned the interface's way: negative, lower is better
 * (score = −bm25, like FTS5's bm25()).
 */
import { Bm25Index } from './bm25.js';
import type { DataFile } from '../../data/index.js';
import type { Chunk, Corpus } from '../chunks/index.js';
import { tokenize } from './tokenize.js';

export interface ChunkHit {
  chunk: Chunk;
  /** −BM25: lower is better. */
  score: number;
  /** Distinct index terms found in the chunk. */
  matched: readonly string[];
}

export interface IndexQuery {
  /** Distinct terms that must all match (the user's query). */
  terms: readonly string[];
  /** Alternatives, each a list of terms that must all match (legal expansion phrases). */
  alternatives?: readonly (readonly string[])[];
  /** Filter applied after scoring (scope, dates, types, confidence). */
  accept?: (chunk: Chunk) => boolean;
}

export class FilingIndex {
  private readonly bm25: Bm25Index;
  private readonly byResultKey = new Map<string, Chunk>();
  readonly buildMs: number;

  constructor(readonly corpus: Corpus) {
    const started = performance.now();
    this.bm25 = new Bm25Index(
      corpus.chunks.map((c) => ({
        id: c.ordinal,
        tokens: tokenize(c.heading ? `${c.heading}\n${c.text}` : c.text),
      })),
    );
    for (const c of corpus.chunks) this.byResultKey.set(c.resultKey, c);
    this.buildMs = performance.now() - started;
  }

  /** The chunk with this result_key (the viewer's lookup). */
  chunk(resultKey: string): Chunk | undefined {
    return this.byResultKey.get(resultKey);
  }

  /** Absolute file of a chunk's document (may end in `.gz`). */
  documentFile(chunk: Chunk): DataFile | undefined {
    return this.corpus.documents.find((d) => d.path === chunk.documentPath)?.file;
  }

  get size(): number {
    return this.bm25.size;
  }

  search(q: IndexQuery): ChunkHit[] {
    const groups = [q.terms, ...(q.alternatives ?? [])].filter((g) => g.length > 0);
    const all = [...new Set(groups.flat())];
    const chunks = this.corpus.chunks;
    const accept = q.accept;
    const hits = this.bm25.search(all, accept ? (id) => accept(chunks[id] as Chunk) : undefined);
    const out: ChunkHit[] = [];
    for (const h of hits) {
      const matched = new Set(h.matched);
      if (!groups.some((g) => g.every((t) => matched.has(t)))) continue;
      const chunk = chunks[h.id];
      if (chunk) out.push({ chunk, score: -h.bm25, matched: h.matched });
    }
    return out;
  }
}
