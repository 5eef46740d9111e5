/**
 * The chunk corpus: every bundled 10-K/10-Q document cut into classified chunks (chunker.ts), with
 * the stable keys and review metadata a search result carries. Built once per emulator, lazily.
 */
import { createHash } from 'node:crypto';
import { chunkDocument, type RawChunk } from './chunker.js';
import { readDataFile } from '../../data/index.js';
import type { ListedFiling } from './filing-list.js';
import { extractBlocks } from './html-blocks.js';
import { classifyBlocks } from './sections.js';
import { reviewFor, type ChunkReview } from './review.js';

export interface Chunk extends RawChunk {
  /** Position in the corpus: the BM25 document id. */
  ordinal: number;
  /** `<accession>#<NNNN>`: readable, stable while the bundled document is unchanged. */
  chunkId: string;
  /** sha256 hex of document path and offsets: the stable public key of the passage. */
  resultKey: string;
  cik: string;
  /** Ticker the document was bundled under (the filing's ticker). */
  ticker: string;
  /** The company's current ticker. */
  currentTicker: string | null;
  companyName: string | null;
  accession: string;
  formType: string;
  filedAt: string | null;
  /** Document path relative to the data dir (viewer path). */
  documentPath: string;
  review: ChunkReview;
}

export interface Corpus {
  chunks: readonly Chunk[];
  documents: readonly ListedFiling[];
  /** Milliseconds spent reading, parsing and chunking. */
  buildMs: number;
}

/** Forms whose Item/Part structure the classifier knows. */
const SUPPORTED_FORM = /^10-[KQ]/i;

export async function buildCorpus(
  documents: readonly ListedFiling[],
  company: (doc: ListedFiling) => { name: string | null; currentTicker: string | null },
): Promise<Corpus> {
  const started = performance.now();
  const chunks: Chunk[] = [];
  for (const doc of documents) {
    if (!SUPPORTED_FORM.test(doc.form)) continue;
    const raw = await readDataFile(doc.file);
    const pieces = chunkDocument(classifyBlocks(extractBlocks(raw), doc.form));
    const { name, currentTicker } = company(doc);
    pieces.forEach((piece, i) => {
      const resultKey = createHash('sha256')
        .update(`${doc.cik}|${doc.accession}|${doc.path}|${piece.start}|${piece.end}`)
        .digest('hex');
      chunks.push({
        ...piece,
        ordinal: chunks.length,
        chunkId: `${doc.accession}#${String(i + 1).padStart(4, '0')}`,
        resultKey,
        cik: doc.cik,
        ticker: doc.ticker,
        currentTicker,
        companyName: name,
        accession: doc.accession,
        formType: doc.form,
        filedAt: doc.filedAt,
        documentPath: doc.path,
        review: reviewFor(resultKey, piece.confidence, doc.filedAt),
      });
    });
  }
  return { chunks, documents, buildMs: performance.now() - started };
}
