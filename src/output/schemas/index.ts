/**
 * The schema of every dataset. Fixed schemas come from the interface (facts, evidence, issuer
 * reference); series_catalog and dims_catalog rows are not described by the interface, so their
 * columns are inferred from the rows the API returns and evolve additively (registry.ts).
 */
import { assertNever, type DatasetName } from '../../types.js';
import { EVIDENCE_COLUMNS, EVIDENCE_SCHEMA_VERSION } from './evidence.js';
import { FACT_COLUMNS, FACT_SCHEMA_VERSION } from './fact.js';
import { ISSUER_REFERENCE_COLUMNS, ISSUER_REFERENCE_SCHEMA_VERSION } from './issuer-reference.js';
import { EXTRA_COLUMN, LINEAGE_COLUMNS, type ColumnDef, type DatasetSchema } from './types.js';

export * from './types.js';

/** The schema a dataset starts from: complete for fixed datasets, empty (before inference) for catalogs. */
export function baseSchema(dataset: DatasetName): DatasetSchema {
  switch (dataset) {
    case 'facts_full':
    case 'facts_core':
    case 'facts_latest':
      return withTrailer(dataset, FACT_SCHEMA_VERSION, false, FACT_COLUMNS);
    case 'evidence':
      return withTrailer(dataset, EVIDENCE_SCHEMA_VERSION, false, EVIDENCE_COLUMNS);
    case 'issuer_reference':
      return withTrailer(dataset, ISSUER_REFERENCE_SCHEMA_VERSION, false, ISSUER_REFERENCE_COLUMNS);
    case 'series_catalog':
    case 'dims_catalog':
      return withTrailer(dataset, 0, true, []);
    default:
      return assertNever(dataset, 'dataset');
  }
}

/** Data columns followed by `_extra` and the lineage columns, the order of every output file. */
export function withTrailer(
  dataset: DatasetName,
  version: number,
  inferred: boolean,
  dataColumns: readonly ColumnDef[],
): DatasetSchema {
  return {
    dataset,
    version,
    inferred,
    columns: [
      ...dataColumns.map((c) => ({ ...c })),
      { ...EXTRA_COLUMN },
      ...LINEAGE_COLUMNS.map((c) => ({ ...c })),
    ],
  };
}

/** Whether the dataset's rows have `period_end` (the manifest records min/max per file). */
export function hasPeriodEnd(schema: DatasetSchema): boolean {
  return schema.columns.some((c) => c.name === 'period_end' && c.type === 'DATE');
}

/** Datasets whose rows carry value_num / value_scaled_int / scale (verify checks the identity). */
export function hasExactValue(schema: DatasetSchema): boolean {
  const names = new Set(schema.columns.map((c) => c.name));
  return names.has('value_num') && names.has('value_scaled_int') && names.has('scale');
}
