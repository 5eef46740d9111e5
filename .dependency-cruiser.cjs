/**
 * The floors of filings-export, checked in `npm run lint` (scripts/check-deps.ts): nothing may
 * import a floor above its own. Top to bottom:
 *   bin (composition root) → jobs/ → src/cli → src/pipeline → src/{budget, output, api, config, infra, runtime}
 *   → src/{errors, types, log}.ts → src/contract;   src/emulator → the contract only
 *   (src/contract/: the generated OpenAPI types and the vocabulary), src/package-root.ts (where bundled files are), src/listen.ts
 *   (a port that cannot be had, in words) and its own modules.
 * Inside src/output, sub-folders point down (storage → catalog → iceberg → convert → staged-part → publish → readers)
 * and meet through their index.ts (staged-part has a second face, parquet/index.ts, which loads DuckDB);
 * the rest of src/ sees output only through its faces (OUTPUT_FACES).
 * The pipeline has one public face, src/pipeline/index.ts; inside it the wiring (its top-level
 * files) sits over three sub-folders, each reached through its own index.ts, one way:
 *   src/pipeline/*.ts → queue/ → part/ → record/
 * Folder-level cycles are checked by the script as well (dependency-cruiser sees files only).
 */
/** What the rest of src/ and jobs/ may import of src/output (output-only-through-its-faces). */
const OUTPUT_FACES = [
  '^src/output/index\\.ts$',
  '^src/output/(storage|catalog|staged-part|iceberg)/index\\.ts$',
  '^src/output/readers/ddl-dialects\\.ts$',
];
/** src/output's sub-folders from the bottom up (output-subfolders-point-down). */
const OUTPUT_ORDER = ['storage', 'catalog', 'iceberg', 'convert', 'staged-part', 'publish', 'readers'];
/** The faces of src/output's sub-folders, for src/output/index.ts and the sub-folders above them. */
const SUBFOLDER_FACES = ['^src/output/[^/]+/index\\.ts$', '^src/output/staged-part/parquet/index\\.ts$'];

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
        'The emulator depends only on the contract, the package root, src/listen.ts and its own modules (and npm packages).',
      severity: 'error',
      from: { path: '^src/emulator/' },
      to: {
        path: '^src/',
        pathNot: ['^src/emulator/', '^src/contract/', '^src/package-root\\.ts$', '^src/listen\\.ts$'],
      },
    },
    {
      name: 'contract-imports-nothing',
      comment:
        'src/contract (the OpenAPI document, its generated types, the vocabulary) is the floor the client and the emulator share: it imports no other module of src/.',
      severity: 'error',
      from: { path: '^src/contract/' },
      to: { path: '^src/', pathNot: '^src/contract/' },
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
      from: { path: '^src/(pipeline|budget|output|api|config|infra|runtime|warehouse)/' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'lower-floors-below-pipeline',
      severity: 'error',
      from: { path: '^src/(budget|output|api|config|infra|runtime|warehouse)/' },
      to: { path: '^src/pipeline/' },
    },
    {
      name: 'pipeline-only-through-its-index',
      comment:
        'jobs/, the CLI, the dashboard and every other floor allowed to use the pipeline import only its public faces: src/pipeline/index.ts, and status-view.ts for `status` (it loads neither BullMQ nor DuckDB).',
      severity: 'error',
      from: {
        path: '^(src|jobs)/',
        pathNot: '^src/(pipeline|budget|output|api|config|infra|runtime|warehouse)/',
      },
      to: { path: '^src/pipeline/', pathNot: '^src/pipeline/(index|status-view)\\.ts$' },
    },
    {
      name: 'pipeline-subfolders-through-their-index',
      comment:
        'A pipeline sub-folder (record/, part/, queue/) reaches another one only through its index.ts.',
      severity: 'error',
      from: { path: '^src/pipeline/([^/]+)/' },
      to: { path: '^src/pipeline/[^/]+/', pathNot: ['^src/pipeline/$1/', '^src/pipeline/[^/]+/index\\.ts$'] },
    },
    {
      name: 'pipeline-wiring-through-subfolder-index',
      comment:
        "The pipeline's wiring (its own files) reaches a sub-folder only through the sub-folder's index.ts.",
      severity: 'error',
      from: { path: '^src/pipeline/[^/]+\\.ts$' },
      to: { path: '^src/pipeline/[^/]+/', pathNot: '^src/pipeline/[^/]+/index\\.ts$' },
    },
    {
      name: 'pipeline-subfolders-below-the-wiring',
      comment: "A sub-folder of the pipeline never imports the wiring above it (src/pipeline's own files).",
      severity: 'error',
      from: { path: '^src/pipeline/[^/]+/' },
      to: { path: '^src/pipeline/[^/]+\\.ts$' },
    },
    {
      name: 'pipeline-subfolders-one-way',
      comment: 'queue/ → part/ → record/: a lower sub-folder never imports a higher one.',
      severity: 'error',
      from: { path: '^src/pipeline/(record|part)/' },
      to: { path: '^src/pipeline/(part|queue)/', pathNot: '^src/pipeline/$1/' },
    },
    {
      name: 'client-below-output-and-budget',
      comment: 'The API client knows neither the budget nor the output.',
      severity: 'error',
      from: { path: '^src/api/' },
      to: { path: '^src/(budget|output)/' },
    },
    {
      name: 'output-only-through-its-faces',
      comment:
        'Outside src/output, only its faces: index.ts (everything), the DuckDB-free storage/, catalog/, ' +
        'iceberg/ and staged-part/ indexes (the parts worker, `run` and the CLI load no DuckDB), and the leaf readers/ddl-dialects.ts.',
      severity: 'error',
      from: { path: '^(src|jobs)/', pathNot: '^src/output/' },
      to: { path: '^src/output/', pathNot: OUTPUT_FACES },
    },
    {
      name: 'output-light-faces-load-no-duckdb',
      comment:
        'The storage/, catalog/, iceberg/ and staged-part/ faces and the dialect list are public because loading them ' +
        'loads no DuckDB (~30 MB of native code): nothing they import may reach it.',
      severity: 'error',
      from: { path: OUTPUT_FACES.slice(1) },
      to: { path: 'node_modules/@duckdb/', reachable: true },
    },
    {
      name: 'output-subfolders-through-their-index',
      comment: "Inside src/output, a sub-folder reaches another only through that one's index.ts.",
      severity: 'error',
      from: { path: '^src/output/([^/]+)/' },
      to: { path: '^src/output/[^/]+/', pathNot: ['^src/output/$1/', ...SUBFOLDER_FACES] },
    },
    {
      name: 'output-index-over-subfolder-faces',
      comment: "src/output/index.ts re-exports the sub-folders' indexes, never a file past them.",
      severity: 'error',
      from: { path: '^src/output/[^/]+\\.ts$' },
      to: { path: '^src/output/[^/]+/', pathNot: SUBFOLDER_FACES },
    },
    ...OUTPUT_ORDER.slice(0, -1).map((sub, i) => ({
      name: 'output-subfolders-point-down',
      comment: `src/output's sub-folders, bottom to top: ${OUTPUT_ORDER.join(' → ')}; none imports one above it.`,
      severity: 'error',
      from: { path: `^src/output/${sub}/` },
      to: { path: `^src/output/(${OUTPUT_ORDER.slice(i + 1).join('|')})/` },
    })),
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
