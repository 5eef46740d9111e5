/**
 * The DataStore a caller holds: the answers of one as-of date (null: everything bundled) over the
 * store's shared company index and caches. Real companies answer with their built rows, synthetic
 * clones with read-only views rewritten to their identity, SYNBIG with its generated facts/full.
 */
import { EmulatorDataError } from '../errors.js';
import type {
  Company,
  EmulatorStore,
  EvidenceLocation,
  FactRow,
  IssuerReferenceRow,
  SeriesBlob,
  SeriesMetadata,
} from '../store.js';
import type { CompanyCache } from './company-cache.js';
import { mappedView, virtualFactRows, type CloneRewriter, type CompanyIndex } from './companies/index.js';
import { cikOfId } from './fields/index.js';
import { issuerReference, latestFilingDate, type MetricSlice, type SeriesEntry } from './rows/index.js';
import { readDataFile, type DataFile, type FilingDocument } from './sec/index.js';

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

/** What every view of one store shares. */
export interface StoreParts {
  dataDir: string;
  companies: CompanyIndex;
  cache: CompanyCache;
  /** Bundled documents by path relative to the data dir (without `.gz`). */
  documentFiles: ReadonlyMap<string, DataFile>;
  warmUpOrder(): readonly Company[];
  /** The view of a date (one per date, shared); null: the store itself. */
  at(asOf: string | null): DataStore;
  close(): Promise<void>;
}

type Dataset = keyof MetricSlice;
type RowOf<K extends Dataset> = MetricSlice[K][number];

export function storeView(parts: StoreParts, asOf: string | null): DataStore {
  const { companies, cache } = parts;
  const rows = <K extends Dataset>(
    cik: string,
    key: K,
    metricId: string | undefined,
    map: (rw: CloneRewriter) => (row: RowOf<K>) => RowOf<K>,
  ): Promise<readonly RowOf<K>[]> => rowsOf(parts, asOf, cik, key, metricId, map);
  return {
    dataDir: parts.dataDir,
    companies: () => companies.ordered,
    warmUpOrder: () => parts.warmUpOrder(),
    resolve: (scope) => companies.resolve(scope),
    factsFull: (cik, metricId) =>
      companies.entryOf(cik).largeRows === undefined
        ? rows(cik, 'full', metricId, (rw) => rw.fact)
        : synbigFacts(parts, asOf, cik, metricId),
    factsCore: (cik, metricId) => rows(cik, 'core', metricId, (rw) => rw.fact),
    factsLatest: (cik, metricId) => rows(cik, 'latest', metricId, (rw) => rw.fact),
    seriesCatalog: (cik, metricId) => rows(cik, 'seriesCatalog', metricId, (rw) => rw.catalogRow),
    dimsCatalog: (cik, metricId) => slice(parts, asOf, cik, 'dimsCatalog', metricId),
    evidence: (cik, metricId) => rows(cik, 'evidence', metricId, (rw) => rw.evidence),
    issuerReference: (cik) => issuerOf(parts, asOf, cik),
    seriesById: async (seriesId): Promise<SeriesMetadata | undefined> => {
      const found = await seriesEntry(parts, asOf, seriesId);
      if (found === undefined) return undefined;
      return found.rewriter ? found.rewriter.metadata(found.entry.metadata) : found.entry.metadata;
    },
    seriesBlob: async (seriesId, version): Promise<SeriesBlob | undefined> => {
      const found = await seriesEntry(parts, asOf, seriesId);
      if (found === undefined || found.entry.metadata.serving.series_version !== version) return undefined;
      return found.rewriter ? found.rewriter.blob(found.entry.blob) : found.entry.blob;
    },
    evidenceLocation: (evidenceKey) => evidenceLocation(parts, asOf, evidenceKey),
    readDocument: async (path): Promise<Buffer> => {
      const f = parts.documentFiles.get(path.replace(/\.gz$/, ''));
      if (f === undefined) throw new EmulatorDataError(`no bundled document ${path}`);
      return readDataFile(f);
    },
    filingDocuments: async (cik) => (await cache.inputsAsOf(companies.entryOf(cik).sourceCik, asOf)).docs,
    sourceCikOf: (cik) => companies.get(cik)?.sourceCik,
    asOf: () => asOf,
    at: (date) => parts.at(date),
    close: () => parts.close(),
  };
}

