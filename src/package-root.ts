/**
 * The package's root folder: the nearest one above this module that holds package.json. Files read
 * at run time (config/, data/sec/, package.json) resolve from it, so they are found alike from the
 * TypeScript sources (src/), the compiled build/src/ of a checkout or of the npm package, and the image.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function findRoot(from: string): string {
  for (let dir = from; ;) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    const up = dirname(dir);
    if (up === dir)
      throw new Error(`filings-export: no package.json above ${from}, so config/ and data/ cannot be found`);
    dir = up;
  }
}

export const PACKAGE_ROOT = findRoot(dirname(fileURLToPath(import.meta.url)));

/** A path inside the package: `packagePath('config', 'defaults.yaml')`. */
export function packagePath(...parts: string[]): string {
  return join(PACKAGE_ROOT, ...parts);
}
