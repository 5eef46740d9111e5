/**
 * Loading (issue 26): `load` of a facts snapshot into PostgreSQL and into DuckDB, against each
 * database's own bulk path on the same data in the same run, and an incremental night against a
 * full reload of the same tables.
 *
 * - data: two snapshots of LOAD_BENCH_ROWS synthetic facts rows (default 1,000,000, the size of
 *   the emulator's SYNBIG company) over 8 companies, Parquet + gzip NDJSON; the second differs in
 *   one company (its rows replaced), with `changes` against the first.
 * - PostgreSQL (a private server, as in the tests): `load` (typed table, COPY, primary key) vs
 *   psql `\copy` of the same NDJSON lines into a one-column table (the server's own bulk path).
 * - DuckDB: `load` into a database file vs `CREATE TABLE AS SELECT * FROM read_parquet(files)`.
 * - Incremental: the second snapshot applied from `changes` vs loaded in full into a fresh schema.
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { startPrivatePostgres } from '../src/infra/postgres-server.js';
import {
  createPartWriter,
  openStorage,
  publishSnapshot,
  sqlPathList,
  type Manifest,
} from '../src/output/index.js';
import type { PartPointer } from '../src/types.js';
import { loadSnapshots, openWarehouse } from '../src/warehouse/index.js';
import { syntheticFactRow } from '../test/helpers/synthetic-rows.js';
import type { BenchResult } from './support/types.js';

const PARTS = 8;

async function snapshot(
  root: string,
  id: string,
  date: string,
  rows: number,
  changed: boolean,
): Promise<Manifest> {
  const per = Math.ceil(rows / PARTS);
  const parts: PartPointer[] = [];
  for (let p = 0; p < PARTS; p++) {
    const ticker = `T${String(p).padStart(3, '0')}`;
    const company = { cik: String(1000 + p).padStart(10, '0'), ticker };
    const w = createPartWriter({
      root,
      snapshotId: id,
      dataset: 'facts_full',
      ticker,
      lineage: { snapshotId: id, fetchedAt: `${date}T00:00:00.000Z`, requestedTicker: ticker },
    });
    // The second night: company 0 filed, its rows are new (other keys), the rest are the same.
    const shift = changed && p === 0 ? rows * 10 : 0;
    for (let i = 0; i < Math.min(per, rows - p * per); i++) {
      const wait = w.write(syntheticFactRow(shift + p * per + i, company));
      if (wait) await wait;
    }
    parts.push({ dataset: 'facts_full', ticker, status: 'done', ...(await w.finish()) });
  }
  return publishSnapshot({
    root,
    snapshotId: id,
    snapshotDate: date,
    formats: ['parquet', 'ndjson'],
    parts,
    ...(changed ? { changesAgainst: 'bench-load-1' } : {}),
  });
}

async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t0 = performance.now();
  const value = await fn();
  return { ms: performance.now() - t0, value };
}

async function load(
  into: string,
  root: string,
  o: { schema?: string; snapshot?: string } = {},
): Promise<number> {
  const wh = await openWarehouse(into, o.schema !== undefined ? { schema: o.schema } : {});
  try {
    const r = await loadSnapshots({
      storage: openStorage(root),
      warehouse: wh,
      ...(o.snapshot !== undefined ? { snapshot: o.snapshot } : {}),
    });
    return r.snapshots.reduce((n, s) => n + s.datasets.reduce((m, d) => m + d.rows, 0), 0);
  } finally {
    await wh.close();
  }
}

export async function run(): Promise<BenchResult[]> {
  const rows = Number(process.env.LOAD_BENCH_ROWS ?? 1_000_000);
  const dir = await mkdtemp(join(tmpdir(), 'fx-load-bench-'));
  const root = join(dir, 'out');
  const pg = await startPrivatePostgres();
  const g = 'load';
  try {
    const first = await snapshot(root, 'bench-load-1', '2026-11-20', rows, false);
    const second = await snapshot(root, 'bench-load-2', '2026-11-21', rows, true);
    const ndjson = first.files.filter((f) => f.format === 'ndjson').map((f) => join(root, f.path));
    const parquet = first.files.filter((f) => f.format === 'parquet').map((f) => join(root, f.path));

    // PostgreSQL: load vs psql \copy of the same NDJSON lines (one jsonb column).
    const ours = await timed(() => load(pg.url, root, { schema: 'ours', snapshot: 'bench-load-1' }));
    const psql = join(pg.binDir, 'psql');
    const sql = (s: string): void => {
      const r = spawnSync(psql, [pg.url, '-v', 'ON_ERROR_STOP=1', '-c', s], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`psql: ${r.stderr}`);
    };
    sql('CREATE TABLE raw_facts (doc jsonb)');
    const copy = await timed(async () =>
      sql(
        `\\copy raw_facts (doc) FROM PROGRAM 'zcat ${ndjson.join(' ')}' WITH (FORMAT csv, QUOTE e'\\x01', DELIMITER e'\\x02')`,
      ),
    );
    // DuckDB: load vs CREATE TABLE AS over the Parquet.
    const duckOurs = await timed(() =>
      load(`duckdb:${join(dir, 'ours.duckdb')}`, root, { snapshot: 'bench-load-1' }),
    );
    const duckBase = await timed(async () => {
      const db = await DuckDBInstance.create(join(dir, 'base.duckdb'), { threads: '2', memory_limit: '1GB' });
      const c = await db.connect();
      await c.run(`CREATE TABLE facts_full AS SELECT * FROM read_parquet(${sqlPathList(parquet)})`);
      c.closeSync();
      db.closeSync();
    });
    // Incremental: the second night from changes vs in full.
    const inc = await timed(() => load(pg.url, root, { schema: 'ours', snapshot: 'bench-load-2' }));
    const full = await timed(() => load(pg.url, root, { schema: 'fresh', snapshot: 'bench-load-2' }));
    const duckInc = await timed(() =>
      load(`duckdb:${join(dir, 'ours.duckdb')}`, root, { snapshot: 'bench-load-2' }),
    );
    const duckFull = await timed(() =>
      load(`duckdb:${join(dir, 'fresh.duckdb')}`, root, { snapshot: 'bench-load-2' }),
    );
    const rps = (ms: number): number => rows / (ms / 1000);
    const changes = second.changes?.counts;
    return [
      {
        group: g,
        name: `PostgreSQL: load ${rows} facts (typed, COPY, primary key)`,
        value: rps(ours.ms),
        unit: 'rows/s',
        note: `${(ours.ms / 1000).toFixed(1)} s`,
      },
      {
        group: g,
        name: 'PostgreSQL: psql \\copy of the same NDJSON (one jsonb column)',
        value: rps(copy.ms),
        unit: 'rows/s',
        note: `${(copy.ms / 1000).toFixed(1)} s`,
      },
      {
        group: g,
        name: 'PostgreSQL: load vs psql \\copy',
        value: copy.ms / ours.ms,
        unit: 'ratio',
        target: '>= 0.8',
        ok: copy.ms / ours.ms >= 0.8,
        note: 'speed of load / speed of \\copy, one run',
      },
      {
        group: g,
        name: `DuckDB: load ${rows} facts into a database file`,
        value: rps(duckOurs.ms),
        unit: 'rows/s',
        note: `${(duckOurs.ms / 1000).toFixed(1)} s`,
      },
      {
        group: g,
        name: 'DuckDB: CREATE TABLE AS read_parquet',
        value: rps(duckBase.ms),
        unit: 'rows/s',
        note: `${(duckBase.ms / 1000).toFixed(1)} s`,
      },
      {
        group: g,
        name: 'DuckDB: load vs CREATE TABLE AS',
        value: duckBase.ms / duckOurs.ms,
        unit: 'ratio',
        target: '>= 0.8',
        ok: duckBase.ms / duckOurs.ms >= 0.8,
        note: 'speed of load / speed of the baseline, one run',
      },
      {
        group: g,
        name: 'PostgreSQL: incremental night (changes) vs full reload',
        value: full.ms / inc.ms,
        unit: 'ratio',
        note: `${(inc.ms / 1000).toFixed(1)} s vs ${(full.ms / 1000).toFixed(1)} s; changes ${changes?.added ?? 0} added, ${changes?.removed ?? 0} removed`,
      },
      {
        group: g,
        name: 'DuckDB: incremental night (changes) vs full reload',
        value: duckFull.ms / duckInc.ms,
        unit: 'ratio',
        note: `${(duckInc.ms / 1000).toFixed(1)} s vs ${(duckFull.ms / 1000).toFixed(1)} s`,
      },
    ];
  } finally {
    await pg.close();
    await rm(dir, { recursive: true, force: true });
  }
}
