/**
 * The dependency check of `npm run lint` (scripts/check-deps.ts with .dependency-cruiser.cjs): it
 * passes on this repository, and it fires on a small tree that breaks each floor, so it cannot
 * pass silently.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { checkDependencies } from '../../scripts/check-deps.js';
import { DEPENDENCY_CONFIG, fixtureTrees, REPO } from '../helpers/dependency-fixture.js';

const repo = REPO;
const config = DEPENDENCY_CONFIG;
const trees = fixtureTrees('fx-deps-');
const tree = trees.tree;
afterAll(async () => trees.close());

describe('dependency floors', () => {
  it('this repository keeps every floor and has no folder cycle', async () => {
    const r = await checkDependencies(['src', 'jobs'], { cwd: repo, configFile: config });
    expect(r.violations).toEqual([]);
    expect(r.cycles).toEqual([]);
  });

  it('fires when src/ imports jobs/, the budget imports the pipeline, or the emulator the exporter', async () => {
    const dir = await tree({
      'jobs/part.ts': 'export const x = 1;\n',
      'src/pipeline/flow.ts': "import { x } from '../../jobs/part.js';\nexport const y = x;\n",
      'src/budget/gate.ts': "import { y } from '../pipeline/flow.js';\nexport const z = y;\n",
      'src/errors.ts': 'export class E extends Error {}\n',
      'src/emulator/server.ts': "import { E } from '../errors.js';\nexport const s = new E();\n",
      'src/cli/run.ts': "import { s } from '../emulator/server.js';\nexport const r = s;\n",
    });
    const r = await checkDependencies(['src', 'jobs'], { cwd: dir, configFile: config });
    expect(r.violations.map((v) => `${v.rule}: ${v.from} → ${v.to}`).sort()).toEqual([
      'budget-knows-only-the-key: src/budget/gate.ts → src/pipeline/flow.ts',
      'emulator-boundary: src/emulator/server.ts → src/errors.ts',
      'exporter-never-imports-emulator-internals: src/cli/run.ts → src/emulator/server.ts',
      'lower-floors-below-pipeline: src/budget/gate.ts → src/pipeline/flow.ts',
      'src-never-imports-jobs: src/pipeline/flow.ts → jobs/part.ts',
    ]);
  });

  it('lets the client and the emulator share src/contract, and fires when the emulator reads the client or the contract the exporter', async () => {
    const dir = await tree({
      'src/types.ts': 'export type T = number;\n',
      'src/contract/openapi.gen.ts': 'export interface paths { a: 1 }\n',
      'src/contract/contract-types.ts':
        "import type { paths } from './openapi.gen.js';\nimport type { T } from '../types.js';\nexport type P = paths | T;\n",
      'src/api/client.ts': "import type { P } from '../contract/contract-types.js';\nexport type C = P;\n",
      'src/emulator/routes.ts':
        "import type { P } from '../contract/contract-types.js';\nexport type R = P;\n",
      'src/emulator/store.ts': "import type { C } from '../api/client.js';\nexport type S = C;\n",
    });
    const r = await checkDependencies(['src'], { cwd: dir, configFile: config });
    expect(r.violations.map((v) => `${v.rule}: ${v.from} → ${v.to}`).sort()).toEqual([
      'contract-imports-nothing: src/contract/contract-types.ts → src/types.ts',
      'emulator-boundary: src/emulator/store.ts → src/api/client.ts',
    ]);
  });

  it('fires when the pipeline is reached past its index, or its sub-folders past theirs, or upwards', async () => {
    const dir = await tree({
      'src/pipeline/record/r.ts': 'export const r = 1;\n',
      'src/pipeline/record/index.ts': "export { r } from './r.js';\n",
      'src/pipeline/record/up.ts': "import { ok } from '../queue/index.js';\nexport const u = ok;\n",
      'src/pipeline/part/p.ts': "import { r } from '../record/index.js';\nexport const p = r;\n",
      'src/pipeline/part/index.ts': "export { p } from './p.js';\n",
      'src/pipeline/part/wired.ts': "import { c } from '../context.js';\nexport const w = c;\n",
      'src/pipeline/queue/q.ts': "import { p } from '../part/p.js';\nexport const q = p;\n",
      'src/pipeline/queue/ok.ts': "import { p } from '../part/index.js';\nexport const ok = p;\n",
      'src/pipeline/queue/index.ts': "export { q } from './q.js';\nexport { ok } from './ok.js';\n",
      'src/pipeline/context.ts': "import { q } from './queue/index.js';\nexport const c = q;\n",
      'src/pipeline/exporter.ts': "import { r } from './record/r.js';\nexport const e = r;\n",
      'src/pipeline/index.ts': "export { c } from './context.js';\nexport { e } from './exporter.js';\n",
      'src/cli/run.ts': "import { c } from '../pipeline/index.js';\nexport const x = c;\n",
      'src/dashboard/state.ts': "import { c } from '../pipeline/context.js';\nexport const s = c;\n",
      'jobs/part.ts': "import { p } from '../src/pipeline/part/index.js';\nexport const j = p;\n",
    });
    const r = await checkDependencies(['src', 'jobs'], { cwd: dir, configFile: config });
    expect(r.violations.map((v) => `${v.rule}: ${v.from} → ${v.to}`).sort()).toEqual([
      'pipeline-only-through-its-index: jobs/part.ts → src/pipeline/part/index.ts',
      'pipeline-only-through-its-index: src/dashboard/state.ts → src/pipeline/context.ts',
      'pipeline-subfolders-below-the-wiring: src/pipeline/part/wired.ts → src/pipeline/context.ts',
      'pipeline-subfolders-one-way: src/pipeline/record/up.ts → src/pipeline/queue/index.ts',
      'pipeline-subfolders-through-their-index: src/pipeline/queue/q.ts → src/pipeline/part/p.ts',
      'pipeline-wiring-through-subfolder-index: src/pipeline/exporter.ts → src/pipeline/record/r.ts',
    ]);
    expect(r.cycles).toEqual([]);
  });

  it('finds a cycle between folders that no file cycle shows', async () => {
    const dir = await tree({
      'src/output/a.ts': "import { d } from '../config/d.js';\nexport const a = d;\n",
      'src/output/index.ts': 'export const b = 2;\n',
      'src/config/c.ts': "import { b } from '../output/index.js';\nexport const c = b;\n",
      'src/config/d.ts': 'export const d = 4;\n',
    });
    const r = await checkDependencies(['src'], { cwd: dir, configFile: config });
    expect(r.violations).toEqual([]);
    expect(r.cycles).toEqual(['src/config → src/output → src/config']);
  });
});
