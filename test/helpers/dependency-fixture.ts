/**
 * Small source trees for the dependency rules' tests: each test writes the files that break (or
 * keep) a rule into a temp folder, then runs the project's check on it. Folders go on close().
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

/** The repository's root and its dependency-cruiser config. */
export const REPO = join(import.meta.dirname, '..', '..');
export const DEPENDENCY_CONFIG = join(REPO, '.dependency-cruiser.cjs');

export interface FixtureTrees {
  /** Writes `files` (path → text) plus a NodeNext tsconfig.json into a new temp folder. */
  tree(files: Record<string, string>): Promise<string>;
  close(): Promise<void>;
}

export function fixtureTrees(prefix: string): FixtureTrees {
  const dirs: string[] = [];
  return {
    async tree(files) {
      const dir = await mkdtemp(join(tmpdir(), prefix));
      dirs.push(dir);
      const all: Record<string, string> = {
        'tsconfig.json': JSON.stringify({
          compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext' },
        }),
        ...files,
      };
      for (const [path, text] of Object.entries(all)) {
        await mkdir(dirname(join(dir, path)), { recursive: true });
        await writeFile(join(dir, path), text);
      }
      return dir;
    },
    async close() {
      await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
    },
  };
}
