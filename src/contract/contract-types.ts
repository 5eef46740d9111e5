/**
 * Friendly names for the types generated from src/contract/openapi.yaml (src/contract/openapi.gen.ts),
 * plus the operation table that ties each operation id (`facts/full`, …) to its request and response
 * types. The client and the emulator both read them. Regenerate the generated file with
 * `npm run contract` after editing the YAML.
 */
import type { components, operations, paths } from './openapi.gen.js';

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

/** Every keyed operation id: the contract's paths under `/api/b2b/` (generated, never listed by hand). */
export type B2bOperation = {
  [P in keyof paths]: P extends `/api/b2b/${infer Id}` ? Id : never;
}[keyof paths];

type B2bPost<Op extends B2bOperation> = paths[`/api/b2b/${Op}`]['post'];
type JsonBody<R> = R extends { content: { 'application/json': infer B } } ? B : never;
type SuccessBody<Rs> = Rs extends { 200: infer R }
  ? JsonBody<R>
  : Rs extends { 202: infer R }
    ? JsonBody<R>
    : never;

/** Request and 2xx response body of every keyed operation, by operation id, derived from the contract. */
export type B2bOperations = {
  [Op in B2bOperation]: {
    request: NonNullable<B2bPost<Op>['requestBody']>['content']['application/json'];
    response: SuccessBody<B2bPost<Op>['responses']>;
  };
};

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
type UnlistedOperation = Exclude<B2bOperation, (typeof B2B_OPERATIONS)[number]>;
// Fails to compile, naming the operation, when the contract has one this list lacks.
const everyOperationListed: [UnlistedOperation] extends [never] ? true : UnlistedOperation = true;
void everyOperationListed;

/** Keyless GET operations (sandbox, series blob, evidence open). */
export type PublicOperation = 'sandbox/search' | 'sandbox/facts' | 'series/blob' | 'evidence/open';

/** Any operation id of the contract. */
export type OperationId = B2bOperation | PublicOperation;
