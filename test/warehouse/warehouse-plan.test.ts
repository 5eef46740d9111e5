/** How `load` decides per dataset: changes (MERGE or per company) on an unbroken chain, else full and why. */
import { describe, expect, it } from 'vitest';
import type { Manifest } from '../../src/output/catalog/manifest.js';
import type { LedgerRow } from '../../src/warehouse/ledger.js';
import { planSnapshot, type PlanInput } from '../../src/warehouse/plan.js';
import { columnsSignature } from '../../src/warehouse/table-columns.js';
import type { DatasetName } from '../../src/types.js';

type Col = { name: string; type: 'VARCHAR'; role: 'field' | 'lineage' };
const COLUMNS: readonly Col[] = [
  { name: 'fact_key', type: 'VARCHAR', role: 'field' },
  { name: '_requested_ticker', type: 'VARCHAR', role: 'lineage' },
];
const EVIDENCE: readonly Col[] = [
  { name: 'evidence_key', type: 'VARCHAR', role: 'field' },
  { name: '_requested_ticker', type: 'VARCHAR', role: 'lineage' },
];

function manifest(id: string, date: string, o: Partial<Manifest> = {}): Manifest {
  const ds = (columns: readonly { name: string; type: string; role: string }[]) => ({
    schema_version: 1,
    schema_inferred: false,
    columns,
    path: '',
    rows: 1,
    files: 1,
    bytes: 1,
    extra_fields: [],
    parts: { pending: 0, done: 2, not_found: 0, bad_request: 0, failed: 0 },
  });
  return {
    snapshot_id: id,
    snapshot_date: date,
    datasets: { facts_full: ds(COLUMNS), evidence: ds(EVIDENCE) },
    parts: ['AAPL', 'MSFT'].flatMap((t) => [
      { dataset: 'facts_full', ticker: t, status: 'done', rows: 1 },
      {
        dataset: 'evidence',
        ticker: t,
        status: 'done',
        rows: 1,
        ...(t === 'MSFT' ? { reused: true, reused_from: 'n1' } : {}),
      },
    ]),
    changes: {
      against: 'n1',
      files: [
        {
          path: 'changes/x/part-facts_full.parquet',
          source_dataset: 'facts_full',
          rows: 3,
          bytes: 1,
          sha256: '',
          counts: { added: 2, changed: 1, removed: 0 },
        },
      ],
      counts: { added: 2, changed: 1, removed: 0 },
    },
    incremental: { reused_from: 'n1', full_refresh_date: '2025-10-30', reused_parts: 1, fetched_parts: 3 },
    ...o,
  } as unknown as Manifest;
}

function held(
  dataset: DatasetName,
  id: string,
  columns = dataset === 'evidence' ? EVIDENCE : COLUMNS,
): LedgerRow {
  return {
    seq: 1,
    snapshot_id: id,
    snapshot_date: '2025-10-30',
    dataset,
    mode: 'full',
    rows: 1,
    loaded_at: '',
    manifest_sha256: '',
    columns: columnsSignature(columns),
    reason: '',
  };
}

function plan(m: Manifest, current: LedgerRow[], stored = ['n1', 'n2']): Record<string, string> {
  const input: PlanInput = {
    manifest: m,
    current: new Map(current.map((r) => [r.dataset, r])),
    previous: (id) => (stored.includes(id) ? manifest(id, '2025-10-30', { parts: [] }) : undefined),
    stored: new Set(stored),
  };
  return Object.fromEntries(planSnapshot(input).steps.map((s) => [s.dataset, `${s.kind}: ${s.reason}`]));
}

describe('planSnapshot', () => {
  const n2 = manifest('n2', '2025-11-05');
  const both = [held('facts_full', 'n1'), held('evidence', 'n1')];

  it('applies changes on an unbroken chain: MERGE for facts, the changed companies for the rest', () => {
    expect(plan(n2, both)).toEqual({
      facts_full: 'merge: changes against n1: 2 added, 1 changed, 0 removed',
      evidence: 'companies: 1 of 2 companies changed since n1: AAPL',
    });
  });

  it('loads in full, saying why, when the chain is broken', () => {
    expect(plan(n2, []).facts_full).toBe('full: first load');
    expect(plan(n2, [held('facts_full', 'n0')], ['n0', 'n2']).facts_full).toBe(
      "full: chain broken: n2's changes are against n1 (pruned), the table holds n0",
    );
    expect(plan(manifest('n2', '2025-11-05', { changes: undefined }), both).facts_full).toBe(
      'full: n2 has no changes dataset',
    );
    expect(
      plan(
        manifest('n2', '2025-11-05', {
          incremental: {
            reused_from: null,
            full_refresh_date: '2025-11-05',
            reused_parts: 0,
            fetched_parts: 4,
          },
        }),
        both,
      ).facts_full,
    ).toBe('full: n2 is a full refresh');
    expect(
      plan(n2, [held('facts_full', 'n1', [...COLUMNS, { name: 'x', type: 'VARCHAR', role: 'field' }])])
        .facts_full,
    ).toBe('full: schema change: the columns differ from those loaded from n1');
    expect(plan(n2, both, ['n2']).evidence).toBe("full: n1's manifest cannot be read (pruned)");
  });

  it('skips what is already loaded', () => {
    expect(plan(n2, [held('facts_full', 'n2'), held('evidence', 'n2')])).toEqual({
      facts_full: 'skip: already loaded',
      evidence: 'skip: already loaded',
    });
  });
});
