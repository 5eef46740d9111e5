#!/usr/bin/env node
// Compiles src/ and jobs/ to JavaScript in build/src/ and build/jobs/, with .d.ts declarations and
// source maps holding the TypeScript (the package ships no src/), then bundles the CLI and the job
// processors into build/cli/ (scripts/bundle-cli.mjs): `npm run build`, `npm test`, and
// `prepack` before `npm pack`/`npm publish`. bin/filings-export.mjs runs build/ while it is newer
// than every source file and the TypeScript through tsx otherwise, so an edit never runs stale code;
// the installed package and the image always run it. Compiled, a command starts in ~0.2 s instead of
// ~0.5-1 s and a worker holds no loader thread (~30 MB less; docs/decisions.md).
import { execFileSync } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleCli } from './bundle-cli.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'build');

let tsc;
try {
  tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
} catch {
  tsc = undefined;
}
if (tsc === undefined || !existsSync(join(root, 'src')) || !existsSync(join(root, 'tsconfig.build.json'))) {
  console.error('build: needs TypeScript (npm install) and the sources (src/, tsconfig.build.json)');
  process.exit(1);
}

// The stamp goes first and comes back last: a build that stops half way is never run.
rmSync(out, { recursive: true, force: true });
execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], {
  stdio: 'inherit',
  cwd: root,
});
await bundleCli(root);
writeFileSync(join(out, '.stamp'), `${new Date().toISOString()}\n`);
