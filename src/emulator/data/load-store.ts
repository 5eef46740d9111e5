/**
 * loadStore: the emulator's data layer over a data dir. Start-up indexes which company has which
 * files and validates the JSON; each company is parsed and built on first use and cached (LRU).
 */
import type { Logger } from 'pino';
import { EmulatorDataError, toError } from '../errors.js';
import { silentLogger } from '../runtime.js';
import type { Clock } from '../runtime.js';
import type {
  Company,
  EmulatorStore,
  EvidenceLocation,
  FactRow,
  IssuerReferenceRow,
  SeriesBlob,
  SeriesMetadata,
} from '../store.js';
import { CompanyData, type CompanyIdentity, type CompanyInputs, type MetricSlice } from './rows/index.js';
import { loadFilingDocuments, loadLabelLinkbases, type FilingDocument } from './sec/index.js';
import { defaultDataDir, readDataFile, scanDataDir, type DataFile } from './sec/index.js';
import { issuerReference } from './rows/index.js';
import type { SeriesEntry } from './rows/index.js';
import { filedBy } from './rows/index.js';
import { CloneRewriter, mappedView } from './companies/index.js';
import { cikOfId } from './fields/index.js';
import { PromiseLru } from './lru.js';
import { buildRegistry, type RealCompany } from './companies/index.js';
import { parseCompanyFacts } from './sec/index.js';
import { planSynthetic, virtualFactRows } from './companies/index.js';

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
  /** Unused by the data (rows are deterministic); accepted for symmetry with the emulator options. */
  clock?: Clock;
  logger?: Logger;
}

/** What the search layer and tools need beyond EmulatorStore. */
export interface DataStore extends EmulatorStore {
  /** Absolute data dir served. */
  readonly dataDir: string;
  /** Parsed bundled filing documents of a company (synthetic clones: their source's). */
  filingDocuments(cik: string): Promise<readonly FilingDocument[]>;
  /** Synthetic clone → its source CIK; real companies map to themselves. */
  sourceCikOf(cik: string): string | undefined;
  /** The as-of date this view answers for; null = everything bundled. */
  asOf(): string | null;
  /** The same data as of `asOf` (null: everything); views share caches and close with the store. */
  at(asOf: string | null): DataStore;
  close(): Promise<void>;
}

interface Entry {
  company: Company;
  sourceCik: string;
  /** Synthetic clones: rewrites the source's rows to the clone's identity. */
  rewriter?: CloneRewriter;
  /** SYNBIG's row count. */
  largeRows?: number;
}

