#!/usr/bin/env node
// Entry point of the `filings-export` CLI, and the composition root: it hands the CLI the job
// processors of jobs/ (loaded only by commands that run workers), so src/ never imports jobs/.
// The sources are TypeScript run through tsx, so a checkout works right after `npm install`.
import { register } from 'tsx/esm/api';

register();
const { runCli } = await import('../src/cli/main.ts');
await runCli(process.argv, {
  loadJobs: async () => (await import('../jobs/index.ts')).jobProcessors,
});
