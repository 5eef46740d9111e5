/**
 * Child process of test/pipeline/one-process/young-generation.test.ts: allocates objects of which many survive
 * a scavenge (what makes V8 grow its young generation), turning the event loop between batches as
 * a pipeline does, with the cap on when YOUNG_CAP=1, and prints the largest new space it saw and
 * in how many batches it was a doubling past the cap or more.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import {
  capYoungGeneration,
  v8Heap,
  YOUNG_GENERATION_CAP_BYTES,
} from '../../../src/runtime/young-generation.js';

const cap = process.env.YOUNG_CAP === '1' ? capYoungGeneration() : undefined;
let most = v8Heap.newSpaceBytes();
let doubled = 0;
let kept: { at: number; text: string }[] = [];
for (let batch = 0; batch < 60; batch++) {
  for (let i = 0; i < 50_000; i++) {
    kept.push({ at: i, text: `row ${i}` });
    if (kept.length > 200_000) kept = [];
  }
  const bytes = v8Heap.newSpaceBytes();
  most = Math.max(most, bytes);
  if (bytes >= 2 * YOUNG_GENERATION_CAP_BYTES) doubled++;
  await nextTurn();
}
cap?.close();
process.stdout.write(JSON.stringify({ most, doubled, batches: 60, kept: kept.length }));
