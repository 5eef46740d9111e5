/**
 * The search side of one emulator: the chunk corpus and its BM25 index (built lazily on the first
 * filing search, ~1 s for the bundled corpus, shared by concurrent first requests), the entity
 * registry (built lazily on the first entity/series search or series suggestion), and company
 * resolution for search scopes (the store's companies, then companies known only from bundled
 * filing documents).
 */
import type { Logger } from '../runtime.js';
import { silentLogger } from '../runtime.js';
import type { EmulatorStore } from '../store.js';
import { buildCorpus } from './chunks/index.js';
import { listFilingDocuments, type ListedFiling } from './chunks/index.js';
import { EntityRegistry } from './indexes/index.js';
import { FilingIndex } from './indexes/index.js';

/** A company a search can be scoped to. */
export interface SearchCompany {
  cik: string;
  ticker: string | null;
  name: string | null;
}

export interface SearchServiceOptions {
  store: EmulatorStore;
  /** Data dir in the layout of data/sec; filing documents are read from `<dataDir>/filings`. */
  dataDir: string;
  logger?: Logger;
  /** A chunk is `is_fresh` when its filing is at most this many days older than the clock. @defaultValue 365 */
  freshDays?: number;
}

/** Default of SearchServiceOptions.freshDays. */
export const FRESH_DAYS = 365;

export class SearchService {
  readonly store: EmulatorStore;
  readonly freshDays: number;
  private readonly dataDir: string;
  private readonly logger: Logger;
  private filingIndex: Promise<FilingIndex> | undefined;
  private entityRegistry: EntityRegistry | undefined;
  /** Companies known from filing documents, by CIK and by upper-case ticker. */
  private readonly docCompanies = new Map<string, SearchCompany>();

  constructor(opts: SearchServiceOptions) {
    this.store = opts.store;
    this.dataDir = opts.dataDir;
    this.logger = opts.logger ?? silentLogger();
    this.freshDays = opts.freshDays ?? FRESH_DAYS;
  }

  /** The BM25 index over every bundled filing chunk; built once, on first use. */
  filings(): Promise<FilingIndex> {
    this.filingIndex ??= this.buildFilingIndex().catch((err: unknown) => {
      this.filingIndex = undefined; // a failed build may be retried by the next request
      throw err;
    });
    return this.filingIndex;
  }

  /** The metric/member/series registry; company shards load on first use. */
  registry(): EntityRegistry {
    this.entityRegistry ??= new EntityRegistry(this.store);
    return this.entityRegistry;
  }

  /** Builds the filing index now (bench, or a warm start). */
  async warm(): Promise<void> {
    await this.filings();
  }

  /**
   * A search-scope company: the store's, else one known from bundled filing documents (those are
   * only known once filings() has resolved).
   */
  resolveCompany(q: { ticker?: string; cik?: string }): SearchCompany | undefined {
    const c = this.store.resolve(q);
    if (c) return { cik: c.cik, ticker: c.ticker, name: c.name };
    if (q.ticker !== undefined) return this.docCompanies.get(`T:${q.ticker.trim().toUpperCase()}`);
    if (q.cik !== undefined && /^\d{1,10}$/.test(q.cik.trim())) {
      return this.docCompanies.get(`C:${q.cik.trim().padStart(10, '0')}`);
    }
    return undefined;
  }

  private async buildFilingIndex(): Promise<FilingIndex> {
    const started = performance.now();
    const documents = await listFilingDocuments(this.dataDir);
    const listMs = performance.now() - started;
    for (const d of documents) {
      const known = this.store.resolve({ cik: d.cik });
      const company: SearchCompany = known
        ? { cik: known.cik, ticker: known.ticker, name: known.name }
        : { cik: d.cik, ticker: d.ticker, name: d.registrantName };
      this.docCompanies.set(`C:${d.cik}`, company);
      this.docCompanies.set(`T:${d.ticker}`, company);
    }
    const corpus = await buildCorpus(documents, (d: ListedFiling) => {
      const c = this.resolveCompany({ cik: d.cik });
      return { name: c?.name ?? d.registrantName, currentTicker: c?.ticker ?? d.ticker };
    });
    const index = new FilingIndex(corpus);
    this.logger.info(
      {
        documents: documents.length,
        chunks: corpus.chunks.length,
        listMs: Math.round(listMs),
        corpusMs: Math.round(corpus.buildMs),
        indexMs: Math.round(index.buildMs),
        totalMs: Math.round(performance.now() - started),
      },
      'emulator search: filing index built',
    );
    return index;
  }
}

/**
 * One SearchService per store: route modules are shared constants, and an emulator started with an
 * already loaded store (tests) reuses the indexes too. The clock is not part of it: every request
 * passes its emulator's clock.
 */
const services = new WeakMap<EmulatorStore, SearchService>();

export function searchServiceFor(deps: {
  store: EmulatorStore;
  logger: Logger;
  dataDir: string;
}): SearchService {
  let s = services.get(deps.store);
  if (!s) {
    s = new SearchService({ store: deps.store, logger: deps.logger, dataDir: deps.dataDir });
    services.set(deps.store, s);
  }
  return s;
}
