/**
 * The code's shape (scripts/code-shape.ts): no function in src/ or jobs/ runs over 80 lines and no
 * folder of src/, jobs/, test/ or bench/ holds more than 15 files side by side. The allowlists below
 * are the only exceptions, each with its reason; an entry that no longer matches fails too, so they
 * only shrink.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  crowdedFolders,
  formatCrowdedFolder,
  formatLongFunction,
  longFunctions,
  MAX_FUNCTION_LINES,
  type LongFunction,
} from '../../scripts/code-shape.js';

const repo = join(import.meta.dirname, '..', '..');

/**
 * Functions allowed over the limit, as `file name` → reason. Only declarative tables, and for one
 * session a function in a file another branch is changing, belong here (issues 25 and 27 split
 * every other offender).
 */
const LONG_FUNCTIONS: Record<string, string> = {};

/** Folders allowed over the limit → reason. */
const CROWDED_FOLDERS: Record<string, string> = {};

const keyOf = (f: LongFunction): string => `${f.at.replace(/:\d+$/, '')} ${f.name}`;

const dirs: string[] = [];
afterAll(async () => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

describe('code shape', () => {
  it(`no function in src/ or jobs/ runs over ${MAX_FUNCTION_LINES} lines, allowlist aside`, async () => {
    const found = await longFunctions(['src', 'jobs'], { cwd: repo });
    const offenders = found.filter((f) => LONG_FUNCTIONS[keyOf(f)] === undefined).map(formatLongFunction);
    const stale = Object.keys(LONG_FUNCTIONS).filter((k) => !found.some((f) => keyOf(f) === k));
    expect(offenders, `functions over ${MAX_FUNCTION_LINES} lines (file:line name: length)`).toEqual([]);
    expect(stale, 'allowlisted functions now within the limit: remove them from LONG_FUNCTIONS').toEqual([]);
  });

  it('no folder of src/, jobs/, test/ or bench/ holds more than 15 files, allowlist aside', async () => {
    const found = await crowdedFolders(['src', 'jobs', 'test', 'bench'], { cwd: repo });
    const offenders = found.filter((f) => CROWDED_FOLDERS[f.folder] === undefined).map(formatCrowdedFolder);
    const stale = Object.keys(CROWDED_FOLDERS).filter((k) => !found.some((f) => f.folder === k));
    expect(offenders, 'folders over 15 files').toEqual([]);
    expect(stale, 'allowlisted folders now within the limit: remove them from CROWDED_FOLDERS').toEqual([]);
  });

  it('reports a function over the limit at its file:line with its length, and a crowded folder', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fx-shape-'));
    dirs.push(dir);
    const max = MAX_FUNCTION_LINES;
    const body = (n: number): string =>
      Array.from({ length: n }, (_, i) => `  const v${i} = ${i};`).join('\n');
    await mkdir(join(dir, 'src', 'many'), { recursive: true });
    await writeFile(
      join(dir, 'src', 'a.ts'),
      [
        `export function fits(): void {\n${body(max - 2)}\n}`,
        `export const tooLong = (): void => {\n${body(max - 1)}\n};`,
        `class K {\n  method(): void {\n${body(max + 1)}\n  }\n}\nexport { K };`,
      ].join('\n'),
    );
    for (let i = 0; i < 16; i++) await writeFile(join(dir, 'src', 'many', `f${i}.ts`), '');
    for (let i = 0; i < 15; i++) await writeFile(join(dir, 'src', `g${i}.txt`), '');

    expect((await longFunctions(['src'], { cwd: dir })).map(formatLongFunction)).toEqual([
      // fits spans lines 1..max; tooLong starts after it, the class after that.
      `src/a.ts:${2 * max + 3} method: ${max + 3} lines`,
      `src/a.ts:${max + 1} tooLong: ${max + 1} lines`,
    ]);
    expect((await crowdedFolders(['src'], { cwd: dir })).map(formatCrowdedFolder)).toEqual([
      'src/: 16 files',
      'src/many/: 16 files',
    ]);
  });
});
