#!/usr/bin/env node
// Runs a TypeScript file (benchmarks, maintenance scripts) through tsx: `node bin/run-ts.mjs FILE [ARGS]`.
import { register } from 'tsx/esm/api';
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';

const file = process.argv[2];
if (!file) {
  console.error('usage: node bin/run-ts.mjs FILE.ts [ARGS...]');
  process.exit(2);
}
process.argv.splice(1, 1);
register();
await import(pathToFileURL(resolve(file)).href);
