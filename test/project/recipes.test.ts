/**
 * CONTRIBUTING.md's recipes name the one place each fact is stated; everything else derives it.
 * These tests read every list a recipe relies on against its source, so a list that drifts (or a
 * second copy that comes back) fails here, naming what is out of step.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { Command, type Option } from 'commander';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { B2B_OPERATIONS, FilingsClient, STREAM_OPERATIONS } from '../../src/api/index.js';
import { register as registerDdl } from '../../src/cli/commands/ddl.js';
import { loadConfig } from '../../src/config/load.js';
import { DATASETS, DEFAULT_DATASETS } from '../../src/datasets/index.js';
import { B2B_ROUTES } from '../../src/emulator/server/routes/index.js';
import { DDL_DIALECTS } from '../../src/output/index.js';
import { DDL_DIALECTS as LEAF_DDL_DIALECTS } from '../../src/output/readers/ddl-dialects.js';
import * as pipelineFace from '../../src/pipeline/index.js';
import { JOB_TYPES } from '../../src/pipeline/queue/job-payloads.js';
import { ENGINES, type Engine } from '../../src/warehouse/table-columns.js';
import { parseTarget, TARGET_SYNTAX } from '../../src/warehouse/target.js';

const text = (path: string): Promise<string> => readFile(new URL(`../../${path}`, import.meta.url), 'utf8');

describe('recipe: add a dataset (one registry entry)', () => {
  it('config/defaults.yaml leaves the default set to the registry, and the config takes it from there', async () => {
    const defaults = parse(await text('config/defaults.yaml')) as Record<string, unknown>;
    expect(Object.keys(defaults)).not.toContain('datasets');
    expect(loadConfig({ env: {} }).datasets).toEqual([...DEFAULT_DATASETS]);
  });

  it("README's demo names the registry's default set", async () => {
    const listed = /runs a snapshot of the default datasets \(([^)]*)\)/.exec(await text('README.md'));
    expect(listed?.[1]?.split(', ').map((d) => d.replaceAll('`', ''))).toEqual([...DEFAULT_DATASETS]);
  });

  it('docs/output.md names every dataset', async () => {
    const doc = await text('docs/output.md');
    for (const d of DATASETS) expect(doc, d).toContain(d);
  });
});

describe('recipe: add a warehouse dialect (DDL_DIALECTS and its table rows)', () => {
  const dialectOption = (): Option => {
    const program = new Command();
    registerDdl(program);
    const option = program.commands
      .find((c) => c.name() === 'ddl')
      ?.options.find((o) => o.long === '--dialect');
    if (!option?.parseArg) throw new Error('ddl has no --dialect parser');
    return option;
  };

  it("the CLI's --dialect accepts exactly DDL_DIALECTS and its help lists them", () => {
    const option = dialectOption();
    expect(DDL_DIALECTS).toBe(LEAF_DDL_DIALECTS);
    for (const d of DDL_DIALECTS) expect(option.parseArg!(d, undefined)).toBe(d);
    expect(() => option.parseArg!('postgres-not-a-dialect', undefined)).toThrow(/--dialect must be one of/);
    expect(option.description).toBe(`one of ${DDL_DIALECTS.join(', ')}`);
  });

  it("docs/output.md's ddl heading lists DDL_DIALECTS", async () => {
    const heading = /^## `filings-export ddl --dialect ([a-z|]+) /m.exec(await text('docs/output.md'));
    expect(heading?.[1]?.split('|')).toEqual([...DDL_DIALECTS]);
  });
});

describe('recipe: add an emulator operation (contract, route, client method)', () => {
  it("B2B_OPERATIONS is the contract's /api/b2b/ POST paths, each once", async () => {
    const contract = parse(await text('src/contract/openapi.yaml')) as {
      paths: Record<string, { post?: unknown }>;
    };
    const keyed = Object.keys(contract.paths)
      .filter((p) => p.startsWith('/api/b2b/') && contract.paths[p]?.post !== undefined)
      .map((p) => p.slice('/api/b2b/'.length));
    expect(new Set(B2B_OPERATIONS).size).toBe(B2B_OPERATIONS.length);
    expect([...B2B_OPERATIONS].sort()).toEqual(keyed.sort());
    for (const op of STREAM_OPERATIONS) expect(B2B_OPERATIONS, op).toContain(op);
  });

  it("the emulator's B2B_ROUTES serve every operation, each once", () => {
    const ids = B2B_ROUTES.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual([...B2B_OPERATIONS].sort());
  });

  it('the client has a method per operation, named after its id', () => {
    const client = FilingsClient.prototype as unknown as Record<string, unknown>;
    for (const op of B2B_OPERATIONS) {
      const method = op.replace(/[/-]([a-z])/g, (_, c: string) => c.toUpperCase());
      expect(typeof client[method], `${op}: FilingsClient.${method}`).toBe('function');
    }
  });
});

describe('recipe: add a job type (contract, definition, list)', () => {
  it('names files that exist', async () => {
    const section = /^## Adding a job type\n\nFiles: ([^]*?)\n\n/m.exec(await text('CONTRIBUTING.md'))?.[1];
    const named = [...(section ?? '').matchAll(/`([^`<>]*\/[^`<>]+\.(?:ts|md))`/g)].map(
      (m) => m[1] as string,
    );
    expect(named).toEqual([
      'src/pipeline/queue/job-payloads.ts',
      'src/pipeline/index.ts',
      'jobs/index.ts',
      'docs/architecture.md',
    ]);
    for (const path of named) await expect(text(path), path).resolves.toBeTruthy();
  });

  it("the pipeline's index hands every contract of JOB_TYPES to jobs/", () => {
    const exported = Object.values(pipelineFace);
    for (const t of JOB_TYPES) expect(exported, t.name).toContain(t);
  });

  it('its test goes where the recipe says: an area folder, none at the top of test/', async () => {
    const section = /^## Adding a job type\n\n([^]*?)\n## /m.exec(await text('CONTRIBUTING.md'))?.[1] ?? '';
    const named = [...section.matchAll(/`(test\/[^`]*<name>-job\.test\.ts)`/g)].map((m) => m[1]);
    expect(named.length).toBeGreaterThan(0);
    for (const path of named) expect(path).toMatch(/^test\/<area>\/<name>-job\.test\.ts$/);
    const top = await readdir(new URL('../', import.meta.url));
    expect(top.filter((f) => f.endsWith('.test.ts'))).toEqual([]);
  });

  it("docs/architecture.md's jobs/ row names every job file", async () => {
    const row = (await text('docs/architecture.md')).split('\n').find((l) => l.startsWith('| `jobs/` |'));
    const files = (await readdir(new URL('../../jobs/', import.meta.url))).filter(
      (f) => f.endsWith('.ts') && f !== 'index.ts',
    );
    expect(files.length).toBe(JOB_TYPES.length);
    for (const f of files) expect(row, f).toContain(`\`${f}\``);
  });
});

/** CONTRIBUTING.md's recipes: each `## Adding …` section's heading and text. */
async function recipes(): Promise<{ heading: string; body: string }[]> {
  const doc = await text('CONTRIBUTING.md');
  return doc
    .split(/^## /m)
    .filter((s) => s.startsWith('Adding '))
    .map((s) => ({ heading: s.slice(0, s.indexOf('\n')), body: s }));
}

/** Whether a path a recipe names is there: a file, a `*` pattern matching one, or `<name>`'s folder. */
async function present(path: string): Promise<boolean> {
  const at = path.includes('<') ? path.slice(0, path.lastIndexOf('/', path.indexOf('<'))) : path;
  if (!at.includes('*'))
    return stat(new URL(`../../${at}`, import.meta.url)).then(
      () => true,
      () => false,
    );
  const dir = at.slice(0, at.lastIndexOf('/'));
  const pattern = new RegExp(
    `^${at
      .slice(dir.length + 1)
      .replace(/\./g, '\\.')
      .replace(/\*/g, '[^/]*')}$`,
  );
  const names = await readdir(new URL(`../../${dir}/`, import.meta.url)).catch(() => [] as string[]);
  return names.some((n) => pattern.test(n));
}

describe('recipe: add a load target (ENGINES, parseTarget, output.load_into)', () => {
  /** One `--into` per engine; keyed by Engine, so a new engine does not compile without its sample. */
  const TARGET_SAMPLES: Record<Engine, string> = {
    duckdb: 'duckdb:out/warehouse.duckdb',
    postgres: 'postgres://loader@db.example:5432/warehouse',
  };

  it('the config takes every engine parseTarget opens, and both name TARGET_SYNTAX', () => {
    expect(Object.keys(TARGET_SAMPLES).sort()).toEqual([...ENGINES].sort());
    for (const [engine, into] of Object.entries(TARGET_SAMPLES)) {
      expect(parseTarget(into).engine).toBe(engine);
      const config = loadConfig({
        env: {},
        flags: [{ path: 'output.load_into', value: into, flag: '--into' }],
      });
      expect(config.output.load_into, engine).toBe(into);
    }
    const bad = 'mysql://loader@db/warehouse';
    expect(() => parseTarget(bad)).toThrow(TARGET_SYNTAX);
    expect(() =>
      loadConfig({ env: {}, flags: [{ path: 'output.load_into', value: bad, flag: '--into' }] }),
    ).toThrow(`must be ${TARGET_SYNTAX}`);
  });
});

describe("the recipes' file lists", () => {
  it('every file a recipe names exists, so following it literally finds each place', async () => {
    const all = await recipes();
    expect(all.map((r) => r.heading)).toEqual(
      expect.arrayContaining([
        'Adding a dataset',
        'Adding an emulator operation',
        'Adding a warehouse dialect',
      ]),
    );
    const missing: string[] = [];
    for (const r of all) {
      const paths = r.body.match(/(?<=`)(?:src|test|docs|config|jobs|scripts|bench)\/[^`\s]+(?=`)/g) ?? [];
      expect(paths.length, r.heading).toBeGreaterThan(0);
      for (const p of paths) if (!(await present(p))) missing.push(`${r.heading}: ${p}`);
    }
    expect(missing).toEqual([]);
  });
});
