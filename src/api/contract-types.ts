/**
 * Friendly names for the types generated from src/api/openapi.yaml (src/api/openapi.gen.ts), plus the
 * operation table that ties each operation id (`facts/full`, …) to its request and response types.
 * Regenerate the generated file with `npm run contract` after editing the YAML.
 */
import type { components, operations } from './openapi.gen.js';
import type { RateLimitState } from '../types.js';

type S = components['schemas'];

// ------------------------------------------------------------------ rows
export type FactRow = S['FactRow'];
export type ConsolidatedFactRow = S['ConsolidatedFactRow'];
export type FactRowFull = S['FactRowFull'];
export type EvidenceRow = S['EvidenceRow'];
export type IssuerReferenceRow = S['IssuerReferenceRow'];
export type SeriesMetadata = S['SeriesMetadata'];
export type SeriesServing = S['SeriesServing'];
export type SeriesCatalogRow = S['SeriesCatalogRow'];
export type DimsCatalogRow = S['DimsCatalogRow'];
export type DimsCatalogMember = S['DimsCatalogMember'];
export type EntitySearchResult = S['EntitySearchResult'];
export type ChunkResult = S['ChunkResult'];
export type ManualReview = S['ManualReview'];
export type SeriesSearchResult = S['SeriesSearchResult'];
export type SeriesBlob = S['SeriesBlob'];
export type SeriesBlobPoint = S['SeriesBlobPoint'];

// ------------------------------------------------------------------ envelopes
export type FactsEnvelope = S['FactsEnvelope'];
export type FactsFullEnvelope = S['FactsFullEnvelope'];
export type FactsLatestEnvelope = S['FactsLatestEnvelope'];
export type FactsLatestBySeriesEnvelope = S['FactsLatestBySeriesEnvelope'];
export type FactsBySeriesEnvelope = S['FactsBySeriesEnvelope'];
export type FactsFullBySeriesEnvelope = S['FactsFullBySeriesEnvelope'];
export type EvidenceEnvelope = S['EvidenceEnvelope'];
export type IssuerReferenceEnvelope = S['IssuerReferenceEnvelope'];
export type SeriesBatchEnvelope = S['SeriesBatchEnvelope'];
export type SeriesCatalogEnvelope = S['SeriesCatalogEnvelope'];
export type DimsCatalogEnvelope = S['DimsCatalogEnvelope'];
export type EntitySearchEnvelope = S['EntitySearchEnvelope'];
export type FilingSearchEnvelope = S['FilingSearchEnvelope'];
export type SeriesSearchEnvelope = S['SeriesSearchEnvelope'];
/** The sandbox search answers with the filing search envelope (company-scoped). */
export type SandboxSearchEnvelope = S['FilingSearchEnvelope'];
export type SandboxFactsEnvelope = S['SandboxFactsEnvelope'];
export type TelemetryAccepted = S['TelemetryAccepted'];

// ------------------------------------------------------------------ error bodies
export type ErrorBody = S['ErrorBody'];
export type RateLimitBody = S['RateLimitBody'];
export type QuotaBody = S['QuotaBody'];

// ------------------------------------------------------------------ requests
export type CompanyRequest = S['CompanyRequest'];
export type FactsLatestRequest = S['FactsLatestRequest'];
export type BySeriesRequest = S['BySeriesRequest'];
export type IssuerRequest = S['IssuerRequest'];
export type SearchScope = S['SearchScope'];
export type SearchEntitiesRequest = S['SearchEntitiesRequest'];
export type SearchSeriesRequest = S['SearchSeriesRequest'];
export type SearchFilingsRequest = S['SearchFilingsRequest'];
export type SeriesBatchRequest = S['SeriesBatchRequest'];
export type TelemetryProofOpenRequest = S['TelemetryProofOpenRequest'];
export type SandboxSearchQuery = NonNullable<operations['sandboxSearch']['parameters']['query']>;
export type SandboxFactsQuery = NonNullable<operations['sandboxFacts']['parameters']['query']>;

/** Request and 2xx response body of every keyed (`/api/b2b/*`) operation, by operation id. */
export interface B2bOperations {
  'facts/latest': { request: FactsLatestRequest; response: FactsLatestEnvelope };
  'facts/latest/by-series': { request: BySeriesRequest; response: FactsLatestBySeriesEnvelope };
  'facts/core': { request: CompanyRequest; response: FactsEnvelope };
  'facts/full': { request: CompanyRequest; response: FactsFullEnvelope };
  'facts/core/by-series': { request: BySeriesRequest; response: FactsBySeriesEnvelope };
  'facts/full/by-series': { request: BySeriesRequest; response: FactsFullBySeriesEnvelope };
  'series/catalog': { request: CompanyRequest; response: SeriesCatalogEnvelope };
  'dims/catalog': { request: CompanyRequest; response: DimsCatalogEnvelope };
  'series/batch': { request: SeriesBatchRequest; response: SeriesBatchEnvelope };
  'evidence/enriched': { request: CompanyRequest; response: EvidenceEnvelope };
  'issuer/reference': { request: IssuerRequest; response: IssuerReferenceEnvelope };
  'telemetry/proof-open': { request: TelemetryProofOpenRequest; response: TelemetryAccepted };
  'search/entities': { request: SearchEntitiesRequest; response: EntitySearchEnvelope };
  'search/series': { request: SearchSeriesRequest; response: SeriesSearchEnvelope };
  'search/filings': { request: SearchFilingsRequest; response: FilingSearchEnvelope };
}

export type B2bOperation = keyof B2bOperations;

/** Every keyed operation id, in the order of section 4. */
export const B2B_OPERATIONS = [
  'facts/latest',
  'facts/latest/by-series',
  'facts/core',
  'facts/full',
  'facts/core/by-series',
  'facts/full/by-series',
  'search/entities',
  'search/series',
  'search/filings',
  'series/catalog',
  'dims/catalog',
  'series/batch',
  'evidence/enriched',
  'issuer/reference',
  'telemetry/proof-open',
] as const satisfies readonly B2bOperation[];

/** Operations whose rows the client can stream (large responses, constant memory). */
export const STREAM_OPERATIONS = [
  'facts/full',
  'facts/core',
  'facts/latest',
  'evidence/enriched',
  'series/catalog',
  'dims/catalog',
] as const satisfies readonly B2bOperation[];
export type StreamOperation = (typeof STREAM_OPERATIONS)[number];

/** Whether the client can stream `op`'s rows (narrows any operation id, a literal union too). */
export function isStreamOperation(op: string): op is StreamOperation {
  return (STREAM_OPERATIONS as readonly string[]).includes(op);
}

/** Keyless GET operations (sandbox, series blob, evidence open). */
export type PublicOperation = 'sandbox/search' | 'sandbox/facts' | 'series/blob' | 'evidence/open';

/** Any operation id the client knows. */
export type OperationId = B2bOperation | PublicOperation;

/** What every plain client method resolves to. */
export interface ApiResult<T> {
  data: T;
  status: number;
  rateLimit: RateLimitState;
}
