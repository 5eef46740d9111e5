/**
 * The dataset registry (src/datasets/registry.ts) is the one source of what a dataset is: every
 * entry names an operation of the OpenAPI contract, and the names, defaults and schemas the rest
 * of the exporter uses are derived from it.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  DATASETS,
  DATASET_REGISTRY,
  DEFAULT_DATASETS,
  LINEAGE_COLUMNS,
  baseSchema,
  datasetDefinition,
  isDatasetName,
} from '../../src/datasets/index.js';

describe('dataset registry', () => {
  it('backs every dataset by a POST operation of the contract', async () => {
    const contract = parse(
      await readFile(new URL('../../src/contract/openapi.yaml', import.meta.url), 'utf8'),
    ) as {
      paths: Record<string, { post?: unknown }>;
    };
    for (const d of DATASETS) {
      const path = `/api/b2b/${datasetDefinition(d).operation}`;
      expect(contract.paths[path]?.post, `${d}: ${path}`).toBeDefined();
    }
  });

  it('derives the names, the default set and each schema from the entries', () => {
    expect(DATASETS).toEqual(Object.keys(DATASET_REGISTRY));
    expect(DEFAULT_DATASETS.length).toBeGreaterThan(0);
    expect(DEFAULT_DATASETS).toEqual(DATASETS.filter((d) => DATASET_REGISTRY[d].byDefault));
    for (const d of DATASETS) {
      const s = baseSchema(d);
      const def = datasetDefinition(d);
      expect(s.dataset).toBe(d);
      expect(s.inferred).toBe(def.schema.inferred);
      // Data columns first (none yet for inferred ones), then _extra and the lineage columns.
      expect(s.columns.length).toBe(def.schema.columns.length + 1 + LINEAGE_COLUMNS.length);
      expect(s.columns.slice(-LINEAGE_COLUMNS.length).map((c) => c.name)).toEqual(
        LINEAGE_COLUMNS.map((c) => c.name),
      );
      if (!def.schema.inferred) expect(def.schema.columns.length).toBeGreaterThan(5);
    }
  });

  it('knows only its own names, never inherited object keys', () => {
    expect(isDatasetName('facts_full')).toBe(true);
    for (const v of ['toString', '__proto__', 'constructor', 'FACTS_FULL', '', 42, null]) {
      expect(isDatasetName(v)).toBe(false);
    }
  });
});
