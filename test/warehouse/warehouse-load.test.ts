/**
 * `load` into a real PostgreSQL (started by the test setup) and a DuckDB file, over two nights on
 * the emulator's clock (2025-10-30, then 2025-11-05 when Apple filed its 10-K): after each load
 * every table equals the snapshot's files row for row; the second load applies `changes` and
 * touches only Apple's rows; loading again is a no-op; a pruned snapshot in between forces a full
 * reload that says why; two loaders at once load once; a loader killed mid-COPY leaves nothing.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openDuck, type DuckSession } from '../../src/output/convert/duckdb.js';
import type { Manifest } from '../../src/output/catalog/manifest.js';
import { openStorage } from '../../src/output/storage/open-storage.js';
import { uploadSnapshot } from '../../src/output/catalog/upload-snapshot.js';
import { incrementalPlanner } from '../../src/pipeline/queue/incremental.js';
import type { DatasetName } from '../../src/types.js';
import { loadSnapshots, openWarehouse, type LoadReport } from '../../src/warehouse/index.js';
import { startPipelineHarness, type PipelineHarness } from '../helpers/pipeline.js';
import { openTestStorage, startS3, type TestS3 } from '../helpers/s3.js';

const TICKERS = ['AAPL', 'AMZN', 'GOOGL', 'META', 'MSFT', 'NVDA', 'TSLA', 'WMT'];
const DATASETS: DatasetName[] = ['series_catalog', 'facts_full', 'evidence'];
const BIN = join(import.meta.dirname, '..', '..', 'bin', 'filings-export.mjs');

let h: PipelineHarness;
let duck: DuckSession;
let admin: pg.Client;
let pgUrl: string;
let duckPath: string;

// Dates and timestamps as the server writes them: compared as text, like the files' values.
const rawText = (oid: number, format?: string): ((v: string) => unknown) =>
  [1082, 1114, 1184].includes(oid) ? (v: string) => v : pg.types.getTypeParser(oid, format as 'text');

beforeAll(async () => {
  h = await startPipelineHarness({
    emulator: { asOf: '2025-10-30' },
    config: { 'output.formats': ['parquet'] },
  });
  await h.startWorkers();
  duck = await openDuck({ threads: 1 });
  const base = inject('postgres').url;
  admin = new pg.Client({ connectionString: base });
  await admin.connect();
  const db = `load_${process.pid}`;
  await admin.query(`DROP DATABASE IF EXISTS ${db}`);
  await admin.query(`CREATE DATABASE ${db}`);
  pgUrl = base.replace(/\/postgres$/, `/${db}`);
  duckPath = join(h.outDir, '..', `fx-warehouse-${process.pid}.duckdb`);
});
afterAll(async () => {
  duck?.close();
  await admin?.end();
  if (duckPath !== undefined) await rm(duckPath, { force: true });
  await h?.close();
});

async function setClock(asOf: string): Promise<void> {
  const res = await fetch(`${h.emulator.url}/_emulator/clock`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ as_of: asOf }),
  });
  expect(res.status).toBe(200);
}

async function night(id: string, date: string): Promise<Manifest> {
  const { spec } = await incrementalPlanner(h.config)({ ...h.spec(TICKERS, DATASETS, id), date }, {});
  const rec = await h.runToEnd(spec);
  expect(rec.state, rec.message ?? '').toBe('published');
  return JSON.parse(await readFile(join(h.outDir, '_snapshots', id, 'manifest.json'), 'utf8')) as Manifest;
}

async function load(
  into: string,
  o: { schema?: string; snapshot?: string; dryRun?: boolean } = {},
): Promise<LoadReport> {
  const warehouse = await openWarehouse(into, o.schema !== undefined ? { schema: o.schema } : {});
  try {
    return await loadSnapshots({
      storage: openStorage(h.outDir),
      warehouse,
      ...(o.snapshot !== undefined ? { snapshot: o.snapshot } : {}),
      ...(o.dryRun === true ? { dryRun: true } : {}),
    });
  } finally {
    await warehouse.close();
  }
}

type Columns = Manifest['datasets'][DatasetName];

/** One row as comparable text: values normalised by column type, lineage left out. */
function canonical(row: Record<string, unknown>, columns: NonNullable<Columns>['columns']): string {
  const out: Record<string, unknown> = {};
  for (const c of columns) {
    if (c.name === '_snapshot_id' || c.name === '_fetched_at') continue;
    const v = row[c.name];
    if (v === null || v === undefined) out[c.name] = null;
    else if (c.type === 'JSON') out[c.name] = sortKeys(typeof v === 'string' ? JSON.parse(v) : v);
    else if (c.type === 'VARCHAR[]') out[c.name] = typeof v === 'string' ? JSON.parse(v) : v;
    else if (c.type === 'DOUBLE') out[c.name] = Number(v);
    else out[c.name] = String(v);
  }
  return JSON.stringify(out);
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v !== null && typeof v === 'object')
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]),
    );
  return v;
}

