/**
 * The npm package as a user installs it: `npm pack` of the checkout (its current build/), installed
 * with `--omit=dev` into an empty project, then used without the checkout: the CLI (`--help`, the
 * packaged emulator over HTTP, `run --local` for one company), every `exports` entry from plain
 * Node ESM, and a TypeScript consumer type-checked against the shipped declarations. Every Node
 * process of the package runs with a resolve hook recording what it loads: no tsx, no .ts source.
 */
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { FilingsClient } from '../../src/api/index.js';
import { DEMO_API_KEY } from '../../src/emulator/demo-key.js';
import { postOperation } from '../helpers/emulator.js';
import { cleanEnv, npm, pack } from '../helpers/npm.js';
import { terminateAll } from '../helpers/processes.js';
// @ts-expect-error: a plain ES module of bin/ (no types).
import { staleReason } from '../../bin/entry-point.mjs';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const TSC = join(repo, 'node_modules', 'typescript', 'bin', 'tsc');
/** tsc reads every shipped declaration: ~30 s alone, over a minute on a loaded machine. */
const TSC_TIMEOUT_MS = 240_000;

let dir: string;
let project: string;
let installed: string;
let tarball: string;
let packed: string[];
let emulator: ChildProcessWithoutNullStreams | undefined;
let emulatorUrl: string;

/**
 * A preload that records every module URL the process resolves into `file` (one per line), from
 * the hooks thread `module.register` starts: the CLI's own imports and any loader it would pull in.
 */
