/**
 * The reasons the pipeline and nights benches print after a miss, worded from what that run
 * measured: figures from an earlier run would explain a miss they did not see.
 */
import { bracketedDifferences, median } from './stats.js';

/** Seconds with one decimal; `n/a` for what was not measured. */
const s1 = (x: number): string => (Number.isFinite(x) ? x.toFixed(1) : 'n/a');

/** What the end-to-end runs measured, one value per run unless said. */
export interface EndToEndMeasured {
  /** CPU s (user + system) of the `run --local` process. */
  cpu: readonly number[];
  /** CPU s of the emulator serving the run: all a curl download of the same body measures. */
  emulatorCpu: readonly number[];
  /** Seconds from the process's start until every row was staged, and until published. */
  staged: readonly number[];
  published: readonly number[];
  /** Wall seconds of the run. */
  wall: readonly number[];
  /** The median curl download of the same body, s. */
  curl: number;
  cores: number;
}

/** Why `run --local` missed its ratio to curl, from the medians of the runs. */
export function endToEndMissReason(m: EndToEndMeasured): string {
  const [cpu, emulator, staged, published, wall] = [m.cpu, m.emulatorCpu, m.staged, m.published, m.wall].map(
    median,
  ) as [number, number, number, number, number];
  const floor = (cpu + emulator) / m.cores;
  return (
    `measured, medians of the runs: the one process used ${s1(cpu)} CPU s and the emulator serving it ${s1(emulator)} CPU s ` +
    `(all curl's download measures); on ${m.cores} cores the two need at least (${s1(cpu)} + ${s1(emulator)}) / ${m.cores} = ` +
    `${s1(floor)} s against curl's ${s1(m.curl)} s; every row was staged at ${s1(staged)} s and published at ${s1(published)} s ` +
    `of a ${s1(wall)} s run, so ${s1(wall - staged)} s (the last segment, the publish, the exit) had no download beside it ` +
    `(docs/decisions.md, 'One process: a Parquet-only part's segment rows are not gzipped')`
  );
}

/** A night's CPU as the nights bench records it. */
export interface NightCpu {
  /** CPU s of the exporter's process over the night, the part until every part was recorded, and the emulator's. */
  cpu: { exporter: number; exporterParts: number; emulator: number };
  /** Parts that waited for the budget gate, by reason. */
  waits: Record<string, number>;
}

/**
 * Why one changed company missed its ratio to its own download: each one-company night's CPU
 * beyond the quiet nights either side of it (the same bracketing as its wall time), medians.
 */
export function oneCompanyMissReason(o: {
  quiet: NightCpu;
  rounds: readonly { one: NightCpu; quiet: NightCpu }[];
  download: number;
  cores: number;
}): string {
  const quiets = [o.quiet, ...o.rounds.map((r) => r.quiet)];
  const extra = (of: (n: NightCpu) => number): number =>
    median(
      bracketedDifferences(
        quiets.map(of),
        o.rounds.map((r) => of(r.one)),
      ),
    );
  const parts = extra((n) => n.cpu.exporterParts);
  const publish = extra((n) => n.cpu.exporter - n.cpu.exporterParts);
  const emulator = extra((n) => n.cpu.emulator);
  const waits = new Map<string, number>();
  for (const r of o.rounds)
    for (const [reason, n] of Object.entries(r.one.waits)) waits.set(reason, (waits.get(reason) ?? 0) + n);
  const waited = [...waits].filter(([, n]) => n > 0).map(([reason, n]) => `${reason} ${n}`);
  const s2 = (x: number): string => (Number.isFinite(x) ? x.toFixed(2) : 'n/a');
  return (
    `measured, medians over ${o.rounds.length} rounds of each one-company night minus the quiet nights either side: ` +
    `the company's fetch and staging ${s2(parts)} CPU s of the exporter, its publish ${s2(publish)} CPU s (its conversion, ` +
    `the rebuilds, \`changes\`), the emulator serving it ${s2(emulator)} CPU s (what curl's ${s2(o.download)} s download ` +
    `measures), on ${o.cores} cores the other catalogs keep busy; parts of those nights that waited for the budget gate: ` +
    `${waited.length === 0 ? 'none' : waited.join(', ')} (docs/decisions.md, 'A night where one company changed: bracketed by its quiet nights')`
  );
}