function duckSelect(columns: NonNullable<Columns>['columns'], from: string): string {
  const cols = columns.map((c) =>
    c.type === 'VARCHAR[]'
      ? `to_json("${c.name}")::VARCHAR AS "${c.name}"`
      : `CAST("${c.name}" AS VARCHAR) AS "${c.name}"`,
  );
  return `SELECT ${cols.join(', ')} FROM ${from}`;
}

/** The snapshot's rows of a dataset, read from its files. */
async function fileRows(m: Manifest, d: DatasetName): Promise<string[]> {
  const ds = m.datasets[d]!;
  const files = m.files.filter((f) => f.dataset === d).map((f) => `'${join(h.outDir, f.path)}'`);
  const rows = await duck.all(
    duckSelect(ds.columns, `read_parquet([${files.join(', ')}], union_by_name = true)`),
  );
  return rows.map((r) => canonical(r, ds.columns)).sort();
}

async function duckTableRows(m: Manifest, d: DatasetName): Promise<string[]> {
  const ds = m.datasets[d]!;
  await duck.run(`ATTACH '${duckPath}' AS wh (READ_ONLY)`);
  try {
    const rows = await duck.all(duckSelect(ds.columns, `wh.main.${d}`));
    return rows.map((r) => canonical(r, ds.columns)).sort();
  } finally {
    await duck.run('DETACH wh');
  }
}

async function pgQuery(sql: string, schema = 'public'): Promise<Record<string, unknown>[]> {
  const c = new pg.Client({ connectionString: pgUrl, types: { getTypeParser: rawText as never } });
  await c.connect();
  try {
    await c.query(`SET search_path TO ${schema}`);
    return (await c.query(sql)).rows as Record<string, unknown>[];
  } finally {
    await c.end();
  }
}

async function pgTableRows(m: Manifest, d: DatasetName, schema = 'public'): Promise<string[]> {
  const ds = m.datasets[d]!;
  return (await pgQuery(`SELECT * FROM ${d}`, schema)).map((r) => canonical(r, ds.columns)).sort();
}

async function expectTablesEqual(m: Manifest): Promise<void> {
  for (const d of DATASETS) {
    const files = await fileRows(m, d);
    expect(files.length, d).toBeGreaterThan(0);
    expect(await duckTableRows(m, d), `duckdb ${d}`).toEqual(files);
    expect(await pgTableRows(m, d), `postgres ${d}`).toEqual(files);
  }
}

function modes(r: LoadReport): Record<string, string> {
  return Object.fromEntries(
    r.snapshots.flatMap((s) => s.datasets.map((d) => [`${s.snapshotId}/${d.dataset}`, d.mode])),
  );
}

