/**
 * The young-generation cap of a process running every role (src/runtime/young-generation.ts):
 * real V8 in a child process started with Node 24's larger default emulated by
 * `--max-semi-space-size=64`, so the test fails without the cap on Node 20 as well; the switching
 * of the growth factor step by step; and when the operator's own start flags take precedence.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import {
  capYoungGeneration,
  YOUNG_GENERATION_CAP_BYTES,
  youngGenerationSetAtStart,
  v8Heap,
  type HeapControls,
} from '../../../src/runtime/young-generation.js';

const MiB = 1024 * 1024;
const CHILD = fileURLToPath(new URL('./young-generation-child.ts', import.meta.url));

/** What the child saw of its new space over its batches. */
interface NewSpaceSeen {
  /** The largest new space, in bytes. */
  most: number;
  /** Batches that ended with the new space at a doubling past the cap or more. */
  doubled: number;
  batches: number;
}

function newSpaceSeen(cap: boolean): Promise<NewSpaceSeen> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--max-semi-space-size=64', '--import', 'tsx', CHILD], {
      env: { ...process.env, YOUNG_CAP: cap ? '1' : '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    child.stderr.on('data', (b: Buffer) => (err += b.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`child exited ${code}: ${err}`));
      else resolve(JSON.parse(out) as NewSpaceSeen);
    });
  });
}

interface RecordingHeap extends HeapControls {
  bytes: number;
  factors: number[];
  watching: boolean;
  /** Shrinking collections asked for. */
  shrinkings: number;
  gc(): void;
}

/** A heap whose new space the test sets, recording what the cap chose; `shrinks` like Node 24's V8. */
function recordingHeap(shrinks = true): RecordingHeap {
  let afterGc: (() => void) | undefined;
  const heap: RecordingHeap = {
    bytes: 1 * MiB,
    factors: [],
    watching: false,
    shrinkings: 0,
    gc: () => afterGc?.(),
    collectShrinking() {
      heap.shrinkings += 1;
      if (shrinks) heap.bytes = 1 * MiB;
    },
    newSpaceBytes: () => heap.bytes,
    setGrowthFactor: (f: number) => void heap.factors.push(f),
    onGarbageCollected(fn: () => void) {
      afterGc = fn;
      heap.watching = true;
      return () => {
        afterGc = undefined;
        heap.watching = false;
      };
    },
  };
  return heap;
}

describe('young generation of one process running every role', () => {
  it("stays at 16 MiB under V8's growth with the cap, and grows past it without", async () => {
    expect(YOUNG_GENERATION_CAP_BYTES).toBe(16 * MiB);
    const [capped, free] = await Promise.all([newSpaceSeen(true), newSpaceSeen(false)]);
    // Node 24's V8 counts pages in flight in the new space's size: at a 16 MiB capacity it reads
    // 18–27 MiB for a batch now and then (measured; more under load, 32.3 MiB once in CI), so a
    // single reading proves nothing. A capacity doubled past the cap stays so: every later batch
    // reads at least 32 MiB, as 57 of 60 do without the cap.
    expect(capped.doubled).toBeLessThanOrEqual(capped.batches / 10);
    expect(free.doubled).toBeGreaterThanOrEqual(free.batches / 2);
    // Still allowed to grow to the cap (a smaller young generation costs more collections).
    expect(capped.most).toBeGreaterThanOrEqual(YOUNG_GENERATION_CAP_BYTES);
    expect(free.most).toBeGreaterThanOrEqual(4 * YOUNG_GENERATION_CAP_BYTES);
  });

  it('doubles while that fits under the cap, stops there, follows a shrink, and hands V8 its factor back', () => {
    const heap = recordingHeap();
    const cap = capYoungGeneration({ heap, capBytes: 32 * MiB });
    expect(heap.factors).toEqual([2]);
    for (const mb of [2, 4, 8]) {
      heap.bytes = mb * MiB;
      heap.gc();
    }
    expect(heap.factors).toEqual([2]); // unchanged: set only when it changes
    heap.bytes = 16 * MiB; // doubling reaches the cap exactly: still allowed
    heap.gc();
    expect(heap.factors).toEqual([2]);
    heap.bytes = 32 * MiB;
    heap.gc();
    expect(heap.factors).toEqual([2, 1]);
    heap.bytes = 8 * MiB; // V8 shrank it: growth on again
    heap.gc();
    expect(heap.factors).toEqual([2, 1, 2]);
    heap.bytes = 32 * MiB;
    heap.gc();
    cap.close();
    expect(heap.factors).toEqual([2, 1, 2, 1, 2]);
    expect(heap.watching).toBe(false);
  });

  it('a new space already past the cap: one shrinking collection, then growth up to the cap', () => {
    const heap = recordingHeap();
    heap.bytes = 64 * MiB;
    const cap = capYoungGeneration({ heap, capBytes: 32 * MiB });
    expect(heap.shrinkings).toBe(1);
    expect(heap.factors).toEqual([2]);
    cap.close();
    const within = recordingHeap();
    within.bytes = 32 * MiB;
    capYoungGeneration({ heap: within, capBytes: 32 * MiB }).close();
    expect(within.shrinkings).toBe(0);
  });

  it('a V8 that keeps its new space through that collection: growth off at once', () => {
    const heap = recordingHeap(false);
    heap.bytes = 64 * MiB;
    capYoungGeneration({ heap, capBytes: 32 * MiB }).close();
    expect(heap.shrinkings).toBe(1);
    expect(heap.factors).toEqual([1, 2]);
  });

  it("the shrinking collection runs on this process's V8 and leaves no gc() behind", () => {
    v8Heap.collectShrinking();
    expect(runInNewContext('typeof gc')).toBe('undefined');
  });

  it("leaves the young generation to the operator's start flags", () => {
    expect(youngGenerationSetAtStart([], undefined)).toBe(false);
    expect(youngGenerationSetAtStart(['--enable-source-maps'], '--max-old-space-size=512')).toBe(false);
    expect(youngGenerationSetAtStart(['--max-semi-space-size=8'], undefined)).toBe(true);
    expect(youngGenerationSetAtStart([], '--trace-gc  --max-semi-space-size=16')).toBe(true);
    expect(youngGenerationSetAtStart([], '--max_semi_space_size=16')).toBe(true);
    expect(youngGenerationSetAtStart(['--semi-space-growth-factor=1'], '')).toBe(true);
    expect(youngGenerationSetAtStart(['--max-semi-space-sizes=1'], '')).toBe(false);
  });
});
