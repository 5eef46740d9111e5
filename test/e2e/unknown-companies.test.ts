/**
 * A typo never empties a warehouse (issue 36): with the real CLI, Redis, the emulator over HTTP, a
 * DuckDB file and the test setup's PostgreSQL. Apple is exported and loaded into both; then a run
 * of an unknown ticker exits 1 naming it, publishes nothing and leaves `latest` alone, and loading
 * again keeps every Apple row. A run with some companies unknown publishes the rest and names each
 * missing one as it was typed, with the API's answer, in its output and in `status`; the SEC's
 * CIK forms and a lower-case ticker are the same company.
 */
import { spawn } from 'node:child_process';
import { readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { dashboardState } from '../../src/dashboard/state.js';
import { openDuck, type DuckSession } from '../../src/output/convert/duckdb.js';
import { startPipelineHarness, type PipelineHarness } from '../helpers/pipeline.js';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'filings-export.mjs');
const DATASETS = 'series_catalog,facts_full';

let h: PipelineHarness;
let duck: DuckSession;
let admin: pg.Client;
let pgUrl: string;
let duckPath: string;
let appleRows: number;

interface Cli {
  code: number | null;
  stdout: string;
  stderr: string;
}

function cli(args: string[]): Promise<Cli> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: h.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** `run --local` of these companies; the JSON line it ends with. */
async function run(tickers: string, id: string): Promise<Cli & { result: Record<string, unknown> }> {
  const r = await cli(['run', '--tickers', tickers, '--datasets', DATASETS, '--snapshot-id', id, '--local']);
  const last = r.stdout.trim().split('\n').at(-1) ?? '';
  return { ...r, result: JSON.parse(last) as Record<string, unknown> };
}

async function loadBoth(): Promise<void> {
  for (const into of [`duckdb:${duckPath}`, pgUrl]) {
    const r = await cli(['load', '--into', into]);
    expect(r.code, `load --into ${into}: ${r.stderr}`).toBe(0);
  }
}

async function duckCount(table: string): Promise<number> {
  await duck.run(`ATTACH '${duckPath}' AS wh (READ_ONLY)`);
  try {
    const [row] = await duck.all(`SELECT count(*)::INTEGER AS n FROM wh.main.${table}`);
    return Number(row?.n);
  } finally {
    await duck.run('DETACH wh');
  }
}