/** A dataset of the company whose data is built (a clone's source), whole or one metric's. */
async function slice<K extends Dataset>(
  parts: StoreParts,
  asOf: string | null,
  cik: string,
  key: K,
  metricId: string | undefined,
): Promise<MetricSlice[K]> {
  const data = await parts.cache.companyData(parts.companies.entryOf(cik).sourceCik, asOf);
  return metricId === undefined ? data[key] : data.metricSlice(metricId)[key];
}

/** Rows of a dataset for any company: real ones as built, clones as rewritten views. */
async function rowsOf<K extends Dataset>(
  parts: StoreParts,
  asOf: string | null,
  cik: string,
  key: K,
  metricId: string | undefined,
  map: (rw: CloneRewriter) => (row: RowOf<K>) => RowOf<K>,
): Promise<readonly RowOf<K>[]> {
  const e = parts.companies.entryOf(cik);
  const rows = await slice(parts, asOf, cik, key, metricId);
  return e.rewriter === undefined ? rows : mappedView(rows, map(e.rewriter));
}

/** SYNBIG's facts/full: generated from its source's rows, one list per as-of date. */
async function synbigFacts(
  parts: StoreParts,
  asOf: string | null,
  cik: string,
  metricId: string | undefined,
): Promise<readonly FactRow[]> {
  const n = parts.companies.entryOf(cik).largeRows ?? 0;
  const all = await parts.cache.bigRows.get(asOf === null ? cik : `${cik}@${asOf}`, async () =>
    virtualFactRows(await rowsOf(parts, asOf, cik, 'full', undefined, (rw) => rw.fact), n),
  );
  if (metricId === undefined) return all;
  const out: FactRow[] = [];
  for (const r of all) if (r.metric_id === metricId) out.push(r);
  return out;
}

async function issuerOf(parts: StoreParts, asOf: string | null, cik: string): Promise<IssuerReferenceRow> {
  const e = parts.companies.entryOf(cik);
  const inputs = await parts.cache.inputsAsOf(e.sourceCik, asOf);
  return issuerReference(e.company, inputs.submissions, latestFilingDate(inputs));
}

/** The series behind a series_id (its CIK names the company), with the clone's rewriter if any. */
async function seriesEntry(
  parts: StoreParts,
  asOf: string | null,
  seriesId: string,
): Promise<{ entry: SeriesEntry; rewriter: CloneRewriter | undefined } | undefined> {
  const cik = cikOfId(seriesId);
  const e = cik === undefined ? undefined : parts.companies.get(cik);
  if (e === undefined) return undefined;
  const data = await parts.cache.companyData(e.sourceCik, asOf);
  const sourceId =
    e.rewriter === undefined ? seriesId : e.rewriter.sourceSeriesId(seriesId, data.seriesCatalog);
  const entry = sourceId === undefined ? undefined : data.series.get(sourceId);
  return entry === undefined ? undefined : { entry, rewriter: e.rewriter };
}

async function evidenceLocation(
  parts: StoreParts,
  asOf: string | null,
  evidenceKey: string,
): Promise<EvidenceLocation | undefined> {
  const cik = cikOfId(evidenceKey);
  const e = cik === undefined ? undefined : parts.companies.get(cik);
  if (e === undefined) return undefined;
  const data = await parts.cache.companyData(e.sourceCik, asOf);
  if (e.rewriter === undefined) return data.evidenceLocations.get(evidenceKey);
  const loc = data.evidenceLocations.get(e.rewriter.sourceEvidenceKey(evidenceKey));
  return loc === undefined ? undefined : e.rewriter.location(loc);
}
