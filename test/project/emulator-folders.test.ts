/**
 * The emulator's data/ and search/ sub-folders reach each other only through their index.ts
 * (.dependency-cruiser.cjs, checked by `npm run lint`): the rules fire on a small tree that reaches
 * past an index, and stay quiet on imports through an index or inside one sub-folder.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkDependencies } from '../../scripts/check-deps.js';
import { DEPENDENCY_CONFIG, fixtureTrees, REPO } from '../helpers/dependency-fixture.js';

const repo = REPO;
const config = DEPENDENCY_CONFIG;
const trees = fixtureTrees('fx-emu-deps-');
const tree = trees.tree;
afterAll(async () => trees.close());

describe('emulator sub-folders', () => {
  it('fire when a file reaches past a sub-folder index, from outside or from another sub-folder', async () => {
    const dir = await tree({
      'src/emulator/data/fields/keys.ts': 'export const k = 1;\n',
      'src/emulator/data/fields/index.ts': "export { k } from './keys.js';\n",
      'src/emulator/data/rows/rows.ts':
        "import { k } from '../fields/keys.js';\nimport { k as k2 } from '../fields/index.js';\nexport const r = k + k2;\n",
      'src/emulator/data/rows/company.ts': "import { r } from './rows.js';\nexport const c = r;\n",
      'src/emulator/data/rows/index.ts': "export { c } from './company.js';\n",
      'src/emulator/data/load-store.ts':
        "import { r } from './rows/rows.js';\nimport { c } from './rows/index.js';\nexport const s = r + c;\n",
      'src/emulator/search/query/scope.ts':
        "import { r } from '../../data/rows/rows.js';\nexport const q = r;\n",
    });
    const r = await checkDependencies(['src'], { cwd: dir, configFile: config });
    expect(r.violations.map((v) => `${v.rule}: ${v.from} → ${v.to}`).sort()).toEqual([
      'emulator-subfolders-reach-each-other-through-their-index: src/emulator/data/rows/rows.ts → src/emulator/data/fields/keys.ts',
      'emulator-subfolders-reach-each-other-through-their-index: src/emulator/search/query/scope.ts → src/emulator/data/rows/rows.ts',
      'emulator-subfolders-through-their-index: src/emulator/data/load-store.ts → src/emulator/data/rows/rows.ts',
    ]);
  });

  it('each have an index.ts opening with a comment that says what the folder is, and hold at most 15 files', async () => {
    for (const parent of ['data', 'search']) {
      const root = join(repo, 'src', 'emulator', parent);
      const subs = (await readdir(root, { withFileTypes: true })).filter((e) => e.isDirectory());
      expect(subs.length).toBeGreaterThan(0);
      for (const sub of [{ name: '.' }, ...subs]) {
        const files = await readdir(join(root, sub.name));
        expect(files.length, `src/emulator/${parent}/${sub.name}`).toBeLessThanOrEqual(15);
        if (sub.name === '.') continue;
        const index = await readFile(join(root, sub.name, 'index.ts'), 'utf8');
        expect(index, `src/emulator/${parent}/${sub.name}/index.ts`).toMatch(/^\/\*\*\s+\S/);
      }
    }
  });
});
