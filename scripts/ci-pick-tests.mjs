#!/usr/bin/env node
/**
 * `.ci/run`'s choice of tests for its second Node leg (scripts/lib/pick-tests.mjs):
 *   node scripts/ci-pick-tests.mjs TIMES_JSON SECONDS SLOWER SEED
 * prints the test files to run, one per line, or nothing when the whole suite fits; says on
 * stderr how many fit and which ran on Node 24 only.
 */
import { readFileSync } from 'node:fs';
import { pickTests } from './lib/pick-tests.mjs';

const [timesFile, seconds, slower, seed] = process.argv.slice(2);
if (timesFile === undefined || seconds === undefined || slower === undefined || seed === undefined) {
  process.stderr.write('usage: ci-pick-tests.mjs TIMES_JSON SECONDS SLOWER SEED\n');
  process.exit(2);
}
const times = JSON.parse(readFileSync(timesFile, 'utf8'));
const r = pickTests(times, { seconds: Number(seconds), slower: Number(slower), seed });
const n = Object.keys(times.files).length;
if (r.all) {
  process.stderr.write(
    `=== CI: all ${n} test files fit in the ${seconds} s left: the whole suite runs on this Node too\n`,
  );
} else {
  process.stderr.write(
    `=== CI: ${r.picked.length} of ${n} test files fit in the ${seconds} s left on this Node; ` +
      `the other ${r.left.length} ran on Node 24 only:\n${r.left.map((f) => `  ${f}`).join('\n')}\n`,
  );
  for (const f of r.picked) process.stdout.write(`${f}\n`);
}
