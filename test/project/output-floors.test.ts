/**
 * The dependency rules of src/output (.dependency-cruiser.cjs, run by scripts/check-deps.ts): the
 * rest of src/ and jobs/ see output only through its faces, its sub-folders meet through their
 * index and point down, and the DuckDB-free faces reach no DuckDB. Each fires on a small tree.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { checkDependencies } from '../../scripts/check-deps.js';
import { DEPENDENCY_CONFIG, fixtureTrees } from '../helpers/dependency-fixture.js';

const config = DEPENDENCY_CONFIG;
const trees = fixtureTrees('fx-output-deps-');
const tree = trees.tree;
afterAll(async () => trees.close());

describe('output floors', () => {
  it('fires when src/ reaches into output past its faces, or an output sub-folder past an index or upwards', async () => {
    const dir = await tree({
      'src/output/index.ts':
        "export { p } from './catalog/index.js';\nexport { w } from './staging/part-writer.js';\n",
      'src/output/storage/index.ts': "export { k } from './keys.js';\n",
      'src/output/storage/keys.ts': "import { p } from '../catalog/index.js';\nexport const k = p;\n",
      'src/output/catalog/index.ts': "export { p } from './paths.js';\n",
      'src/output/catalog/paths.ts': 'export const p = 1;\n',
      'src/output/staging/index.ts': "export { w } from './part-writer.js';\n",
      'src/output/staging/part-writer.ts': "import { p } from '../catalog/paths.js';\nexport const w = p;\n",
      'src/output/readers/index.ts': "export { v } from './verify.js';\n",
      'src/output/readers/verify.ts': "import { w } from '../staging/index.js';\nexport const v = w;\n",
      'src/output/readers/ddl-dialects.ts': "export const D = ['duckdb'];\n",
      'src/pipeline/ok.ts':
        "import { p } from '../output/index.js';\nimport { k } from '../output/storage/index.js';\n" +
        "import { D } from '../output/readers/ddl-dialects.js';\nexport const ok = [p, k, D];\n",
      'src/pipeline/past.ts': "import { p } from '../output/catalog/paths.js';\nexport const past = p;\n",
      'jobs/part.ts': "import { v } from '../src/output/readers/index.js';\nexport const x = v;\n",
    });
    const r = await checkDependencies(['src', 'jobs'], { cwd: dir, configFile: config });
    expect(r.violations.map((v) => `${v.rule}: ${v.from} → ${v.to}`).sort()).toEqual([
      'output-index-over-subfolder-faces: src/output/index.ts → src/output/staging/part-writer.ts',
      'output-only-through-its-faces: jobs/part.ts → src/output/readers/index.ts',
      'output-only-through-its-faces: src/pipeline/past.ts → src/output/catalog/paths.ts',
      'output-subfolders-point-down: src/output/storage/keys.ts → src/output/catalog/index.ts',
      'output-subfolders-through-their-index: src/output/staging/part-writer.ts → src/output/catalog/paths.ts',
    ]);
  });

  it('fires when a DuckDB-free face of output reaches DuckDB', async () => {
    const dir = await tree({
      'node_modules/@duckdb/node-api/package.json': JSON.stringify({
        name: '@duckdb/node-api',
        main: 'index.js',
      }),
      'node_modules/@duckdb/node-api/index.js': 'exports.DuckDBInstance = class {};\n',
      'src/output/convert/index.ts': "export { d } from './duckdb.js';\n",
      'src/output/convert/duckdb.ts':
        "import { DuckDBInstance } from '@duckdb/node-api';\nexport const d = DuckDBInstance;\n",
      'src/output/catalog/index.ts': "export { p } from './paths.js';\n",
      'src/output/catalog/paths.ts': "import { d } from '../convert/index.js';\nexport const p = d;\n",
    });
    const r = await checkDependencies(['src'], { cwd: dir, configFile: config });
    expect(r.violations.map((v) => `${v.rule}: ${v.from} → ${v.to}`).sort()).toEqual([
      'output-light-faces-load-no-duckdb: src/output/catalog/index.ts → node_modules/@duckdb/node-api/index.js',
      'output-subfolders-point-down: src/output/catalog/paths.ts → src/output/convert/index.ts',
    ]);
  });
});