async function pgCount(table: string): Promise<number> {
  const c = new pg.Client({ connectionString: pgUrl });
  await c.connect();
  try {
    return Number((await c.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n);
  } finally {
    await c.end();
  }
}

const latest = (): Promise<string> => readFile(join(h.outDir, 'latest'), 'utf8');

beforeAll(async () => {
  h = await startPipelineHarness({ config: { 'output.formats': ['parquet'] } });
  duck = await openDuck({ threads: 1 });
  const base = inject('postgres').url;
  admin = new pg.Client({ connectionString: base });
  await admin.connect();
  const db = `unknown_${process.pid}`;
  await admin.query(`DROP DATABASE IF EXISTS ${db}`);
  await admin.query(`CREATE DATABASE ${db}`);
  pgUrl = base.replace(/\/postgres$/, `/${db}`);
  duckPath = join(h.outDir, '..', `fx-unknown-${process.pid}.duckdb`);
});
afterAll(async () => {
  duck?.close();
  await admin?.end();
  if (duckPath !== undefined) await rm(duckPath, { force: true });
  await h?.close();
});

describe('unknown companies', () => {
  it('an unknown ticker fails its run, publishes nothing, and loading again keeps every Apple row', async () => {
    const apple = await run('AAPL', 'uc-apple');
    expect(apple.code, apple.stderr).toBe(0);
    expect(apple.result).toMatchObject({ status: 'published', not_found: [] });
    appleRows = (apple.result.rows as Record<string, number>).facts_full ?? 0;
    expect(appleRows).toBe(13_364);
    await loadBoth();
    expect(await duckCount('facts_full')).toBe(appleRows);
    expect(await pgCount('facts_full')).toBe(appleRows);
    const latestBefore = await latest();

    const typo = await run('ZZZZZ', 'uc-typo');
    expect(typo.code).toBe(1);
    expect(typo.result).toMatchObject({ status: 'failed', manifest: null });
    expect(typo.result.not_found).toEqual([{ company: 'ZZZZZ', answer: expect.stringMatching(/404/) }]);
    expect(typo.stderr).toContain(
      'snapshot uc-typo failed: no requested company was found (1 company not found: ZZZZZ); nothing published',
    );
    expect(typo.stderr).toMatch(/^not found: ZZZZZ: .*404 Unknown ticker: ZZZZZ/m);
    await expect(stat(join(h.outDir, '_snapshots', 'uc-typo'))).rejects.toThrow(/ENOENT/);
    expect(await latest()).toBe(latestBefore);

    await loadBoth();
    expect(await duckCount('facts_full')).toBe(appleRows);
    expect(await pgCount('facts_full')).toBe(appleRows);
    expect(await duckCount('series_catalog')).toBeGreaterThan(0);
    expect(await pgCount('series_catalog')).toBeGreaterThan(0);
  });

  it('some companies unknown: the rest is published, each missing one named as typed in run and status', async () => {
    const partial = await run('aapl,ZZZZZ,CIK0000000009', 'uc-partial');
    expect(partial.code, partial.stderr).toBe(0);
    expect(partial.result).toMatchObject({ status: 'published', rows: { facts_full: appleRows } });
    expect(partial.result.not_found).toEqual([
      { company: 'ZZZZZ', answer: expect.stringMatching(/404 Unknown ticker: ZZZZZ/) },
      { company: 'CIK0000000009', answer: expect.stringMatching(/404 Unknown CIK: 0000000009/) },
    ]);
    expect(partial.stderr).toMatch(/^snapshot uc-partial published: /m);
    expect(partial.stderr).toMatch(/^not found: ZZZZZ: .*404 Unknown ticker: ZZZZZ/m);
    expect(partial.stderr).toMatch(/^not found: CIK0000000009: .*404 Unknown CIK: 0000000009/m);

    const status = await cli(['status', 'uc-partial']);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/^not found: ZZZZZ: .*\(404 Unknown ticker: ZZZZZ\)$/m);
    expect(status.stdout).toMatch(/^not found: CIK0000000009: .*\(404 Unknown CIK: 0000000009\)$/m);
    const json = await cli(['status', 'uc-partial', '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({
      state: 'published',
      not_found: [{ company: 'ZZZZZ' }, { company: 'CIK0000000009' }],
      not_found_count: 2,
      // The failed run never became a base: unchanged parts still come from Apple's snapshot.
      incremental: { reused_from: 'uc-apple' },
    });
    // The failed run's status names its companies too.
    const failed = await cli(['status', 'uc-typo']);
    expect(failed.stdout).toMatch(/^snapshot uc-typo: FAILED/);
    expect(failed.stdout).toMatch(/^not found: ZZZZZ: /m);
    // And the page's state, where it shows each snapshot's details.
    const page = await dashboardState(h.ctx, Date.now());
    expect(page.snapshots.find((s) => s.id === 'uc-partial')).toMatchObject({
      notFound: [{ company: 'ZZZZZ' }, { company: 'CIK0000000009' }],
      notFoundCount: 2,
    });
  });

  it('CIK0000320193, 0000320193 and 320193 are Apple, once', async () => {
    const ciks = await run('CIK0000320193,0000320193,320193', 'uc-ciks');
    expect(ciks.code, ciks.stderr).toBe(0);
    expect(ciks.stderr).toMatch(/\(1 company x 2 datasets/);
    expect(ciks.result).toMatchObject({
      status: 'published',
      not_found: [],
      rows: { facts_full: appleRows },
    });
  });
});
