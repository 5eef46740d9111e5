/**
 * Caps V8's young generation (the new space) of a process that runs every role (`run --local`,
 * `demo`, a `worker` without --only) at 16 MiB. Node 24's V8 grows it to 64 MiB and more (Node 20's
 * to 32 MiB): on SYNBIG that was ~65 MB of extra peak RSS, and 16 MiB brings Node 24 back under
 * 256 MB with no measurable CPU (docs/decisions.md, "One process: V8's young generation at 16 MiB").
 * `--max-semi-space-size` is read only when the process starts; `--semi-space-growth-factor` is
 * read at each growth, so the cap switches it between 2 (V8's default, doubling) and 1 (no growth)
 * after every garbage collection.
 */
import { PerformanceObserver } from 'node:perf_hooks';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';

/** The new space's size at which growth stops (what `--max-semi-space-size=8` gives at start). */
export const YOUNG_GENERATION_CAP_BYTES = 16 * 1024 * 1024;
/** V8's own growth factor (`--semi-space-growth-factor`), put back by close(). */
const V8_GROWTH_FACTOR = 2;

/** What the cap reads and sets of the heap; the process's V8 unless a test injects another. */
export interface HeapControls {
  /** The new space's current size in bytes. */
  newSpaceBytes(): number;
  /** V8's `--semi-space-growth-factor`, read at the next growth. */
  setGrowthFactor(factor: number): void;
  /** Calls `afterGc` after each garbage collection; returns the function that stops it. */
  onGarbageCollected(afterGc: () => void): () => void;
  /** A full collection that lets V8 shrink the new space (Node 24's V8 does; Node 20's keeps it). */
  collectShrinking(): void;
}

export interface YoungGenerationCap {
  /** Stops watching and gives V8 its own growth factor back. */
  close(): void;
}

export interface CapYoungGenerationOptions {
  /** @defaultValue YOUNG_GENERATION_CAP_BYTES */
  capBytes?: number;
  /** @defaultValue v8Heap (this process) */
  heap?: HeapControls;
}

/** This process's V8: heap statistics, flags and the `gc` performance entries. */
export const v8Heap: HeapControls = {
  newSpaceBytes: () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0,
  setGrowthFactor: (factor) => v8.setFlagsFromString(`--semi-space-growth-factor=${factor}`),
  onGarbageCollected(afterGc) {
    const observer = new PerformanceObserver(afterGc);
    observer.observe({ entryTypes: ['gc'] });
    return () => observer.disconnect();
  },
  collectShrinking() {
    // `gc` exists only in contexts made while --expose-gc is on: one is made, then the flag is off.
    v8.setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as (options: object) => void;
    v8.setFlagsFromString('--no-expose-gc');
    // 'last-resort' collects to reduce the footprint, which is when V8 shrinks the new space.
    gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  },
};

/**
 * Keeps the new space at or below `capBytes` from now on: growth stays on (factor 2) while doubling
 * fits under the cap, and is off (factor 1) once it does not. V8 grows the space at most once per
 * collection and the factor is set again after every one, so it cannot pass the cap unless two
 * collections that both grow it run before the event loop delivers the first one's entry.
 * A new space already past the cap (the CLI's start grows it to 32 MiB) gets one shrinking
 * collection first (142 ms on Node 24 in a script holding 200,000 objects); where V8 does not
 * shrink it there (Node 20), it stays its size.
 */
export function capYoungGeneration(opts: CapYoungGenerationOptions = {}): YoungGenerationCap {
  const capBytes = opts.capBytes ?? YOUNG_GENERATION_CAP_BYTES;
  const heap = opts.heap ?? v8Heap;
  if (heap.newSpaceBytes() > capBytes) heap.collectShrinking();
  let factor = 0;
  const adjust = (): void => {
    const next = heap.newSpaceBytes() * V8_GROWTH_FACTOR <= capBytes ? V8_GROWTH_FACTOR : 1;
    if (next !== factor) heap.setGrowthFactor(next);
    factor = next;
  };
  adjust();
  const stop = heap.onGarbageCollected(adjust);
  return {
    close() {
      stop();
      if (factor !== V8_GROWTH_FACTOR) heap.setGrowthFactor(V8_GROWTH_FACTOR);
      factor = V8_GROWTH_FACTOR;
    },
  };
}

/** Whether node's own flags or NODE_OPTIONS size the young generation; the operator's choice wins. */
export function youngGenerationSetAtStart(
  execArgv: readonly string[],
  nodeOptions: string | undefined,
): boolean {
  const flags = [...execArgv, ...(nodeOptions ?? '').split(/\s+/)];
  return flags.some((f) =>
    /^--(max-semi-space-size|semi-space-growth-factor)([=\s]|$)/.test(f.replace(/_/g, '-')),
  );
}
