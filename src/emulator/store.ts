/**
 * The seam between the emulator's data (built from SEC files, src/emulator/data/) and its HTTP layer
 * (src/emulator/server/). The HTTP layer validates requests, authenticates and limits; the store only
 * answers questions about companies. Rows are plain JSON-ready objects in the field order of the
 * interface (sections 2.2–2.9). URL fields hold absolute paths (`/api/evidence/…`); the HTTP layer
 * prefixes the public base URL when it serialises them.
 */
import type { components } from '../contract/openapi.gen.js';

/** A company known to the emulator (real or synthetic). */
export interface Company {
  /** Zero-padded 10-digit CIK. */
  cik: string;
  /** Current primary ticker, upper case, or null. */
  ticker: string | null;
  /** Every ticker that resolves to this company (upper case). */
  tickers: readonly string[];
  name: string;
  /** True for `--synthetic` clones (their names say so too). */
  synthetic: boolean;
}

/** Any JSON-ready row; every row schema of the contract allows extra fields too. */
export type Row = Record<string, unknown>;

/*
 * Row types are the contract's (src/contract/openapi.gen.ts, generated from src/contract/openapi.yaml), so a
 * contract change is a compile error here. Only where the emulator's row intentionally differs
 * from a schema is the difference stated, next to the reason.
 */
type Schema<K extends keyof components['schemas']> = components['schemas'][K];

/** The facts/full dimension fields, present on facts/full rows only (coreRow drops them). */
type DimensionFields = Pick<
  Schema<'FactRowFull'>,
  'dims_key' | 'axis_types' | 'dimension_path_label' | 'dims_path'
>;

/**
 * Fact row of section 2.2. One row type serves facts/full, core and latest, so is_consolidated is
 * on every row (the contract requires it only on latest and by-series answers) and the dimension
 * fields are optional (only facts/full rows carry them). Extra fields (derived Q4 rows'
 * `derived_from_*`) are allowed, as in the contract.
 */
export type FactRow = Schema<'ConsolidatedFactRow'> & Partial<DimensionFields>;

/**
 * Evidence row of section 2.6. The emulator adds the keys of the fact it proves (fact_key,
 * series_key, metric_id, period_key, dims_key, unit_signature, value_num), so a client can join
 * evidence to facts without a second lookup, and metric_id filters evidence like facts.
 *
 * URL paths the HTTP layer serves (src/emulator/server/routes/viewer.ts); the store builds URL fields
 * with exactly these absolute paths (data/fields/keys.ts), the HTTP layer prefixes the public base URL:
 * - evidence_url: `/api/evidence/<evidence_key>/open` (302 to viewer_url)
 * - viewer_url:   `/viewer/evidence/<evidence_key>` (the document with the figure highlighted)
 * - filing_url:   `/viewer/document/<documentPath>` (the whole document, no highlight)
 * - serving.blob_url: `/s/series/<series_id>/<series_version>`
 * `<evidence_key>` is what evidenceLocation() accepts; document_url stays the original sec.gov URL.
 */
export type EvidenceRow = Schema<'EvidenceRow'> &
  Pick<FactRow, 'fact_key' | 'series_key' | 'metric_id' | 'period_key' | 'unit_signature' | 'value_num'> & {
    dims_key: string | null;
  };

/** Issuer reference row of section 2.7. */
export type IssuerReferenceRow = Schema<'IssuerReferenceRow'>;

/** Series metadata of section 2.8 (series/batch items and search top_series). */
export type SeriesMetadata = Schema<'SeriesMetadata'>;

/** series/catalog row (field names are the emulator's, stated in the contract). */
export type SeriesCatalogRow = Schema<'SeriesCatalogRow'>;

/** dims/catalog row (field names are the emulator's, stated in the contract). */
export type DimsCatalogRow = Schema<'DimsCatalogRow'>;

/** The immutable series blob behind serving.blob_url. */
export type SeriesBlob = Schema<'SeriesBlob'>;

/** Where an evidence record points inside a bundled document, for the viewer. */
export interface EvidenceLocation {
  evidence: EvidenceRow;
  /** Path of the document relative to the data dir (without `.gz`), or null for xbrl-only evidence. */
  documentPath: string | null;
  start: number | null;
  end: number | null;
}

/**
 * Read-only questions the HTTP layer asks. Row arrays are in the order the interface prescribes
 * (facts newest period first, evidence newest filing first). Methods may load a company lazily on
 * first use and cache it, hence Promise results.
 * Row arrays of synthetic issuers are read-only Proxy views computed per index (a clone's rows
 * rewritten on access; SYNBIG's facts/full generated, e.g. 1,000,000 rows never held): `length`,
 * `rows[i]`, for-of, array methods and JSON.stringify work; never mutate a returned array, and
 * prefer one pass by index over copying it (a copy materialises every row).
 */
export interface EmulatorStore {
  /** Every company (real, then synthetic). */
  companies(): readonly Company[];
  /**
   * The real companies worth building ahead of requests, most expensive first (the largest), at most
   * as many as the store keeps built. Optional: without it, warm-up takes companies() in order.
   */
  warmUpOrder?(): readonly Company[];
  /** Resolves a ticker (case-insensitive) or a CIK (with or without zero padding); undefined if unknown. */
  resolve(scope: { ticker?: string; cik?: string }): Company | undefined;
  /** facts/full: every fact incl. dimensional rows, newest period first. */
  factsFull(cik: string, metricId?: string): Promise<readonly FactRow[]>;
  /** facts/core: consolidated facts, newest period first. */
  factsCore(cik: string, metricId?: string): Promise<readonly FactRow[]>;
  /** facts/latest: latest consolidated fact per series (before dei# exclusion and capping). */
  factsLatest(cik: string, metricId?: string): Promise<readonly FactRow[]>;
  seriesCatalog(cik: string, metricId?: string): Promise<readonly SeriesCatalogRow[]>;
  dimsCatalog(cik: string, metricId?: string): Promise<readonly DimsCatalogRow[]>;
  evidence(cik: string, metricId?: string): Promise<readonly EvidenceRow[]>;
  issuerReference(cik: string): Promise<IssuerReferenceRow>;
  /** series/batch lookups by series_id; undefined for unknown ids. */
  seriesById(seriesId: string): Promise<SeriesMetadata | undefined>;
  /** The immutable blob behind serving.blob_url; undefined for an unknown id or version. */
  seriesBlob(seriesId: string, version: number): Promise<SeriesBlob | undefined>;
  /** Viewer support: where the evidence points. */
  evidenceLocation(evidenceId: string): Promise<EvidenceLocation | undefined>;
  /** Raw bytes of a bundled document (path as in EvidenceLocation.documentPath). */
  readDocument(path: string): Promise<Buffer>;
  /** The as-of date this store answers for (filings filed later do not exist); null/absent = no cut. */
  asOf?(): string | null;
  /** The as-of date one company answers for (its own, `/_emulator/clock` `companies`); absent = asOf(). */
  asOfFor?(cik: string): string | null;
  /** A view of the same data as of a date (the emulator's clock, `/_emulator/clock`). Optional. */
  at?(asOf: string | null): EmulatorStore;
}