export async function loadStore(opts: LoadStoreOptions = {}): Promise<DataStore> {
  const logger = opts.logger ?? silentLogger();
  const started = performance.now();
  const layout = await scanDataDir(opts.dataDir ?? defaultDataDir());
  const registry = await buildRegistry(layout, logger, opts.validate ?? true);
  const realByCik = new Map<string, RealCompany>(registry.companies.map((c) => [c.cik, c]));

  const entries = new Map<string, Entry>();
  const byTicker = new Map<string, Entry>();
  const ordered: Company[] = [];
  const addEntry = (e: Entry): void => {
    entries.set(e.company.cik, e);
    ordered.push(e.company);
    for (const t of e.company.tickers) if (!byTicker.has(t)) byTicker.set(t, e);
  };
  for (const c of registry.companies) {
    addEntry({
      company: { cik: c.cik, ticker: c.ticker, tickers: c.tickers, name: c.name, synthetic: false },
      sourceCik: c.cik,
    });
  }
  const takenCiks = new Set([...registry.tickersMap.map((t) => t.cik), ...realByCik.keys()]);
  const takenTickers = new Set([...registry.tickersMap.map((t) => t.ticker), ...byTicker.keys()]);
  const withFacts = registry.companies.filter((c) => c.dataBytes > 0);
  const synthetic = Math.max(0, Math.floor(opts.synthetic ?? 0));
  const { plans, nextCik } = planSynthetic(synthetic, withFacts.length > 0 ? withFacts : registry.companies, takenCiks, takenTickers);
  const rewriter = (cik: string, ticker: string, name: string, sourceCik: string): CloneRewriter =>
    new CloneRewriter({ cik, ticker, name, sourceCik, sourceName: realByCik.get(sourceCik)?.name ?? '' });
  for (const p of plans) {
    addEntry({
      company: { cik: p.cik, ticker: p.ticker, tickers: [p.ticker], name: p.name, synthetic: true },
      sourceCik: p.sourceCik,
      rewriter: rewriter(p.cik, p.ticker, p.name, p.sourceCik),
    });
  }
  const largeRows = Math.max(0, Math.floor(opts.syntheticLargeRows ?? 0));
  if (largeRows > 0) {
    const largest = [...registry.companies].sort((a, b) => b.dataBytes - a.dataBytes)[0];
    if (largest !== undefined && !takenTickers.has('SYNBIG')) {
      const big = planSynthetic(1, [largest], new Set([...takenCiks, ...entries.keys()]), takenTickers, nextCik).plans[0];
      if (big !== undefined) {
        const name = `Synthetic Big Issuer (synthetic clone of ${largest.name}, ${largeRows} generated fact rows)`;
        addEntry({
          company: { cik: big.cik, ticker: 'SYNBIG', tickers: ['SYNBIG'], name, synthetic: true },
          sourceCik: largest.cik,
          rewriter: rewriter(big.cik, 'SYNBIG', name, largest.cik),
          largeRows,
        });
      }
    }
  }
  const documentFiles = new Map<string, DataFile>();
  for (const files of layout.filings.values()) for (const f of files) documentFiles.set(f.rel, f);

  const cacheSize = Math.max(1, opts.cacheSize ?? 12);
  const inputsCache = new PromiseLru<CompanyInputs>(Math.max(cacheSize, 16));
  const dataCache = new PromiseLru<CompanyData>(cacheSize);
  const bigRows = new PromiseLru<readonly FactRow[]>(2);

  const loadInputs = (cik: string): Promise<CompanyInputs> =>
    inputsCache.get(cik, async () => {
      const real = realByCik.get(cik);
      if (real === undefined) throw new Error(`no real company ${cik}`);
      const pre = registry.preparsed.get(cik);
      registry.preparsed.delete(cik);
      const companyfacts = pre ?? (real.companyfactsFile
        ? parseCompanyFacts((await readDataFile(real.companyfactsFile)).toString('utf8'), real.companyfactsFile.abs)
        : null);
      const sources = { cik, submissions: real.submissions, companyfacts, readme: registry.readme };
      const docs = await loadFilingDocuments(real.filingFiles, sources);
      const linkbaseLabels = await loadLabelLinkbases(real.filingFiles);
      return { cik, companyfacts, submissions: real.submissions, docs, linkbaseLabels };
    });

  const entryOf = (cik: string): Entry => {
    const e = entries.get(cik);
    if (e === undefined) throw new EmulatorDataError(`unknown company CIK ${cik}`);
    return e;
  };

  /** Inputs as of a date: what had been filed by the end of that day (null: everything). */
  const inputsAsOf = async (cik: string, asOf: string | null): Promise<CompanyInputs> => {
    const inputs = await loadInputs(cik);
    return asOf === null ? inputs : filedBy(inputs, asOf);
  };

  /** Built data of a real company as of a date (clones are views over their source's, see clone.ts). */
  const loadData = (cik: string, asOf: string | null): Promise<CompanyData> =>
    dataCache.get(asOf === null ? cik : `${cik}@${asOf}`, async () => {
      const e = entryOf(cik);
      const inputs = await inputsAsOf(cik, asOf);
      const t0 = performance.now();
      const identity: CompanyIdentity = { cik: e.company.cik, ticker: e.company.ticker, name: e.company.name };
      const data = new CompanyData(identity, inputs);
      logger.debug({ cik, rows: data.full.length, ms: Math.round(performance.now() - t0) }, 'company built');
      return data;
    });

  const slice = async <K extends keyof MetricSlice>(
    asOf: string | null,
    cik: string,
    key: K,
    metricId: string | undefined,
  ): Promise<MetricSlice[K]> => {
    const data = await loadData(entryOf(cik).sourceCik, asOf);
    return metricId === undefined ? data[key] : data.metricSlice(metricId)[key];
  };

  /** Rows of a dataset for any company: real ones as built, clones as rewritten views. */
  const view = async <K extends keyof MetricSlice>(
    asOf: string | null,
    cik: string,
    key: K,
    metricId: string | undefined,
    map: (rw: CloneRewriter) => (row: MetricSlice[K][number]) => MetricSlice[K][number],
  ): Promise<readonly MetricSlice[K][number][]> => {
    const e = entryOf(cik);
    const rows = await slice(asOf, cik, key, metricId);
    return e.rewriter === undefined ? rows : mappedView(rows, map(e.rewriter));
  };

  const asOfDate = (inputs: CompanyInputs): string | null => {
    let max: string | null = null;
    const see = (d: string | null | undefined): void => {
      if (d && (max === null || d > max)) max = d;
    };
    for (const o of inputs.companyfacts?.observations ?? []) see(o.filed);
    for (const f of inputs.submissions?.filings ?? []) see(f.filingDate);
    for (const d of inputs.docs) see(d.filedAt);
    return max;
  };

  logger.info(
    { dataDir: layout.dataDir, companies: ordered.length, synthetic: plans.length, ms: Math.round(performance.now() - started) },
    'emulator data indexed',
  );

  const seriesEntry = async (
    asOf: string | null,
    seriesId: string,
  ): Promise<{ entry: SeriesEntry; rewriter: CloneRewriter | undefined } | undefined> => {
    const cik = cikOfId(seriesId);
    const e = cik === undefined ? undefined : entries.get(cik);
    if (e === undefined) return undefined;
    const data = await loadData(e.sourceCik, asOf);
    const sourceId = e.rewriter === undefined ? seriesId : e.rewriter.sourceSeriesId(seriesId, data.seriesCatalog);
    const entry = sourceId === undefined ? undefined : data.series.get(sourceId);
    return entry === undefined ? undefined : { entry, rewriter: e.rewriter };
  };

  // Most rows first (companyfacts size, then documents), no more than the cache holds (more would
  // evict the first ones built).
  const factsBytes = (c: RealCompany): number => c.companyfactsFile?.bytes ?? 0;
  const bySize = [...registry.companies]
    .sort((a, b) => factsBytes(b) - factsBytes(a) || b.dataBytes - a.dataBytes)
    .slice(0, cacheSize);
  let closed = false;
  const warmCount = Math.max(0, Math.floor(opts.warm ?? 0));
  if (warmCount > 0) {
    const largest = bySize.slice(0, warmCount);
    // One at a time, after the current tick: start-up returns first, requests interleave between builds.
    void (async () => {
      for (const c of largest) {
        await new Promise((r) => setImmediate(r));
        if (closed) return;
        try {
          await loadData(c.cik, null);
        } catch (err) {
          logger.warn({ cik: c.cik, err: toError(err).message }, 'warm-up build failed');
        }
      }
    })();
  }

  const views = new Map<string, DataStore>();
  const at = (asOf: string | null): DataStore => (asOf === null ? store : (views.get(asOf) ?? makeView(asOf)));
  const makeView = (asOf: string | null): DataStore => {
    const v: DataStore = {
    dataDir: layout.dataDir,
    companies: () => ordered,
    warmUpOrder: () => bySize.map((c) => entryOf(c.cik).company),
    resolve(scope) {
      if (scope.ticker !== undefined) return byTicker.get(scope.ticker.trim().toUpperCase())?.company;
      if (scope.cik !== undefined) {
        const c = scope.cik.trim();
        if (!/^\d{1,10}$/.test(c)) return undefined;
        return entries.get(c.padStart(10, '0'))?.company;
      }
      return undefined;
    },
    async factsFull(cik, metricId) {
      const e = entryOf(cik);
      if (e.largeRows !== undefined) {
        const n = e.largeRows;
        const all = await bigRows.get(asOf === null ? cik : `${cik}@${asOf}`, async () =>
          virtualFactRows(await view(asOf, cik, 'full', undefined, (rw) => rw.fact), n),
        );
        if (metricId === undefined) return all;
        const out: FactRow[] = [];
        for (const r of all) if (r.metric_id === metricId) out.push(r);
        return out;
      }
      return view(asOf, cik, 'full', metricId, (rw) => rw.fact);
    },
    factsCore: (cik, metricId) => view(asOf, cik, 'core', metricId, (rw) => rw.fact),
    factsLatest: (cik, metricId) => view(asOf, cik, 'latest', metricId, (rw) => rw.fact),
    seriesCatalog: (cik, metricId) => view(asOf, cik, 'seriesCatalog', metricId, (rw) => rw.catalogRow),
    dimsCatalog: (cik, metricId) => slice(asOf, cik, 'dimsCatalog', metricId),
    evidence: (cik, metricId) => view(asOf, cik, 'evidence', metricId, (rw) => rw.evidence),
    async issuerReference(cik): Promise<IssuerReferenceRow> {
      const e = entryOf(cik);
      const inputs = await inputsAsOf(e.sourceCik, asOf);
      return issuerReference(e.company, inputs.submissions, asOfDate(inputs));
    },
    async seriesById(seriesId): Promise<SeriesMetadata | undefined> {
      const found = await seriesEntry(asOf, seriesId);
      if (found === undefined) return undefined;
      return found.rewriter ? found.rewriter.metadata(found.entry.metadata) : found.entry.metadata;
    },
    async seriesBlob(seriesId, version): Promise<SeriesBlob | undefined> {
      const found = await seriesEntry(asOf, seriesId);
      if (found === undefined || found.entry.metadata.serving.series_version !== version) return undefined;
      return found.rewriter ? found.rewriter.blob(found.entry.blob) : found.entry.blob;
    },
    async evidenceLocation(evidenceKey): Promise<EvidenceLocation | undefined> {
      const cik = cikOfId(evidenceKey);
      const e = cik === undefined ? undefined : entries.get(cik);
      if (e === undefined) return undefined;
      const data = await loadData(e.sourceCik, asOf);
      if (e.rewriter === undefined) return data.evidenceLocations.get(evidenceKey);
      const loc = data.evidenceLocations.get(e.rewriter.sourceEvidenceKey(evidenceKey));
      return loc === undefined ? undefined : e.rewriter.location(loc);
    },
    async readDocument(path): Promise<Buffer> {
      const f = documentFiles.get(path.replace(/\.gz$/, ''));
      if (f === undefined) throw new EmulatorDataError(`no bundled document ${path}`);
      return readDataFile(f);
    },
    async filingDocuments(cik) {
      const e = entryOf(cik);
      return (await inputsAsOf(e.sourceCik, asOf)).docs;
    },
    sourceCikOf: (cik) => entries.get(cik)?.sourceCik,
    asOf: () => asOf,
    at,
    close() {
      closed = true;
      dataCache.clear();
      inputsCache.clear();
      bigRows.clear();
      views.clear();
      return Promise.resolve();
    },
    };
    if (asOf !== null) views.set(asOf, v);
    return v;
  };
  const store = makeView(null);
  return store;
}
