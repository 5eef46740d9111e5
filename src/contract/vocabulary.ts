/**
 * The shared vocabulary of the interface (../shared/seed/filing-facts-api.md): documented bounds,
 * enumerations and identifier shapes that the client, the exporter and the emulator must agree on.
 * Imports nothing, so the emulator can depend on it without depending on the exporter.
 */

/** Documented request bounds (sections 4 and 8). */
export const LIMITS = {
  factsLatestLimit: { min: 1, max: 500 },
  seriesKeysPerCall: 100,
  seriesIdsPerCall: 100,
  fetchTopMax: 5,
  searchEntitiesLimit: { min: 1, max: 50 },
  searchEntitiesOffset: { min: 0, max: 200 },
  searchEntitiesQueryMin: 2,
  searchSeriesLimit: { min: 1, max: 50 },
  searchFilingsLimit: { min: 1, max: 50, crossCompanyMax: 25 },
  searchFilingsSeriesLimit: { min: 1, max: 12 },
  crossCompanyMinTerms: 2,
  queryMaxLength: 500,
  sandboxFactsLimit: { min: 1, max: 20 },
  sandboxSearchLimit: { min: 1, max: 10 },
} as const;

/** Section types of filing search chunks (4.9 `types`). */
export const CHUNK_TYPES = [
  'mda',
  'notes',
  'business',
  'risk',
  'legal',
  'properties',
  'market_risk',
  'controls',
  'compliance',
  'table_context',
] as const;

/** Entity kinds of the registry search (4.7 `types`). */
export const ENTITY_TYPES = ['metric', 'member', 'series'] as const;

/**
 * A ticker: the one rule of the API, the client, the exporter and the emulator. Any case on the
 * wire (the API matches case-insensitively); the exporter keeps it upper-cased, after checking the
 * raw text is ASCII (so no Unicode case mapping can turn a lookalike into another company's ticker).
 */
export const TICKER_PATTERN = /^[A-Za-z0-9.-]{1,20}$/;
/** A CIK as the API accepts it: 1 to 10 digits (zero padding optional). */
export const CIK_PATTERN = /^\d{1,10}$/;
/** A CIK in its zero-padded 10-digit form. */
export const CIK_PATTERN_10 = /^\d{10}$/;
/** A series key: sha256 hex. */
export const SERIES_KEY_PATTERN = /^[0-9a-f]{64}$/;
/** An XBRL concept id `<taxonomy>#<Concept>`. */
export const METRIC_ID_PATTERN = /^[A-Za-z0-9_.-]+#[A-Za-z0-9_.-]+$/;

/** Quota kinds and scopes (sections 7 and 8: the 429 quota body). */
export type QuotaKind = 'daily' | 'monthly';
export type QuotaScope = 'account' | 'api_key';
