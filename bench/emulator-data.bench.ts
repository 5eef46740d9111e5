/**
 * Emulator data layer (src/emulator/data/): store start-up on the bundled data (index + validate
 * every JSON file), the first facts/full of the largest bundled company on a cold store (the lazy
 * parse and build), the other datasets of that company after it, and SYNBIG's generated
 * 1,000,000-row facts/full iterated and serialised (what the HTTP layer does when streaming).
 * Medians of 3 fresh stores, no background warm-up (warm: 0) so the cold path is what is timed.
 */
import { loadStore } from '../src/emulator/data/index.js';
import { median } from './support/stats.js';
import type { BenchResult } from './support/types.js';

async function largest(): Promise<{ cik: string; ticker: string; rows: number }> {
  const store = await loadStore({ warm: 0 });
  let best = { cik: '', ticker: '', rows: -1 };
  for (const c of store.companies()) {
    const rows = (await store.factsFull(c.cik)).length;
    if (rows > best.rows) best = { cik: c.cik, ticker: c.ticker ?? c.cik, rows };
  }
  await store.close();
  return best;
}

export async function run(): Promise<BenchResult[]> {
  const big = await largest();
  const startups: number[] = [];
  const firsts: number[] = [];
  const rest: number[] = [];
  for (let i = 0; i < 3; i += 1) {
    const t0 = performance.now();
    const store = await loadStore({ warm: 0 });
    startups.push(performance.now() - t0);
    const t1 = performance.now();
    await store.factsFull(big.cik);
    firsts.push(performance.now() - t1);
    const t2 = performance.now();
    await Promise.all([
      store.factsCore(big.cik),
      store.evidence(big.cik),
      store.seriesCatalog(big.cik),
      store.dimsCatalog(big.cik),
    ]);
    rest.push(performance.now() - t2);
    await store.close();
  }

  // A synthetic clone of the largest company, its source already built: the cost of a view.
  const clones = await loadStore({ warm: 0, synthetic: 200 });
  await clones.factsFull(big.cik);
  const clone = clones
    .companies()
    .find(
      (c) =>
        c.synthetic &&
        c.name.endsWith(`(synthetic clone of ${clones.resolve({ cik: big.cik })?.name ?? ''})`),
    );
  const t4 = performance.now();
  let cloneBytes = 0;
  for (const r of await clones.factsFull(clone?.cik ?? '')) cloneBytes += JSON.stringify(r).length;
  const cloneMs = performance.now() - t4;
  await clones.close();

  const N = 1_000_000;
  const store = await loadStore({ warm: 0, syntheticLargeRows: N });
  const synbig = store.resolve({ ticker: 'SYNBIG' });
  const t3 = performance.now();
  const rows = await store.factsFull(synbig?.cik ?? '');
  let bytes = 0;
  let count = 0;
  for (const r of rows) {
    bytes += JSON.stringify(r).length + 1;
    count += 1;
  }
  const genMs = performance.now() - t3;
  await store.close();

  const note = `${big.ticker}, ${big.rows} rows`;
  return [
    {
      group: 'emulator-data',
      name: 'store start-up (bundled data, validate all JSON)',
      value: median(startups),
      unit: 'ms',
      target: '< 3000 ms',
      ok: median(startups) < 3000,
      note: `median of 3: ${startups.map(Math.round).join(', ')}`,
    },
    {
      group: 'emulator-data',
      name: 'first facts/full of the largest company (cold build)',
      value: median(firsts),
      unit: 'ms',
      target: '< 500 ms',
      ok: median(firsts) < 500,
      note: `${note}; median of 3: ${firsts.map(Math.round).join(', ')}`,
    },
    {
      group: 'emulator-data',
      name: 'then core + evidence + catalogs of it',
      value: median(rest),
      unit: 'ms',
      note,
    },
    {
      group: 'emulator-data',
      name: 'facts/full of a synthetic clone of it, serialised',
      value: cloneMs,
      unit: 'ms',
      target: '< 1000 ms',
      ok: cloneMs < 1000,
      note: `${big.rows} rows, ${(cloneBytes / 1e6).toFixed(1)} MB JSON; keys rehashed per row`,
    },
    {
      group: 'emulator-data',
      name: 'SYNBIG facts/full generated + serialised',
      value: Math.round(count / (genMs / 1000)),
      unit: 'rows/s',
      target: '>= 100000 rows/s',
      ok: count / (genMs / 1000) >= 100_000,
      note: `${count} rows, ${(bytes / 1e6).toFixed(0)} MB JSON in ${Math.round(genMs)} ms`,
    },
  ];
}
