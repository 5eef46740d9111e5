/**
 * Child process of test/pipeline/one-process/young-generation.test.ts: allocates objects of which many survive
 * a scavenge (what makes V8 grow its young generation), turning the event loop between batches as
 * a pipeline does, with the cap on when YOUNG_CAP=1, and prints the largest new space it saw.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { capYoungGeneration, v8Heap } from '../../../src/pipeline/young-generation.js';

const cap = process.env.YOUNG_CAP === '1' ? capYoungGeneration() : undefined;
let most = v8Heap.newSpaceBytes();
let kept: { at: number; text: string }[] = [];
for (let batch = 0; batch < 60; batch++) {
  for (let i = 0; i < 50_000; i++) {
    kept.push({ at: i, text: `row ${i}` });
    if (kept.length > 200_000) kept = [];
  }
  most = Math.max(most, v8Heap.newSpaceBytes());
  await nextTurn();
}
cap?.close();
process.stdout.write(JSON.stringify({ most, kept: kept.length }));
