/**
 * The dataset registry: one entry per dataset, the one place that says which API operation backs
 * it, what the request adds to the company scope, whether the client streams it and which schema
 * its files have. Everything else (the DatasetName type, the config's choices, the part job, the
 * output schemas, the manifest, the config's default set) is derived from it. Adding a dataset = one
 * entry here (+ its columns in a file of its own when the interface describes its rows).
 *
 * Fixed schemas come from the interface (facts, evidence, issuer reference); series_catalog and
 * dims_catalog rows are not described by it, so their columns are inferred from the rows the API
 * returns and evolve additively (src/output/convert/schema-registry.ts).
 */
import { EXTRA_COLUMN, LINEAGE_COLUMNS, type ColumnDef } from './columns.js';
import { EVIDENCE_COLUMNS, EVIDENCE_SCHEMA_VERSION } from './evidence.js';
import { FACT_COLUMNS, FACT_SCHEMA_VERSION } from './fact.js';
import { ISSUER_REFERENCE_COLUMNS, ISSUER_REFERENCE_SCHEMA_VERSION } from './issuer-reference.js';

export interface DatasetDefinition {
  /**
   * Operation id (the path after /api/b2b/). Whether the client streams it follows from the
   * contract's `STREAM_OPERATIONS`; src/pipeline/part/client-fetcher.ts checks the id is an operation.
   */
  readonly operation: string;
  /** Request fields added to `{ ticker }` / `{ cik }`. */
  readonly extraBody: Readonly<Record<string, unknown>>;
  /** In the default set of a snapshot. */
  readonly byDefault: boolean;
  /**
   * The column identifying a row among one company's rows, the table's primary key with
   * `_requested_ticker` (docs/output.md, "Loading"); none when the rows have no such field.
   */
  readonly key?: string;
  /** The data columns and their version; `inferred` datasets start empty and grow from the rows. */
  readonly schema: {
    readonly version: number;
    readonly inferred: boolean;
    readonly columns: readonly ColumnDef[];
  };
}

const inferred = { version: 0, inferred: true, columns: [] } as const;

/** Every dataset, in the order of the docs and of `--datasets` help. */
export const DATASET_REGISTRY = {
  facts_full: {
    key: 'fact_key',
    operation: 'facts/full',
    extraBody: {},
    byDefault: true,
    schema: { version: FACT_SCHEMA_VERSION, inferred: false, columns: FACT_COLUMNS },
  },
  evidence: {
    key: 'evidence_key',
    operation: 'evidence/enriched',
    extraBody: {},
    byDefault: true,
    schema: { version: EVIDENCE_SCHEMA_VERSION, inferred: false, columns: EVIDENCE_COLUMNS },
  },
  series_catalog: {
    key: 'series_key',
    operation: 'series/catalog',
    extraBody: {},
    byDefault: true,
    schema: inferred,
  },
  facts_core: {
    key: 'fact_key',
    operation: 'facts/core',
    extraBody: {},
    byDefault: false,
    schema: { version: FACT_SCHEMA_VERSION, inferred: false, columns: FACT_COLUMNS },
  },
  // Unscoped latest facts are capped (max 500) and skip dei# unless asked: ask for everything the
  // API allows; a truncated answer is reported on the part, never hidden.
  facts_latest: {
    key: 'fact_key',
    operation: 'facts/latest',
    extraBody: { include_dei: true, limit: 500 },
    byDefault: false,
    schema: { version: FACT_SCHEMA_VERSION, inferred: false, columns: FACT_COLUMNS },
  },
  dims_catalog: {
    operation: 'dims/catalog',
    extraBody: {},
    byDefault: false,
    schema: inferred,
  },
  issuer_reference: {
    operation: 'issuer/reference',
    extraBody: {},
    byDefault: false,
    schema: { version: ISSUER_REFERENCE_SCHEMA_VERSION, inferred: false, columns: ISSUER_REFERENCE_COLUMNS },
  },
} as const satisfies Record<string, DatasetDefinition>;

export type DatasetName = keyof typeof DATASET_REGISTRY;

/** Datasets the exporter can produce, as a non-empty tuple (zod enums want one). */
export const DATASETS = Object.keys(DATASET_REGISTRY) as [DatasetName, ...DatasetName[]];

/** The default set of a snapshot: the config's `datasets` default (src/config/load.ts) and the demo's. */
export const DEFAULT_DATASETS: readonly DatasetName[] = DATASETS.filter((d) => DATASET_REGISTRY[d].byDefault);

export function isDatasetName(value: unknown): value is DatasetName {
  return typeof value === 'string' && Object.hasOwn(DATASET_REGISTRY, value);
}

export interface DatasetSchema {
  dataset: DatasetName;
  /** Increases whenever the column list changes; recorded in the manifest and `_schemas/`. */
  version: number;
  /** True when the columns are inferred from the rows the API returned (the interface hides them). */
  inferred: boolean;
  columns: ColumnDef[];
}

/** The registry entry of a dataset. */
export function datasetDefinition(dataset: DatasetName): DatasetDefinition {
  return DATASET_REGISTRY[dataset];
}

/** The schema a dataset starts from: complete for fixed datasets, empty (before inference) for catalogs. */
export function baseSchema(dataset: DatasetName): DatasetSchema {
  const s = DATASET_REGISTRY[dataset].schema;
  return withTrailer(dataset, s.version, s.inferred, s.columns);
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

/** Field columns only (what the API row is expected to carry). */
export function fieldColumns(schema: DatasetSchema): ColumnDef[] {
  return schema.columns.filter((c) => c.role === 'field');
}
