#!/usr/bin/env node
// Entry point of the `filings-export` CLI, and the composition root: it hands the CLI the job
// definitions of jobs/ (loaded only by commands that run workers), so src/ never imports jobs/.
// The installed package has no sources and always runs the compiled build/. A checkout runs build/
// while it is current (`npm run build`), else the TypeScript sources through tsx (a dev dependency),
// so it works right after `npm install` and after any edit.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chooseEntry } from './entry-point.mjs';
import { runCompiled } from './run-compiled.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
let entry;
try {
  entry = chooseEntry(root);
} catch (err) {
  console.error(`filings-export: ${err instanceof Error ? err.message : String(err)} [CONFIG_INVALID]`);
  process.exit(2);
}
if (entry === 'build') {
  await runCompiled(process.argv);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  const { runCli } = await import('../src/cli/main.ts');
  await runCli(process.argv, {
    loadJobs: async () => (await import('../jobs/index.ts')).jobDefinitions,
  });
}
