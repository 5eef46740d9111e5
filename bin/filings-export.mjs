#!/usr/bin/env node
// Entry point of the `filings-export` CLI, and the composition root: it hands the CLI the job
// processors of jobs/ (loaded only by commands that run workers), so src/ never imports jobs/.
// It runs the compiled JavaScript of build/ when that is current (npm install builds it), else the
// TypeScript sources through tsx, so a checkout works right after `npm install` and after any edit.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chooseEntry } from './entry-point.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
let entry;
try {
  entry = chooseEntry(root);
} catch (err) {
  console.error(`filings-export: ${err instanceof Error ? err.message : String(err)} [CONFIG_INVALID]`);
  process.exit(2);
}
if (entry === 'build') {
  const { runCli } = await import('../build/src/cli/main.js');
  await runCli(process.argv, {
    loadJobs: async () => (await import('../build/jobs/index.js')).jobProcessors,
  });
} else {
  const { register } = await import('tsx/esm/api');
  register();
  const { runCli } = await import('../src/cli/main.ts');
  await runCli(process.argv, {
    loadJobs: async () => (await import('../jobs/index.ts')).jobProcessors,
  });
}
