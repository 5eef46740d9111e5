/** One headline figure of a benchmark, printed in `npm run bench`'s table. */
export interface BenchResult {
  /** Area, e.g. `emulator`, `client`, `pipeline`, `budget`, `output`, `search`. */
  group: string;
  /** What was measured, e.g. `facts/full AAPL first byte after start`. */
  name: string;
  value: number;
  /** Unit of value: `ms`, `rows/s`, `MB`, `ratio`, `count`. */
  unit: string;
  /** The target as text, e.g. `< 1000 ms`, `>= 0.95`. */
  target?: string;
  /** Whether the target is met; undefined when there is no target. */
  ok?: boolean;
  /** Extra context, e.g. sample size or medians of N runs. */
  note?: string;
  /**
   * Why the target is not met where it is known and stated (where the docs explain it), printed
   * after a miss so the figure stands with its reason.
   */
  whenMissed?: string;
}

/** A benchmark module: bench/[<role>/]<name>.bench.ts exports `run`. Each must stop by itself and clean up. */
export type BenchModule = { run(): Promise<BenchResult[]> };
