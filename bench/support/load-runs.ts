/** Timed `load` runs for the warehouse benches (bench/warehouse/): one load, a timer, a pairing. */
import { openStorage } from '../../src/output/index.js';
import { loadSnapshots, openWarehouse, type LoadReport } from '../../src/warehouse/index.js';

export async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t0 = performance.now();
  const value = await fn();
  return { ms: performance.now() - t0, value };
}

/** Rows a load wrote, over its snapshots and datasets. */
export function loadedRows(r: LoadReport): number {
  return r.snapshots.reduce((n, s) => n + s.datasets.reduce((m, d) => m + d.rows, 0), 0);
}

/** `load` of the snapshots under `root` (or only `snapshot`) into `into` (a URL or `duckdb:FILE`). */
export async function loadInto(
  into: string,
  root: string,
  o: { schema?: string; snapshot?: string; history?: boolean } = {},
): Promise<LoadReport> {
  const wh = await openWarehouse(into, o.schema !== undefined ? { schema: o.schema } : {});
  try {
    return await loadSnapshots({
      storage: openStorage(root),
      warehouse: wh,
      ...(o.snapshot !== undefined ? { snapshot: o.snapshot } : {}),
      ...(o.history === true ? { history: true } : {}),
    });
  } finally {
    await wh.close();
  }
}

/** Runs `a` and `b` `runs` times, interleaved, the one that goes first alternating; their times. */
export async function interleaved(
  runs: number,
  a: (i: number) => Promise<unknown>,
  b: (i: number) => Promise<unknown>,
): Promise<{ a: number[]; b: number[] }> {
  const out = { a: [] as number[], b: [] as number[] };
  for (let i = 0; i < runs; i++) {
    const pair = i % 2 === 0 ? (['a', 'b'] as const) : (['b', 'a'] as const);
    for (const side of pair) out[side].push((await timed(() => (side === 'a' ? a(i) : b(i)))).ms);
  }
  return out;
}