async function writeTracer(file: string): Promise<string> {
  const hooks = `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  appendFileSync(${JSON.stringify(file)}, r.url + '\\n');
  return r;
}`;
  const tracer = `${file}.mjs`;
  await writeFile(
    tracer,
    `import { register } from 'node:module';\nregister(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hooks)}`)});\n`,
  );
  return tracer;
}

/** Runs `node --import TRACER ARGS` in the consumer project; resolves with its output and the URLs it loaded. */
async function runNode(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string; urls: string[] }> {
  const trace = join(dir, `trace-${Math.random().toString(36).slice(2)}.txt`);
  const tracer = await writeTracer(trace);
  const child = spawn(process.execPath, ['--import', tracer, ...args], {
    cwd: project,
    env: cleanEnv({ LOG_LEVEL: 'warn', ...env }),
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  const urls = existsSync(trace) ? (await readFile(trace, 'utf8')).trim().split('\n') : [];
  return { code, stdout, stderr, urls };
}

/**
 * No TypeScript loader and no TypeScript source among the loaded URLs; something of build/ is: the
 * CLI's bundle (build/cli/) for a command, the compiled modules (build/src/) for the library entries.
 */
function expectCompiledOnly(urls: string[], from: 'cli' | 'src' = 'cli'): void {
  expect(urls.filter((u) => /\/node_modules\/(tsx|typescript|esbuild)\//.test(u))).toEqual([]);
  expect(urls.filter((u) => /\.[cm]?ts$/.test(u))).toEqual([]);
  expect(urls.some((u) => u.includes(`/node_modules/filings-export/build/${from}/`))).toBe(true);
}

const bin = (): string => join(installed, 'bin', 'filings-export.mjs');

beforeAll(async () => {
  // The suite's global setup made build/ current, and pack() packs it as it is.
  expect((staleReason as (root: string) => string | undefined)(repo)).toBeUndefined();
  dir = await mkdtemp(join(tmpdir(), 'fx-package-'));
  const info = pack(repo, dir);
  tarball = join(dir, info.filename);
  packed = info.files.map((f) => f.path);
  project = join(dir, 'consumer');
  await mkdir(project);
  await writeFile(
    join(project, 'package.json'),
    JSON.stringify({ name: 'consumer', private: true, type: 'module' }),
  );
  npm(['install', '--omit=dev', '--prefer-offline', '--no-audit', '--no-fund', tarball], project);
  installed = join(project, 'node_modules', 'filings-export');
}, 600_000);

afterAll(async () => {
  if (emulator) await terminateAll([emulator]);
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the packed files', () => {
  it('hold compiled JavaScript, declarations and source maps for every entry, and no TypeScript source', async () => {
    const pkg = JSON.parse(await readFile(join(installed, 'package.json'), 'utf8')) as {
      bin: Record<string, string>;
      exports: Record<string, string | { types: string; default: string }>;
      scripts: Record<string, string>;
      dependencies: Record<string, string>;
    };
    const has = (p: string): boolean => packed.includes(p.replace(/^\.\//, ''));
    for (const [name, target] of Object.entries(pkg.exports)) {
      if (typeof target === 'string') {
        expect(has(target), name).toBe(true);
        continue;
      }
      // `types` first: TypeScript takes the first condition that matches.
      expect(Object.keys(target), name).toEqual(['types', 'default']);
      expect(target.default, name).toMatch(/^\.\/build\/.*\.js$/);
      for (const file of [target.types, target.default, `${target.default}.map`])
        expect(has(file), file).toBe(true);
    }
    for (const file of Object.values(pkg.bin)) expect(has(file), file).toBe(true);
    expect(packed.filter((p) => /\.[cm]?ts$/.test(p) && !p.endsWith('.d.ts'))).toEqual([]);
    expect(packed.filter((p) => /^(src|test|bench|scripts)\//.test(p))).toEqual([]);
    // Nothing runs at install that needs files the package does not ship.
    for (const hook of ['preinstall', 'install', 'postinstall', 'prepare'])
      expect(pkg.scripts[hook], hook).toBeUndefined();
    expect(Object.keys(pkg.dependencies)).not.toContain('tsx');
  });

  it('install with --omit=dev brings no TypeScript tooling', async () => {
    const modules = await readdir(join(project, 'node_modules'));
    for (const dev of ['tsx', 'typescript', 'esbuild', 'vitest']) expect(modules).not.toContain(dev);
  });
});

describe('the installed CLI', () => {
  let emulatorTrace: string;

  // The packaged emulator, traced: the API of the tests below.
  beforeAll(async () => {
    emulatorTrace = join(dir, 'trace-emulator.txt');
    const tracer = await writeTracer(emulatorTrace);
    const child = spawn(
      process.execPath,
      ['--import', tracer, bin(), 'emulator', '--port', '0', '--no-warm'],
      {
        cwd: project,
        env: cleanEnv({ LOG_LEVEL: 'warn' }),
      },
    );
    emulator = child;
    let out = '';
    let err = '';
    child.stderr.on('data', (b: Buffer) => (err += b.toString()));
    emulatorUrl = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (b: Buffer) => {
        out += b.toString();
        const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
        if (m?.[1]) resolve(m[1]);
      });
      child.once('exit', (code) => reject(new Error(`emulator exited ${code}: ${err}`)));
    });
  });

  it('`filings-export --help` runs the compiled JavaScript', async () => {
    const r = await runNode([bin(), '--help']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Usage: filings-export/);
    for (const command of ['run', 'worker', 'emulator', 'status']) expect(r.stdout).toContain(command);
    expectCompiledOnly(r.urls);

    // As a user's shell runs it: npm's link in node_modules/.bin, through the file's `#!` line.
    const linked = spawnSync(join(project, 'node_modules', '.bin', 'filings-export'), ['--help'], {
      cwd: project,
      env: cleanEnv(),
      encoding: 'utf8',
    });
    expect(linked.status, linked.stderr).toBe(0);
    expect(linked.stdout).toBe(r.stdout);
  });

  it('the packaged emulator serves the bundled data over HTTP', async () => {
    const res = await postOperation(emulatorUrl, 'issuer/reference', { ticker: 'AAPL' }, DEMO_API_KEY);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ ticker: 'AAPL' });
    expectCompiledOnly((await readFile(emulatorTrace, 'utf8')).trim().split('\n'));
  });

  it('`run --local` exports one company into a published snapshot with the API rows', async () => {
    const out = join(dir, 'out');
    const r = await runNode(
      [
        bin(),
        'run',
        '--local',
        '--wait',
        '--tickers',
        'AAPL',
        '--datasets',
        'series_catalog',
        '--snapshot-id',
        'pkg-1',
      ],
      {
        FILINGS_API_URL: emulatorUrl,
        FILINGS_API_KEY: DEMO_API_KEY,
        REDIS_URL: inject('redisUrl'),
        FILINGS_EXPORT_PREFIX: `fx-package-${process.pid}-${Date.now()}`,
        FILINGS_EXPORT_OUT: out,
      },
    );
    expect(r.code, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout.trim().split('\n').at(-1) ?? 'null') as {
      status: string;
      rows: Record<string, number>;
      manifest: string;
    };
    expect(result).toMatchObject({
      status: 'published',
      manifest: join(out, '_snapshots', 'pkg-1', 'manifest.json'),
    });
    expect(existsSync(join(out, '_snapshots', 'pkg-1', '_SUCCESS'))).toBe(true);

    const client = new FilingsClient({ baseUrl: emulatorUrl, apiKey: DEMO_API_KEY });
    try {
      let n = 0;
      for await (const _row of (await client.stream('series/catalog', { ticker: 'AAPL' })).rows) n++;
      expect(n).toBeGreaterThan(0);
      expect(result.rows).toEqual({ series_catalog: n });
    } finally {
      await client.close();
    }
    // The writer names the installed package's version (read from its package.json at run time).
    const manifest = JSON.parse(await readFile(result.manifest, 'utf8')) as { writer: { version: string } };
    const { version } = JSON.parse(await readFile(join(installed, 'package.json'), 'utf8')) as {
      version: string;
    };
    expect(manifest.writer.version).toBe(version);
    expectCompiledOnly(r.urls);
  });
});

