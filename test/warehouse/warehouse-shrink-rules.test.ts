/**
 * Where the shrink guard of `load` draws its line (src/warehouse/shrink.ts), on plans and
 * manifests alone: half of a table's companies or fewer is named and applied; more than half, or a
 * table left empty, is refused; the load as a whole counts, so two halves in a row are refused; a
 * table without a company column is guarded on emptiness; a first load is never refused.
 * The same rules against real databases and the CLI: warehouse-shrink.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { Manifest } from '../../src/output/catalog/manifest.js';
import type { SnapshotPlan } from '../../src/warehouse/plan.js';
import { shrinksOf, type TableCompanies } from '../../src/warehouse/shrink.js';
import type { DatasetName } from '../../src/types.js';

/** A full load of facts_full from a snapshot holding `tickers` (one row each). */
function step(id: string, tickers: string[]): { plan: SnapshotPlan; manifest: Manifest } {
  const manifest = {
    snapshot_id: id,
    datasets: { facts_full: { rows: tickers.length } },
    parts: tickers.map((ticker) => ({ dataset: 'facts_full', ticker, status: 'done', rows: 1 })),
  } as unknown as Manifest;
  const plan: SnapshotPlan = {
    snapshotId: id,
    snapshotDate: '2026-11-21',
    steps: [{ dataset: 'facts_full', columns: [], kind: 'full', reason: 'test' }],
  };
  return { plan, manifest };
}

const holding = (companies: string[] | null, rows = companies?.length ?? 0) =>
  new Map<DatasetName, TableCompanies | undefined>([
    ['facts_full', { rows, companies: companies === null ? null : new Set(companies) }],
  ]);

describe('the shrink guard', () => {
  it('names half of the companies or fewer and lets them go; more than half is refused', () => {
    expect(shrinksOf([step('s1', ['A', 'B'])], holding(['A', 'B', 'C', 'D']))).toEqual([
      {
        snapshotId: 's1',
        dataset: 'facts_full',
        before: 4,
        removed: ['C', 'D'],
        emptied: false,
        refused: false,
      },
    ]);
    expect(shrinksOf([step('s1', ['A', 'E'])], holding(['A', 'B', 'C', 'D']))).toMatchObject([
      { removed: ['B', 'C', 'D'], refused: true },
    ]);
    expect(shrinksOf([step('s1', ['A', 'B', 'C', 'D', 'E'])], holding(['A', 'B']))).toEqual([]);
  });

  it('refuses two halves in one load: the companies gone since the start count against the table as it was', () => {
    const [, second] = shrinksOf([step('s1', ['A', 'B']), step('s2', ['A'])], holding(['A', 'B', 'C', 'D']));
    expect(second).toEqual({
      snapshotId: 's2',
      dataset: 'facts_full',
      before: 4,
      removed: ['B', 'C', 'D'],
      emptied: false,
      refused: true,
    });
  });

  it('refuses a table left empty, with or without a company column; a first load or an empty table is never refused', () => {
    expect(shrinksOf([step('s1', [])], holding(['A']))).toMatchObject([{ emptied: true, refused: true }]);
    expect(shrinksOf([step('s1', [])], holding(null, 10))).toEqual([
      { snapshotId: 's1', dataset: 'facts_full', before: 0, removed: [], emptied: true, refused: true },
    ]);
    expect(shrinksOf([step('s1', ['A'])], holding(null, 10))).toEqual([]);
    expect(shrinksOf([step('s1', [])], new Map([['facts_full', undefined]]))).toEqual([]);
    expect(shrinksOf([step('s1', [])], holding([], 0))).toEqual([]);
  });
});
