#!/usr/bin/env node
// Entry point of the container image: the same composition root as bin/filings-export.mjs, over
// the JavaScript `tsc -p tsconfig.build.json` emits in the image's build stage (no tsx at start:
// `worker --help` 0.22 s against 0.70 s warm / 0.91 s cold through tsx; docs/decisions.md).
const { runCli } = await import('../src/cli/main.js');
await runCli(process.argv, {
  loadJobs: async () => (await import('../jobs/index.js')).jobProcessors,
});
