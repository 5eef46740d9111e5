// Chooses what bin/filings-export.mjs runs: the JavaScript in build/ (scripts/build.mjs) while it
// is newer than every file it was compiled from, else the TypeScript sources through tsx. The
// installed package ships build/ without the sources, so it always runs build/.
// FILINGS_EXPORT_ENTRY: `auto` (default), `source` (always tsx), `build` (build/ or an error).
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/** What build/ is made from: the sources, the compiler settings and the build scripts (the bundle's). */
export const INPUTS = [
  'src',
  'jobs',
  'tsconfig.json',
  'tsconfig.build.json',
  'scripts/build.mjs',
  'scripts/bundle-cli.mjs',
];

/** Why build/ cannot be run (a sentence), or undefined when it is current. ~2 ms for 250 files. */
export function staleReason(root) {
  let built;
  try {
    built = statSync(join(root, 'build', '.stamp')).mtimeMs;
  } catch {
    return 'build/ is missing or incomplete (npm run build)';
  }
  for (const input of INPUTS) {
    const path = join(root, input);
    const files = statSync(path).isDirectory()
      ? readdirSync(path, { recursive: true, withFileTypes: true })
          .filter((e) => e.isFile())
          .map((e) => join(e.parentPath ?? e.path, e.name))
      : [path];
    for (const f of files) {
      if (statSync(f).mtimeMs > built)
        return `${relative(root, f)} changed after the last build (npm run build)`;
    }
  }
  return undefined;
}

/** `build` or `source`, from FILINGS_EXPORT_ENTRY and the state of build/; throws on a bad value. */
export function chooseEntry(root, env = process.env) {
  const wanted = env.FILINGS_EXPORT_ENTRY ?? 'auto';
  if (wanted !== 'auto' && wanted !== 'build' && wanted !== 'source')
    throw new Error(`FILINGS_EXPORT_ENTRY must be auto, source or build (got ${JSON.stringify(wanted)})`);
  if (!existsSync(join(root, 'src'))) {
    if (wanted === 'source')
      throw new Error('FILINGS_EXPORT_ENTRY=source: this installation has no TypeScript sources (src/)');
    return 'build';
  }
  if (wanted === 'source') return 'source';
  const stale = staleReason(root);
  if (stale === undefined) return 'build';
  if (wanted === 'build') throw new Error(`FILINGS_EXPORT_ENTRY=build: ${stale}`);
  return 'source';
}