describe('the library entries', () => {
  /** A known export of each `exports` entry; an entry added without a check here fails the test. */
  const KNOWN: Record<string, { name: string; type: string }> = {
    'filings-export': { name: 'runSnapshot', type: 'function' },
    'filings-export/client': { name: 'FilingsClient', type: 'function' },
    'filings-export/emulator': { name: 'startEmulator', type: 'function' },
    'filings-export/package.json': { name: 'version', type: 'string' },
  };

  it('every `exports` entry imports from plain Node ESM, with no loader', async () => {
    const pkg = JSON.parse(await readFile(join(installed, 'package.json'), 'utf8')) as {
      exports: Record<string, unknown>;
    };
    const entries = Object.keys(pkg.exports).map((k) =>
      k === '.' ? 'filings-export' : `filings-export/${k.slice(2)}`,
    );
    expect(entries.sort()).toEqual(Object.keys(KNOWN).sort());
    const script = `const out = {};
for (const e of ${JSON.stringify(entries)}) {
  const m = e.endsWith('.json') ? (await import(e, { with: { type: 'json' } })).default : await import(e);
  out[e] = Object.fromEntries(Object.entries(m).map(([k, v]) => [k, typeof v]));
}
console.log(JSON.stringify(out));`;
    const r = await runNode(['--input-type=module', '--no-warnings', '-e', script]);
    expect(r.code, r.stderr).toBe(0);
    const types = JSON.parse(r.stdout) as Record<string, Record<string, string>>;
    for (const [entry, { name, type }] of Object.entries(KNOWN))
      expect(types[entry]?.[name], entry).toBe(type);
    expectCompiledOnly(r.urls, 'src');
  });

  it(
    'a TypeScript consumer type-checks against the declarations (nodenext)',
    async () => {
      await writeFile(
        join(project, 'consumer.ts'),
        `import { runSnapshot } from 'filings-export';
import { FilingsClient } from 'filings-export/client';
import { DEMO_API_KEY, startEmulator } from 'filings-export/emulator';

export async function main(): Promise<void> {
  const emulator = await startEmulator({ port: 0 });
  const client = new FilingsClient({ baseUrl: emulator.url, apiKey: DEMO_API_KEY });
  const key: string = DEMO_API_KEY;
  // @ts-expect-error: the declarations type the key as a string (this line fails if they say any).
  const wrong: number = DEMO_API_KEY;
  void [key, wrong, runSnapshot];
  await client.close();
  await emulator.close();
}
`,
      );
      const r = typecheckConsumer(['consumer.ts']);
      expect(r.output).toBe('');
      expect(r.status).toBe(0);
    },
    TSC_TIMEOUT_MS,
  );

  it(
    'every TypeScript example of README.md and docs/ that imports a module type-checks as an installed user copies it',
    async () => {
      const examples = await docExamples();
      // docs/client.md's quick use is one: an example that stops importing would leave this test empty.
      expect(examples.map((e) => e.where)).toContain('docs/client.md');
      const files: string[] = [];
      for (const [i, e] of examples.entries()) {
        const file = `doc-example-${i}.ts`;
        await writeFile(join(project, file), `// ${e.where}\n${e.code}`);
        files.push(file);
      }
      const r = typecheckConsumer(files);
      expect(r.output).toBe('');
      expect(r.status).toBe(0);
    },
    TSC_TIMEOUT_MS,
  );
});

/** Type-checks `files` of the consumer project against the installed package's declarations. */
function typecheckConsumer(files: string[]): { output: string; status: number | null } {
  const tsconfig = JSON.stringify({
    compilerOptions: {
      module: 'nodenext',
      moduleResolution: 'nodenext',
      target: 'es2022',
      strict: true,
      noEmit: true,
      skipLibCheck: false,
      // Node's types come from the checkout: a consumer installs @types/node itself.
      typeRoots: [join(repo, 'node_modules', '@types')],
      types: ['node'],
    },
    files,
  });
  writeFileSync(join(project, 'tsconfig.json'), tsconfig);
  const r = spawnSync(process.execPath, [TSC, '-p', 'tsconfig.json'], { cwd: project, encoding: 'utf8' });
  return { output: r.stdout + r.stderr, status: r.status };
}

/** The ```ts blocks of README.md and docs/*.md that import a module: code a user copies into a project. */
async function docExamples(): Promise<{ where: string; code: string }[]> {
  const docs = (await readdir(join(repo, 'docs'))).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`);
  const out: { where: string; code: string }[] = [];
  for (const where of ['README.md', ...docs.sort()]) {
    const text = await readFile(join(repo, where), 'utf8');
    for (const m of text.matchAll(/^```ts\n([\s\S]*?)^```$/gm))
      if (/^import .* from '[^']+';$/m.test(m[1] ?? '')) out.push({ where, code: m[1] ?? '' });
  }
  return out;
}
