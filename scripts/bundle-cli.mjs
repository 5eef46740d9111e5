// Bundles the compiled CLI (build/src/cli/main.js) and job processors (build/jobs/index.js) into
// build/cli/ with esbuild: one chunk per lazily imported command instead of hundreds of modules, so a
// short command such as `status` starts with about a third less CPU (docs/decisions.md, "A short
// command starts bundled"). build/src/ stays for the package's library exports (`.`, `./client`,
// `./emulator`) and its .d.ts.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Dependencies bundled into build/cli/: those a short command imports at start, none of which finds
 * files of its own package at run time. Every other dependency stays an import of node_modules
 * (native bindings, worker-thread transports, static UI files, or loaded only by long-lived commands).
 */
export const BUNDLED_DEPENDENCIES = [
  'commander',
  'cron-parser',
  'ioredis',
  'yaml',
  'zod',
  'cli-progress',
  'p-limit',
];

/** The output directory, relative to the package root; bin/run-compiled.mjs imports from it. */
export const CLI_BUNDLE_DIR = join('build', 'cli');

const BANNER = [
  "import { createRequire as __fxCreateRequire } from 'node:module';",
  "import { dirname as __fxDirname } from 'node:path';",
  "import { fileURLToPath as __fxFileURLToPath } from 'node:url';",
  'const require = __fxCreateRequire(import.meta.url);',
  'const __filename = __fxFileURLToPath(import.meta.url);',
  'const __dirname = __fxDirname(__filename);',
].join(' ');

/** Bundles build/src/cli/main.js and build/jobs/index.js (already compiled) into build/cli/. */
export async function bundleCli(root) {
  const { build } = await import('esbuild');
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const unknown = BUNDLED_DEPENDENCIES.filter((d) => !(d in pkg.dependencies));
  if (unknown.length > 0)
    throw new Error(`bundle-cli: not a dependency in package.json: ${unknown.join(', ')}`);
  const external = Object.keys(pkg.dependencies)
    .filter((d) => !BUNDLED_DEPENDENCIES.includes(d))
    .flatMap((d) => [d, `${d}/*`]);
  await build({
    absWorkingDir: root,
    entryPoints: { main: 'build/src/cli/main.js', jobs: 'build/jobs/index.js' },
    outdir: CLI_BUNDLE_DIR,
    chunkNames: 'chunks/[name]-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: `node${pkg.engines.node.replace(/^>=\s*/, '')}`,
    external,
    // Bundled CommonJS dependencies call require() for Node's built-ins and read __dirname (ioredis,
    // in error paths); an ES module has neither.
    banner: { js: BANNER },
    // Chained to build/src's maps, so a stack trace maps back to the TypeScript's lines
    // (--enable-source-maps); the sources themselves are in build/src's maps, not copied again.
    sourcemap: 'linked',
    sourcesContent: false,
    legalComments: 'none',
    logLevel: 'warning',
  });
}
