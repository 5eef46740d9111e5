/**
 * `load` never empties or shrinks a table silently, with the real CLI against a DuckDB file and
 * the test PostgreSQL: a load that removes companies names them; one that would remove more than
 * half of a table's companies, or leave it empty, is refused in one line with nothing applied,
 * unless --allow-shrink is given. A root with nothing published (a mistyped --out, a bucket that
 * refuses our keys) is an error that creates no database file.
 * Snapshots come from real runs on the emulator (AAPL, MSFT, NVDA, then AAPL alone, …) and, for
 * the empty one, from synthetic parts published through the real output ports.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openDuck, type DuckSession } from '../../src/output/convert/duckdb.js';
import { outputPorts } from '../../src/pipeline/output-adapter.js';
import type { DatasetName } from '../../src/types.js';
import { startPipelineHarness, type PipelineHarness } from '../helpers/pipeline.js';
import { s3rverEnv, startS3 } from '../helpers/s3.js';
import { publishFactParts, stageFactParts } from '../helpers/synthetic-snapshot.js';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'filings-export.mjs');
const DATASETS: DatasetName[] = ['facts_full', 'series_catalog'];

let h: PipelineHarness;
let duck: DuckSession;
let admin: pg.Client;
let pgUrl: string;
let tmp: string;
let duckPath: string;
let targets: string[];

beforeAll(async () => {
  h = await startPipelineHarness({ config: { 'output.formats': ['parquet'] } });
  await h.startWorkers();
  duck = await openDuck({ threads: 1 });
  const base = inject('postgres').url;
  admin = new pg.Client({ connectionString: base });
  await admin.connect();
  const db = `shrink_${process.pid}`;
  await admin.query(`DROP DATABASE IF EXISTS ${db}`);
  await admin.query(`CREATE DATABASE ${db}`);
  pgUrl = base.replace(/\/postgres$/, `/${db}`);
  tmp = await mkdtemp(join(tmpdir(), 'fx-shrink-'));
  duckPath = join(tmp, 'warehouse.duckdb');
  targets = [`duckdb:${duckPath}`, pgUrl];
});
afterAll(async () => {
  duck?.close();
  await admin?.end();
  if (tmp !== undefined) await rm(tmp, { recursive: true, force: true });
  await h?.close();
});

/** `filings-export load ARGS`, run without blocking this process (s3rver answers from it). */
async function load(
  args: string[],
  env: NodeJS.ProcessEnv = h.env,
): Promise<{ status: number | null; out: string; err: string }> {
  const child = spawn(process.execPath, [BIN, 'load', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr.on('data', (b: Buffer) => (err += b.toString()));
  const status = await new Promise<number | null>((resolve) => child.once('close', resolve));
  return { status, out, err };
}

async function run(tickers: string[], id: string): Promise<void> {
  const rec = await h.runToEnd(h.spec(tickers, DATASETS, id));
  expect(rec.state, rec.message ?? '').toBe('published');
}

/** The companies a table holds and the snapshots its ledger lists, read from the database itself. */
async function held(
  into: string,
  dataset: string,
  schema?: string,
): Promise<{ companies: string[]; loaded: string[] }> {
  const companies = `SELECT DISTINCT _requested_ticker AS t FROM ${dataset} ORDER BY 1`;
  const loaded = `SELECT DISTINCT snapshot_id AS s FROM filings_export_loads ORDER BY 1`;
  if (into.startsWith('duckdb:')) {
    await duck.run(`ATTACH '${into.slice('duckdb:'.length)}' AS wh (READ_ONLY)`);
    try {
      await duck.run(`USE wh${schema !== undefined ? `.${schema}` : ''}`);
      return {
        companies: (await duck.all(companies)).map((r) => String(r.t)),
        loaded: (await duck.all(loaded)).map((r) => String(r.s)),
      };
    } finally {
      await duck.run('USE memory');
      await duck.run('DETACH wh');
    }
  }
  const c = new pg.Client({ connectionString: into });
  await c.connect();
  try {
    if (schema !== undefined) await c.query(`SET search_path TO ${schema}`);
    return {
      companies: (await c.query(companies)).rows.map((r: { t: string }) => r.t),
      loaded: (await c.query(loaded)).rows.map((r: { s: string }) => r.s),
    };
  } finally {
    await c.end();
  }
}

describe('load never shrinks a table silently', () => {
  it('refuses a load that removes more than half of the companies, naming them; --allow-shrink applies it', async () => {
    await run(['AAPL', 'MSFT', 'NVDA'], 'sh-1');
    for (const into of targets) expect((await load(['--into', into])).status, into).toBe(0);
    await run(['AAPL'], 'sh-2');
    for (const into of targets) {
      const refused = await load(['--into', into]);
      expect(refused.status, into).toBe(1);
      const lines = refused.err.trim().split('\n');
      expect(lines, refused.err).toHaveLength(1);
      expect(lines[0]).toMatch(/: refusing to shrink tables \(sh-2: /);
      for (const d of DATASETS) expect(lines[0]).toContain(`${d} 2 of 3 companies removed (MSFT, NVDA)`);
      expect(lines[0]).toMatch(/nothing was loaded: .*--allow-shrink`.* \[WAREHOUSE_SHRINK_REFUSED\]$/);
      // Nothing applied: the tables and the ledger are those of sh-1.
      for (const d of DATASETS)
        expect(await held(into, d), `${into} ${d}`).toEqual({
          companies: ['AAPL', 'MSFT', 'NVDA'],
          loaded: ['sh-1'],
        });

      const plan = await load(['--into', into, '--dry-run']);
      expect(plan.status, plan.err).toBe(0);
      expect(plan.out).toMatch(
        /facts_full\s+full\s+.*; 2 of 3 companies removed \(MSFT, NVDA\) \(refused without --allow-shrink\)$/m,
      );

      const allowed = await load(['--into', into, '--allow-shrink']);
      expect(allowed.status, allowed.err).toBe(0);
      expect(allowed.out).toMatch(/^loaded sh-2 /);
      expect(allowed.out).toMatch(
        /facts_full\s+full\s+\d+ rows; .*; 2 of 3 companies removed \(MSFT, NVDA\)$/m,
      );
      for (const d of DATASETS)
        expect(await held(into, d), `${into} ${d}`).toEqual({
          companies: ['AAPL'],
          loaded: ['sh-1', 'sh-2'],
        });
    }
  }, 600_000);

  it('a load that removes half of the companies or fewer names them and loads', async () => {
    await run(['AAPL', 'MSFT'], 'sh-3');
    for (const into of targets) {
      const grown = await load(['--into', into]);
      expect(grown.status, grown.err).toBe(0);
      expect(grown.out).not.toMatch(/removed/);
    }
    await run(['MSFT'], 'sh-4');
    for (const into of targets) {
      const r = await load(['--into', into]);
      expect(r.status, r.err).toBe(0);
      expect(r.out).toMatch(/facts_full\s+full\s+\d+ rows; .*; 1 of 2 companies removed \(AAPL\)$/m);
      expect(await held(into, 'facts_full')).toMatchObject({ companies: ['MSFT'] });
    }
  }, 600_000);

  it('refuses a load that would leave a table empty', async () => {
    const root = join(tmp, 'synthetic');
    const ports = await outputPorts({ tmpDir: tmp });
    try {
      const full = await stageFactParts(ports, { root, id: 'e-1', date: '2026-11-20' }, [
        { ticker: 'AAA', cik: '1', rows: 30 },
        { ticker: 'BBB', cik: '2', rows: 20 },
      ]);
      await publishFactParts(ports, { root, id: 'e-1', date: '2026-11-20', formats: ['parquet'] }, full);
      const into = [`duckdb:${join(tmp, 'empty.duckdb')}`, pgUrl];
      for (const t of into) {
        const first = await load(['--out', root, '--into', t, '--schema', 'emptied']);
        expect(first.status, first.err).toBe(0);
      }
      const none = await stageFactParts(ports, { root, id: 'e-2', date: '2026-11-21' }, [
        { ticker: 'AAA', cik: '1', rows: 0 },
        { ticker: 'BBB', cik: '2', rows: 0 },
      ]);
      await publishFactParts(ports, { root, id: 'e-2', date: '2026-11-21', formats: ['parquet'] }, none);
      for (const t of into) {
        const refused = await load(['--out', root, '--into', t, '--schema', 'emptied']);
        expect(refused.status, t).toBe(1);
        expect(refused.err.trim().split('\n')).toHaveLength(1);
        expect(refused.err).toContain(
          '(e-2: facts_core left empty: 2 of 2 companies removed (AAA, BBB)); nothing was loaded',
        );
        expect(await held(t, 'facts_core', 'emptied')).toEqual({
          companies: ['AAA', 'BBB'],
          loaded: ['e-1'],
        });
      }
    } finally {
      await ports.closeOutput();
    }
  }, 300_000);

  it('a root with no published snapshot is an error, and no database file is created', async () => {
    const typo = join(tmp, 'no-such-out');
    const file = join(tmp, 'typo.duckdb');
    const r = await load(['--out', typo, '--into', `duckdb:${file}`]);
    expect(r.status).toBe(1);
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(r.err).toContain(
      `no published snapshot under ${typo}: nothing to load (check --out or output.dir)`,
    );
    expect(r.out).toBe('');
    expect(existsSync(file)).toBe(false);

    // A bucket that refuses our keys: one line, and no file either.
    const s3 = await startS3('shrink-refused');
    try {
      // s3rver refuses an unknown key id (it does not check secrets). NODE_NO_WARNINGS: the AWS
      // SDK's own notice about Node 20 is not the CLI's line.
      const env = {
        ...h.env,
        ...s3rverEnv(s3.endpoint),
        AWS_ACCESS_KEY_ID: 'NOT-A-KEY',
        NODE_NO_WARNINGS: '1',
      };
      const denied = await load(['--out', `s3://${s3.bucket}/out`, '--into', `duckdb:${file}`], env);
      expect(denied.status).toBe(1);
      expect(denied.err.trim().split('\n'), denied.err).toHaveLength(1);
      expect(denied.err).toMatch(
        /could not read the listing of s3:\/\/shrink-refused\/out .*\[STORAGE_UNAVAILABLE\]/,
      );
      expect(existsSync(file)).toBe(false);
    } finally {
      await s3.close();
    }
  }, 300_000);
});
