/**
 * docs/architecture.md's module table matches the tree (scripts/render-module-table.ts): every
 * folder of bin/, jobs/ and src/ with its files, and each indexed folder's role from its index.ts
 * comment. `npm run docs:modules` rewrites it; this fails until someone does.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  END,
  expectedModuleTable,
  moduleTableProblems,
  MODULES_DOC,
  START,
  withModuleTable,
} from '../../scripts/render-module-table.js';

const repo = join(import.meta.dirname, '..', '..');
const dirs: string[] = [];
afterAll(async () => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

describe('module table', () => {
  it('docs/architecture.md names every folder and file of bin/, jobs/ and src/ (npm run docs:modules)', async () => {
    const doc = await readFile(join(repo, MODULES_DOC), 'utf8');
    expect(await moduleTableProblems(repo, doc)).toEqual([]);
    expect(withModuleTable(doc, await expectedModuleTable(repo, doc))).toBe(doc);
  });

  it('names a folder missing, a file missing, a stale name, a stale role and a folder without one', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fx-modules-'));
    dirs.push(dir);
    const files: Record<string, string> = {
      'bin/entry.mjs': '',
      'src/a/index.ts':
        '/**\n * Folder a: what it is.\n *\n * Details that stay out of the table.\n */\nexport {};\n',
      'src/a/one.ts': '',
      'src/a/two.ts': '',
      'src/b/x.ts': '',
      'src/c/y.ts': '',
      'jobs/z.ts': '',
    };
    for (const [path, text] of Object.entries(files)) {
      await mkdir(dirname(join(dir, path)), { recursive: true });
      await writeFile(join(dir, path), text);
    }
    const doc = [
      '# x',
      START,
      '| module | role | files |',
      '|---|---|---|',
      '| `bin/` | the entry | `entry.mjs` |',
      '| `jobs/` | jobs | `z.ts` |',
      '| `src/a/` | an old role | `index.ts` `one.ts` `gone.ts` |',
      '| `src/b/` | b, kept \\| as written | `x.ts` |',
      '| `src/old/` | gone | `q.ts` |',
      END,
      '',
    ].join('\n');
    expect(await moduleTableProblems(dir, doc)).toEqual([
      'src/a/: file missing: two.ts',
      'src/a/: stale name: gone.ts',
      'src/a/: role is not its index.ts comment',
      'src/c/: folder missing from the table',
      'src/old/: stale name: no such folder with files',
    ]);
    const fixed = withModuleTable(doc, await expectedModuleTable(dir, doc));
    expect(fixed).toContain('| `src/a/` | Folder a: what it is. | `index.ts` `one.ts` `two.ts` |');
    expect(fixed).toContain('| `src/b/` | b, kept \\| as written | `x.ts` |');
    expect(await moduleTableProblems(dir, fixed)).toEqual([
      'src/c/: no role (give it an index.ts comment or write one in the table)',
    ]);
  });
});