describe('load into DuckDB and PostgreSQL', () => {
  let first: Manifest;
  let second: Manifest;

  it('loads the first night in full, typed like the Parquet, and a second run is a no-op', async () => {
    first = await night('ld-1', '2025-10-30');
    // The command itself, for DuckDB.
    const cli = spawnSync(process.execPath, [BIN, 'load', '--into', `duckdb:${duckPath}`], {
      env: h.env,
      encoding: 'utf8',
    });
    expect(cli.status, cli.stderr).toBe(0);
    expect(cli.stdout).toMatch(/^loaded ld-1 \(2025-10-30\) into duckdb:/);
    expect(cli.stdout).toMatch(/facts_full\s+full\s+\d+ rows; first load/);
    const viaPg = await load(pgUrl);
    expect(modes(viaPg)).toEqual({
      'ld-1/series_catalog': 'full',
      'ld-1/facts_full': 'full',
      'ld-1/evidence': 'full',
    });
    await expectTablesEqual(first);

    // Types: exact value_num, dates as dates, arrays as arrays, _extra as JSON, the primary key.
    const types = await pgQuery(
      `SELECT column_name, udt_name FROM information_schema.columns WHERE table_name = 'facts_full' AND column_name IN ('value_num', 'value_scaled_int', 'period_end', 'axis_types', '_extra', '_fetched_at')`,
    );
    expect(Object.fromEntries(types.map((t) => [t.column_name, t.udt_name]))).toEqual({
      value_num: 'numeric',
      value_scaled_int: 'numeric',
      period_end: 'date',
      axis_types: '_text',
      _extra: 'jsonb',
      _fetched_at: 'timestamptz',
    });
    const pk = await pgQuery(
      `SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey) WHERE i.indrelid = 'facts_full'::regclass AND i.indisprimary ORDER BY a.attname`,
    );
    expect(pk.map((r) => r.attname)).toEqual(['_requested_ticker', 'fact_key']);
    const ledger = await pgQuery(
      `SELECT snapshot_id, dataset, mode, rows, reason FROM filings_export_loads ORDER BY seq`,
    );
    expect(ledger).toHaveLength(3);
    expect(
      ledger.every((r) => r.snapshot_id === 'ld-1' && r.mode === 'full' && r.reason === 'first load'),
    ).toBe(true);
    expect(Number(ledger.find((r) => r.dataset === 'facts_full')?.rows)).toBe(
      first.datasets.facts_full?.rows,
    );

    const again = await load(pgUrl);
    expect(again.snapshots).toEqual([]);
    const cliAgain = spawnSync(process.execPath, [BIN, 'load', '--into', `duckdb:${duckPath}`], {
      env: h.env,
      encoding: 'utf8',
    });
    expect(cliAgain.stdout).toMatch(/up to date, nothing to load/);
    expect(await pgQuery('SELECT count(*)::int AS n FROM filings_export_loads')).toEqual([{ n: 3 }]);
  }, 300_000);

  it('refuses a night whose files hold fewer rows than its manifest says; nothing is loaded', async () => {
    // A reader that stops early (DuckDB 1.5.6 can, on a gzip of several members) reads short files.
    const path = join(h.outDir, '_snapshots', 'ld-1', 'manifest.json');
    const text = await readFile(path, 'utf8');
    const m = JSON.parse(text) as Manifest;
    m.datasets.facts_full!.rows += 1;
    const fresh = join(h.outDir, '..', `fx-short-${process.pid}.duckdb`);
    try {
      await writeFile(path, JSON.stringify(m));
      await expect(load(`duckdb:${fresh}`, { snapshot: 'ld-1' })).rejects.toThrow(
        `facts_full: ${first.datasets.facts_full!.rows} rows were read from ld-1's files, its manifest says ${m.datasets.facts_full!.rows}; nothing was loaded`,
      );
      const warehouse = await openWarehouse(`duckdb:${fresh}`);
      try {
        expect(await warehouse.tableColumns('facts_full')).toBeUndefined();
      } finally {
        await warehouse.close();
      }
    } finally {
      await writeFile(path, text);
      await rm(fresh, { force: true });
    }
  });

  it('applies the night Apple filed from `changes`, touching only Apple’s rows', async () => {
    await setClock('2025-11-05');
    second = await night('ld-2', '2025-11-05');
    expect(second.changes?.against).toBe('ld-1');
    const plan = await load(pgUrl, { dryRun: true });
    expect(plan.snapshots[0]?.datasets.find((d) => d.dataset === 'facts_full')?.reason).toMatch(
      /^changes against ld-1: \d+ added/,
    );
    expect(await pgQuery('SELECT count(*)::int AS n FROM filings_export_loads')).toEqual([{ n: 3 }]);
    for (const into of [pgUrl, `duckdb:${duckPath}`]) {
      const r = await load(into);
      expect(modes(r), into).toEqual({
        'ld-2/series_catalog': 'changes',
        'ld-2/facts_full': 'changes',
        'ld-2/evidence': 'changes',
      });
      const evidence = r.snapshots[0]?.datasets.find((d) => d.dataset === 'evidence');
      expect(evidence?.reason).toBe('1 of 8 companies changed since ld-1: AAPL');
    }
    await expectTablesEqual(second);
    // Rows written by this load carry its _snapshot_id: all Apple's; everything else is untouched.
    for (const d of DATASETS) {
      const touched = await pgQuery(
        `SELECT DISTINCT _requested_ticker AS t FROM ${d} WHERE _snapshot_id = 'ld-2'`,
      );
      expect(
        touched.map((r) => r.t),
        d,
      ).toEqual(d === 'series_catalog' && touched.length === 0 ? [] : ['AAPL']);
    }
    const ledger = await pgQuery(
      `SELECT dataset, mode FROM filings_export_loads WHERE snapshot_id = 'ld-2' ORDER BY dataset`,
    );
    expect(ledger).toEqual([
      { dataset: 'evidence', mode: 'changes' },
      { dataset: 'facts_full', mode: 'changes' },
      { dataset: 'series_catalog', mode: 'changes' },
    ]);
  }, 300_000);

  it('reloads in full, saying why, when the snapshot in between was pruned', async () => {
    await setClock('2025-11-06');
    await night('ld-3', '2025-11-06');
    await setClock('2025-11-07');
    const fourth = await night('ld-4', '2025-11-07');
    expect(fourth.changes?.against).toBe('ld-3');
    // Prune ld-3: its manifest, marker and data go.
    await rm(join(h.outDir, '_snapshots', 'ld-3'), { recursive: true, force: true });
    for (const d of [...DATASETS, 'changes'])
      await rm(join(h.outDir, d, 'snapshot_date=2025-11-06'), { recursive: true, force: true });
    for (const into of [pgUrl, `duckdb:${duckPath}`]) {
      const r = await load(into);
      expect(r.snapshots.map((s) => s.snapshotId)).toEqual(['ld-4']);
      const facts = r.snapshots[0]?.datasets.find((d) => d.dataset === 'facts_full');
      expect(facts?.mode).toBe('full');
      expect(facts?.reason).toBe(
        "chain broken: ld-4's changes are against ld-3 (pruned), the table holds ld-2",
      );
    }
    await expectTablesEqual(fourth);
  }, 300_000);

  it('refuses, naming the column, when a table was altered by hand; nothing is applied', async () => {
    await admin.query('SELECT 1');
    const c = new pg.Client({ connectionString: pgUrl });
    await c.connect();
    try {
      await c.query('ALTER TABLE facts_full ALTER COLUMN period_end TYPE text');
      const before = await pgQuery('SELECT count(*)::int AS n FROM filings_export_loads');
      await expect(load(pgUrl, { snapshot: 'ld-2' })).rejects.toThrow(
        /table facts_full, column period_end: is text, expected date \(as loaded from ld-4\); nothing was loaded/,
      );
      expect(await pgQuery('SELECT count(*)::int AS n FROM filings_export_loads')).toEqual(before);
      await c.query('ALTER TABLE facts_full ALTER COLUMN period_end TYPE date USING period_end::date');
    } finally {
      await c.end();
    }
  });

  it('says in one line when the database is unreachable or the password is wrong, never printing it', async () => {
    const wrong = pgUrl.replace(/:[^:@/]+@/, ':not-the-password-123@');
    const refused = await openWarehouse(wrong).then(
      () => new Error('connected'),
      (e: unknown) => e as Error,
    );
    expect(refused).toMatchObject({ code: 'WAREHOUSE_REFUSED' });
    expect(refused.message).toMatch(/password authentication failed for user "filings"/);
    expect(refused.message).not.toContain('not-the-password-123');
    expect(refused.message).toContain(':***@');
    const cli = spawnSync(process.execPath, [BIN, 'load', '--into', wrong], { env: h.env, encoding: 'utf8' });
    expect(cli.status).toBe(1);
    expect(cli.stderr.trim().split('\n')).toHaveLength(1);
    expect(cli.stderr).not.toContain('not-the-password-123');
    const closedPort = pgUrl.replace(/:(\d+)\//, ':1/');
    await expect(openWarehouse(closedPort)).rejects.toMatchObject({
      code: 'WAREHOUSE_UNAVAILABLE',
      message: expect.stringMatching(/cannot connect: .*ECONNREFUSED/),
    });
  });

  it('two loaders at once load once: the second waits for the lock and finds the work done', async () => {
    const [a, b] = await Promise.all([load(pgUrl, { schema: 'twice' }), load(pgUrl, { schema: 'twice' })]);
    const acted = [...a.snapshots, ...b.snapshots].flatMap((s) =>
      s.datasets.filter((d) => d.mode !== 'skip'),
    );
    expect(acted.length).toBe(DATASETS.length * a.snapshots.length);
    const ledger = await pgQuery(
      'SELECT snapshot_id, count(*)::int AS n FROM twice.filings_export_loads GROUP BY 1 ORDER BY 1',
    );
    expect(ledger.every((r) => r.n === DATASETS.length)).toBe(true);
  });

  it('DuckDB takes one writer: a second process is refused in one line', async () => {
    const held = await openWarehouse(`duckdb:${duckPath}`);
    try {
      const cli = spawnSync(process.execPath, [BIN, 'load', '--into', `duckdb:${duckPath}`], {
        env: h.env,
        encoding: 'utf8',
      });
      expect(cli.status).toBe(1);
      expect(cli.stderr).toMatch(
        /is open in another process \(DuckDB allows one writer\).*\[WAREHOUSE_UNAVAILABLE\]/,
      );
    } finally {
      await held.close();
    }
  });

  it('a loader killed mid-COPY leaves the tables as they were, and the next load completes', async () => {
    const child = spawn(
      process.execPath,
      [BIN, 'load', '--into', pgUrl, '--schema', 'killed', '--snapshot', 'ld-4'],
      {
        env: h.env,
        stdio: 'ignore',
      },
    );
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    let copying = false;
    for (let i = 0; i < 2000 && !copying; i++) {
      copying = (await admin.query(`SELECT 1 FROM pg_stat_progress_copy `)).rows.length > 0;
      if (!copying) await new Promise((r) => setTimeout(r, 5));
    }
    expect(copying).toBe(true);
    child.kill('SIGKILL');
    await exited;
    const left = await pgQuery(`SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'killed'`);
    expect(left).toEqual([{ n: 0 }]);
    const r = await load(pgUrl, { schema: 'killed', snapshot: 'ld-4' });
    expect(modes(r)['ld-4/facts_full']).toBe('full');
    const ds = DATASETS[1]!;
    const m = JSON.parse(
      await readFile(join(h.outDir, '_snapshots', 'ld-4', 'manifest.json'), 'utf8'),
    ) as Manifest;
    expect(await pgTableRows(m, ds, 'killed')).toEqual(await fileRows(m, ds));
  });

  it('loads from an s3:// root as from a local one', async () => {
    let s3: TestS3 | undefined;
    try {
      s3 = await startS3();
      const storage = openTestStorage(s3.endpoint, `s3://${s3.bucket}/out`);
      await uploadSnapshot({ localRoot: h.outDir, storage, manifest: first });
      const warehouse = await openWarehouse(pgUrl, { schema: 'bucket' });
      try {
        const r = await loadSnapshots({ storage, warehouse });
        expect(r.snapshots.map((s) => s.snapshotId)).toEqual(['ld-1']);
      } finally {
        await warehouse.close();
        await storage.close();
      }
      for (const d of DATASETS)
        expect(await pgTableRows(first, d, 'bucket'), d).toEqual(await fileRows(first, d));
    } finally {
      await s3?.close();
    }
  }, 300_000);
});
