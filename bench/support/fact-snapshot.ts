/** Synthetic facts_full snapshots for the warehouse benches, written and published for real. */
import { createPartWriter, publishSnapshot, type Manifest } from '../../src/output/index.js';
import type { OutputFormat, PartPointer } from '../../src/types.js';
import type { SyntheticCompany } from '../../test/helpers/synthetic-rows.js';

/** The companies the rows are spread over: one part each. */
export const BENCH_COMPANIES = 8;

/** The made-up company of part `p` (ticker T000…, CIK 0000001000…). */
export function benchCompany(p: number): SyntheticCompany {
  return { cik: String(1000 + p).padStart(10, '0'), ticker: `T${String(p).padStart(3, '0')}` };
}

export interface FactSnapshotSpec {
  id: string;
  date: string;
  /** Facts over all companies. */
  rows: number;
  formats: OutputFormat[];
  changesAgainst?: string;
  /**
   * An incremental night: part `part` is carried over from snapshot `from` (written again, its
   * rows those of `from`), so the snapshot is no full refresh and loads from its `changes`.
   */
  reused?: { part: number; from: string; fullRefreshDate: string };
  /** Row `i` (numbered over all companies) of part `p`. */
  row(i: number, p: number, company: SyntheticCompany): Record<string, unknown>;
}

/** Writes `spec.rows` facts over BENCH_COMPANIES parts under `root` and publishes the snapshot. */
export async function publishFactSnapshot(root: string, spec: FactSnapshotSpec): Promise<Manifest> {
  const per = Math.ceil(spec.rows / BENCH_COMPANIES);
  const parts: PartPointer[] = [];
  for (let p = 0; p < BENCH_COMPANIES; p++) {
    const company = benchCompany(p);
    const { ticker } = company;
    const w = createPartWriter({
      root,
      snapshotId: spec.id,
      dataset: 'facts_full',
      ticker,
      lineage: { snapshotId: spec.id, fetchedAt: `${spec.date}T00:00:00.000Z`, requestedTicker: ticker },
    });
    for (let i = p * per; i < Math.min((p + 1) * per, spec.rows); i++) {
      const wait = w.write(spec.row(i, p, company));
      if (wait) await wait;
    }
    const reusedFrom = spec.reused?.part === p ? { reusedFrom: spec.reused.from } : {};
    parts.push({ dataset: 'facts_full', ticker, status: 'done', ...(await w.finish()), ...reusedFrom });
  }
  return publishSnapshot({
    root,
    snapshotId: spec.id,
    snapshotDate: spec.date,
    formats: spec.formats,
    parts,
    ...(spec.changesAgainst !== undefined ? { changesAgainst: spec.changesAgainst } : {}),
    ...(spec.reused !== undefined
      ? { incremental: { reusedFrom: spec.reused.from, fullRefreshDate: spec.reused.fullRefreshDate } }
      : {}),
  });
}
