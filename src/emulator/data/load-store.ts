/**
 * loadStore: the emulator's data layer over a data dir. Start-up indexes which company has which
 * files and validates the JSON; each company is parsed and built on first use and cached (LRU).
 */
import type { Logger } from 'pino';
import { toError } from '../errors.js';
import { silentLogger } from '../runtime.js';
import type { EmulatorClock } from '../runtime.js';
import { CompanyCache } from './company-cache.js';
import { restatementsByCik, type Restatement } from './restatement.js';
import { buildRegistry, CompanyIndex, type RealCompany } from './companies/index.js';
import { defaultDataDir, scanDataDir, type DataFile, type DataLayout } from './sec/index.js';
import { storeView, type DataStore, type StoreParts } from './store-view.js';

export type { DataStore } from './store-view.js';

export interface LoadStoreOptions {
  /** Directory in the layout of data/sec. @defaultValue the bundled data/sec of the package */
  dataDir?: string;
  /** Number of synthetic clones of the real companies. @defaultValue 0 */
  synthetic?: number;
  /** When > 0, adds SYNBIG whose facts/full has exactly this many rows. @defaultValue 0 */
  syntheticLargeRows?: number;
  /** Parse every companyfacts file at start-up so a broken one stops the start. @defaultValue true */
  validate?: boolean;
  /** Built companies kept in memory. @defaultValue 12 */
  cacheSize?: number;
  /**
   * Build this many of the largest companies in the background right after start-up, so their first
   * request is answered from memory. 0 disables (the emulator's own `warmUp` option builds every
   * company instead). @defaultValue 0
   */
  warm?: number;
  /** Facts of bundled companies restated by a later filing (restatement.ts). @defaultValue none */
  restatements?: readonly Restatement[];
  /** Unused by the data (rows are deterministic); accepted for symmetry with the emulator options. */
  clock?: EmulatorClock;
  logger?: Logger;
}

export async function loadStore(opts: LoadStoreOptions = {}): Promise<DataStore> {
  const logger = opts.logger ?? silentLogger();
  const started = performance.now();
  const layout = await scanDataDir(opts.dataDir ?? defaultDataDir());
  const registry = await buildRegistry(layout, logger, opts.validate ?? true);
  const companies = new CompanyIndex(registry, {
    synthetic: opts.synthetic ?? 0,
    syntheticLargeRows: opts.syntheticLargeRows ?? 0,
  });
  const cacheSize = Math.max(1, opts.cacheSize ?? 12);
  const restated = restatementsByCik(opts.restatements ?? [], (scope) => companies.resolve(scope));
  const cache = new CompanyCache(registry, companies, cacheSize, logger, restated);
  logger.info(
    {
      dataDir: layout.dataDir,
      companies: companies.ordered.length,
      synthetic: companies.syntheticCount,
      ms: Math.round(performance.now() - started),
    },
    'emulator data indexed',
  );

  const bySize = largestFirst(registry.companies, cacheSize);
  let closed = false;
  const warmCount = Math.max(0, Math.floor(opts.warm ?? 0));
  if (warmCount > 0) warmLargest(bySize.slice(0, warmCount), cache, () => closed, logger);

  const views = new Map<string, DataStore>();
  const parts: StoreParts = {
    dataDir: layout.dataDir,
    companies,
    cache,
    documentFiles: documentFilesOf(layout),
    warmUpOrder: () => bySize.map((c) => companies.entryOf(c.cik).company),
    at(asOf) {
      if (asOf === null) return store;
      let v = views.get(asOf);
      if (v === undefined) views.set(asOf, (v = storeView(parts, asOf)));
      return v;
    },
    close() {
      closed = true;
      cache.clear();
      views.clear();
      return Promise.resolve();
    },
  };
  const store = storeView(parts, null);
  return store;
}

/**
 * Most rows first (companyfacts size, then documents), no more than the cache holds (more would
 * evict the first ones built).
 */
function largestFirst(companies: readonly RealCompany[], cacheSize: number): RealCompany[] {
  const factsBytes = (c: RealCompany): number => c.companyfactsFile?.bytes ?? 0;
  return [...companies]
    .sort((a, b) => factsBytes(b) - factsBytes(a) || b.dataBytes - a.dataBytes)
    .slice(0, cacheSize);
}

/** One at a time, after the current tick: start-up returns first, requests interleave between builds. */
function warmLargest(
  largest: readonly RealCompany[],
  cache: CompanyCache,
  closed: () => boolean,
  logger: Logger,
): void {
  void (async () => {
    for (const c of largest) {
      await new Promise((r) => setImmediate(r));
      if (closed()) return;
      try {
        await cache.companyData(c.cik, null);
      } catch (err) {
        logger.warn({ cik: c.cik, err: toError(err).message }, 'warm-up build failed');
      }
    }
  })();
}

/** Bundled documents by their path relative to the data dir (without `.gz`), for the viewer. */
function documentFilesOf(layout: DataLayout): Map<string, DataFile> {
  const documentFiles = new Map<string, DataFile>();
  for (const files of layout.filings.values()) for (const f of files) documentFiles.set(f.rel, f);
  return documentFiles;
}
