/**
 * Datasets and the API operation behind each. Every dataset is fetched with one request per
 * company; `extraBody` holds what an export needs beyond the company scope.
 */
import type { DatasetName } from '../types.js';

export interface DatasetSpec {
  /** Operation id (the path after /api/b2b/). */
  operation: string;
  /** Whether the client streams its rows (`client.stream`); otherwise one JSON response. */
  streamed: boolean;
  /** Request fields added to `{ ticker }` / `{ cik }`. */
  extraBody: Readonly<Record<string, unknown>>;
}

export const DATASET_SPECS: Readonly<Record<DatasetName, DatasetSpec>> = {
  facts_full: { operation: 'facts/full', streamed: true, extraBody: {} },
  evidence: { operation: 'evidence/enriched', streamed: true, extraBody: {} },
  series_catalog: { operation: 'series/catalog', streamed: true, extraBody: {} },
  facts_core: { operation: 'facts/core', streamed: true, extraBody: {} },
  // Unscoped latest facts are capped (max 500) and skip dei# unless asked: ask for everything the
  // API allows; a truncated answer is reported on the part, never hidden.
  facts_latest: { operation: 'facts/latest', streamed: true, extraBody: { include_dei: true, limit: 500 } },
  dims_catalog: { operation: 'dims/catalog', streamed: true, extraBody: {} },
  issuer_reference: { operation: 'issuer/reference', streamed: false, extraBody: {} },
};

export function datasetOperation(dataset: DatasetName): string {
  return DATASET_SPECS[dataset].operation;
}
