/**
 * The seam between the emulator's data (built from SEC files, src/emulator/data/) and its HTTP layer
 * (src/emulator/server/). The HTTP layer validates requests, authenticates and limits; the store only
 * answers questions about companies. Rows are plain JSON-ready objects in the field order of the
 * interface (sections 2.2–2.9). URL fields hold absolute paths (`/api/evidence/…`); the HTTP layer
 * prefixes the public base URL when it serialises them.
 */

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

export type Row = Record<string, unknown>;

/** Fact row fields of section 2.2 (plus the dimensional fields on facts/full). Extra fields allowed. */
export interface FactRow extends Row {
  fact_key: string;
  series_key: string;
  cik: string;
  current_ticker: string | null;
  metric_id: string;
  metric_label: string;
  period_key: string;
  period_kind: 'instant' | 'duration';
  period_start: string | null;
  period_end: string;
  period_end_year: number;
  period_end_quarter: number;
  unit_signature: string;
  unit_class: string;
  currency: string | null;
  value_num: string;
  value_scaled_int: string;
  scale: number;
  source_accession: string;
  source_form_type: string | null;
  source_is_amendment: boolean | null;
  source_is_current_filing_period: boolean | null;
  source_filed_at: string;
  evidence_key: string | null;
  evidence_url: string | null;
  is_consolidated: boolean;
}

/**
 * URL paths the HTTP layer serves (src/emulator/server/routes/viewer.ts); the store builds URL fields
 * with exactly these absolute paths (data/keys.ts), the HTTP layer prefixes the public base URL:
 * - evidence_url: `/api/evidence/<evidence_key>/open` (302 to viewer_url)
 * - viewer_url:   `/viewer/evidence/<evidence_key>` (the document with the figure highlighted)
 * - filing_url:   `/viewer/document/<documentPath>` (the whole document, no highlight)
 * - serving.blob_url: `/s/series/<series_id>/<series_version>`
 * `<evidence_key>` is what evidenceLocation() accepts; document_url stays the original sec.gov URL.
 */
export interface EvidenceRow extends Row {
  evidence_key: string;
  cik: string;
  source_accession: string;
  source_form_type: string | null;
  source_is_amendment: boolean | null;
  source_filed_at: string;
  filing_url: string | null;
  document_url: string | null;
  evidence_url: string | null;
  viewer_url: string | null;
  snippet_text: string | null;
  locator_type: 'html' | 'ixbrl' | 'xbrl' | null;
  html_start_offset: number | null;
  html_end_offset: number | null;
  document_name: string | null;
  document_sequence: string | null;
  section_title: string | null;
  highlight_payload_json: Record<string, unknown> | null;
}

export interface IssuerReferenceRow extends Row {
  cik: string;
  current_ticker: string | null;
  issuer_name: string | null;
  ipo_date: string | null;
  exchange: string | null;
  sector: string | null;
  industry: string | null;
  sic_code: string | null;
  as_of_date: string | null;
}

/** Series metadata of section 2.8 (series/batch items and search top_series). */
export interface SeriesMetadata extends Row {
  series_id: string;
  series_key: string;
  cik: string;
  ticker: string;
  current_ticker: string;
  company_name: string;
  metric_id: string;
  dims_hash: string;
  dims_key: string;
  unit_signature: string;
  title: string;
  subtitle: string;
  y_label: string;
  preferred_scale: string;
  series_kind: string;
  is_active: boolean;
  first_period_end: string;
  last_period_end: string;
  point_count: number;
  meaning_hint: string;
  meaning_disclaimer: string;
  meaning_tooltip: string;
  needs_meaning_tooltip: boolean;
  serving: {
    series_version: number;
    etag: string;
    points_count: number;
    first_period: string;
    last_period: string;
    built_at: string;
    blob_url: string;
  };
}

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
  seriesCatalog(cik: string, metricId?: string): Promise<readonly Row[]>;
  dimsCatalog(cik: string, metricId?: string): Promise<readonly Row[]>;
  evidence(cik: string, metricId?: string): Promise<readonly EvidenceRow[]>;
  issuerReference(cik: string): Promise<IssuerReferenceRow>;
  /** series/batch lookups by series_id; undefined for unknown ids. */
  seriesById(seriesId: string): Promise<SeriesMetadata | undefined>;
  /** The immutable blob behind serving.blob_url; undefined for an unknown id or version. */
  seriesBlob(seriesId: string, version: number): Promise<Row | undefined>;
  /** Viewer support: where the evidence points. */
  evidenceLocation(evidenceId: string): Promise<EvidenceLocation | undefined>;
  /** Raw bytes of a bundled document (path as in EvidenceLocation.documentPath). */
  readDocument(path: string): Promise<Buffer>;
  /** The as-of date this store answers for (filings filed later do not exist); null/absent = no cut. */
  asOf?(): string | null;
  /** A view of the same data as of a date (the emulator's clock, `/_emulator/clock`). Optional. */
  at?(asOf: string | null): EmulatorStore;
}
