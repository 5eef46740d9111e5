/**
 * The floors of filings-export, checked in `npm run lint` (scripts/check-deps.ts): nothing may
 * import a floor above its own. Top to bottom:
 *   bin (composition root) → jobs/ → src/cli → src/pipeline → src/{budget, output, api, config, infra}
 *   → src/{errors, types, log}.ts → src/contract;   src/emulator → the contract only
 *   (src/api/openapi.gen.ts, src/contract/), src/package-root.ts (where bundled files are) and its own modules.
 * Folder-level cycles are checked by the script as well (dependency-cruiser sees files only).
 */
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'src-never-imports-jobs',
      comment:
        'jobs/ is the top floor: it uses src/, src/ never imports jobs/ (the entry injects processors).',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^jobs/' },
    },
    {
      name: 'budget-knows-only-the-key',
      comment: 'src/budget is about one API key: no pipeline, output, CLI, emulator, and no BullMQ.',
      severity: 'error',
      from: { path: '^src/budget/' },
      to: { path: '^src/(pipeline|output|cli|emulator|infra)/|node_modules/bullmq/' },
    },
    {
      name: 'emulator-boundary',
      comment:
        'The emulator depends only on the contract, the package root and its own modules (and npm packages).',
      severity: 'error',
      from: { path: '^src/emulator/' },
      to: {
        path: '^src/',
        pathNot: [
          '^src/emulator/',
          '^src/api/openapi\\.gen\\.ts$',
          '^src/contract/',
          '^src/package-root\\.ts$',
        ],
      },
    },
    {
      name: 'emulator-subfolders-through-their-index',
      comment:
        'Outside a sub-folder of src/emulator/data or src/emulator/search, only its index.ts (its public face) may be imported.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/emulator/(data|search)/[^/]+/' },
      to: {
        path: '^src/emulator/(data|search)/[^/]+/',
        pathNot: '^src/emulator/(data|search)/[^/]+/index\\.ts$',
      },
    },
    {
      name: 'emulator-subfolders-reach-each-other-through-their-index',
      comment:
        'A sub-folder of src/emulator/data or src/emulator/search imports another one only through its index.ts.',
      severity: 'error',
      from: { path: '^src/emulator/(data|search)/([^/]+)/' },
      to: {
        path: '^src/emulator/(data|search)/[^/]+/',
        pathNot: ['^src/emulator/$1/$2/', '^src/emulator/(data|search)/[^/]+/index\\.ts$'],
      },
    },
    {
      name: 'exporter-never-imports-emulator-internals',
      comment: 'Outside the emulator, only its public entry src/emulator/index.ts may be imported.',
      severity: 'error',
      from: { path: '^(src|jobs)/', pathNot: '^src/emulator/' },
      to: { path: '^src/emulator/', pathNot: '^src/emulator/index\\.ts$' },
    },
    {
      name: 'pipeline-below-cli',
      severity: 'error',
      from: { path: '^src/(pipeline|budget|output|api|config|infra|warehouse)/' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'lower-floors-below-pipeline',
      severity: 'error',
      from: { path: '^src/(budget|output|api|config|infra|warehouse)/' },
      to: { path: '^src/pipeline/' },
    },
    {
      name: 'client-below-output-and-budget',
      comment: 'The API client knows neither the budget nor the output.',
      severity: 'error',
      from: { path: '^src/api/' },
      to: { path: '^src/(budget|output)/' },
    },
    {
      name: 'no-circular',
      comment: 'No import cycle between files.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default'],
    },
  },
};
