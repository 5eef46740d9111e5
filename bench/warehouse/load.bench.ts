/**
 * Loading (issue 26): `load` of a facts snapshot into PostgreSQL and into DuckDB, against each
 * database's own bulk path on the same data in the same run, and an incremental night against a
 * full reload of the same tables.
 *
 * - data: two snapshots of LOAD_BENCH_ROWS synthetic facts rows (default 1,000,000, the size of
 *   the emulator's SYNBIG company) over 8 companies, Parquet + gzip NDJSON; the second differs in
 *   one company (its rows replaced), with `changes` against the first.
 * - PostgreSQL (a private server, as in the tests): `load` (typed table, COPY, primary key) vs
 *   psql `\copy` of the same rows as CSV (exported from the first load, not timed) into the same
 *   typed table, its primary key added after the rows as `load` does: the server's own bulk path
 *   doing the same work.
 * - DuckDB: `load` into a database file vs `CREATE TABLE AS SELECT * FROM read_parquet(files)`.
 * - Each pair runs LOAD_BENCH_RUNS times (default 3) interleaved, the side that goes first
 *   alternating, into fresh tables; the figures are medians.
 * - Incremental: the second snapshot applied from `changes` vs loaded in full into a fresh schema
 *   (one run each).
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { startPrivatePostgres } from '../../src/infra/postgres-server.js';
import { sqlPathList, type Manifest } from '../../src/output/index.js';
import { syntheticFactRow } from '../../test/helpers/synthetic-rows.js';
import { publishFactSnapshot } from '../support/fact-snapshot.js';
import { interleaved, loadedRows, loadInto, timed } from '../support/load-runs.js';
import { median } from '../support/stats.js';
import type { BenchResult } from '../support/types.js';

function snapshot(root: string, id: string, date: string, rows: number, changed: boolean): Promise<Manifest> {
  return publishFactSnapshot(root, {
    id,
    date,
    rows,
    formats: ['parquet', 'ndjson'],
    ...(changed ? { changesAgainst: 'bench-load-1' } : {}),
    // The second night: company 0 filed, its rows are new (other keys), the rest are the same.
    row: (i, p, company) => syntheticFactRow((changed && p === 0 ? rows * 10 : 0) + i, company),
  });
}

async function load(
  into: string,
  root: string,
  o: { schema?: string; snapshot?: string } = {},
): Promise<number> {
  return loadedRows(await loadInto(into, root, o));
}

/** psql against the private server: each `-c` in order in one session; its stdout. */
function psqlRunner(binDir: string, url: string): (...commands: string[]) => string {
  return (...commands) => {
    const args = [
      url,
      '-X',
      '-q',
      '-A',
      '-t',
      '-v',
      'ON_ERROR_STOP=1',
      ...commands.flatMap((c) => ['-c', c]),
    ];
    const r = spawnSync(join(binDir, 'psql'), args, { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`psql: ${r.stderr}`);
    return r.stdout.trim();
  };
}

/**
 * One run of the baseline: a table in `schema` with the columns and types of `like` (no key),
 * psql `\\copy` of `csv` into it, then its primary key (`key`), as `load` builds it after the rows.
 */
function copyBaseline(
  psql: (...c: string[]) => string,
  o: { like: string; key: string; csv: string; schema: string },
): void {
  const table = `${o.schema}.facts_full`;
  psql(
    `CREATE SCHEMA ${o.schema}`,
    `CREATE TABLE ${table} (LIKE ${o.like} INCLUDING DEFAULTS)`,
    `\\copy ${table} FROM '${o.csv}' WITH (FORMAT csv)`,
    ...(o.key === '' ? [] : [`ALTER TABLE ${table} ADD ${o.key}`]),
  );
}

const secs = (ms: readonly number[]): string => ms.map((m) => (m / 1000).toFixed(1)).join(', ');

export async function run(): Promise<BenchResult[]> {
  const rows = Number(process.env.LOAD_BENCH_ROWS ?? 1_000_000);
  const runs = Math.max(3, Number(process.env.LOAD_BENCH_RUNS ?? 3));
  const dir = await mkdtemp(join(tmpdir(), 'fx-load-bench-'));
  const root = join(dir, 'out');
  const pg = await startPrivatePostgres();
  const g = 'load';
  try {
    const first = await snapshot(root, 'bench-load-1', '2026-11-20', rows, false);
    const second = await snapshot(root, 'bench-load-2', '2026-11-21', rows, true);
    const parquet = first.files.filter((f) => f.format === 'parquet').map((f) => join(root, f.path));
    const psql = psqlRunner(pg.binDir, pg.url);

    // PostgreSQL. The baseline's rows: the first load's table as CSV, written before any timing.
    await load(pg.url, root, { schema: 'warm', snapshot: 'bench-load-1' });
    const csv = join(dir, 'facts.csv');
    psql(`\\copy warm.facts_full TO '${csv}' WITH (FORMAT csv)`);
    const key = psql(
      `SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conrelid = 'warm.facts_full'::regclass AND contype = 'p'`,
    );
    const pgTimes = await interleaved(
      runs,
      (i) => load(pg.url, root, { schema: `ours${i}`, snapshot: 'bench-load-1' }),
      async (i) => copyBaseline(psql, { like: 'warm.facts_full', key, csv, schema: `base${i}` }),
    );
    const counts = psql(
      `SELECT (SELECT count(*) FROM ours0.facts_full) || ' ' || (SELECT count(*) FROM base0.facts_full)`,
    );
    if (counts !== `${rows} ${rows}`) throw new Error(`the two sides loaded different row counts: ${counts}`);
    // DuckDB: load vs CREATE TABLE AS over the Parquet.
    const duckTimes = await interleaved(
      runs,
      (i) => load(`duckdb:${join(dir, `ours${i}.duckdb`)}`, root, { snapshot: 'bench-load-1' }),
      async (i) => {
        const db = await DuckDBInstance.create(join(dir, `base${i}.duckdb`), {
          threads: '2',
          memory_limit: '1GB',
        });
        const c = await db.connect();
        await c.run(`CREATE TABLE facts_full AS SELECT * FROM read_parquet(${sqlPathList(parquet)})`);
        c.closeSync();
        db.closeSync();
      },
    );
    // Incremental: the second night from changes vs in full.
    const inc = await timed(() => load(pg.url, root, { schema: 'ours0', snapshot: 'bench-load-2' }));
    const full = await timed(() => load(pg.url, root, { schema: 'fresh', snapshot: 'bench-load-2' }));
    const duckInc = await timed(() =>
      load(`duckdb:${join(dir, 'ours0.duckdb')}`, root, { snapshot: 'bench-load-2' }),
    );
    const duckFull = await timed(() =>
      load(`duckdb:${join(dir, 'fresh.duckdb')}`, root, { snapshot: 'bench-load-2' }),
    );
    const rps = (ms: number): number => rows / (ms / 1000);
    const changes = second.changes?.counts;
    const [ours, copy] = [median(pgTimes.a), median(pgTimes.b)];
    const [duckOurs, duckBase] = [median(duckTimes.a), median(duckTimes.b)];
    const of = `median of ${runs}, interleaved`;
    return [
      {
        group: g,
        name: `PostgreSQL: load ${rows} facts (typed, COPY, primary key)`,
        value: rps(ours),
        unit: 'rows/s',
        note: `${of}: ${secs(pgTimes.a)} s`,
      },
      {
        group: g,
        name: 'PostgreSQL: psql \\copy of the same rows as CSV into the same typed table, then its key',
        value: rps(copy),
        unit: 'rows/s',
        note: `${of}: ${secs(pgTimes.b)} s`,
      },
      {
        group: g,
        name: 'PostgreSQL: load vs psql \\copy',
        value: copy / ours,
        unit: 'ratio',
        target: '>= 0.8',
        ok: copy / ours >= 0.8,
        note: `speed of load / speed of \\copy, ${of}`,
      },
      {
        group: g,
        name: `DuckDB: load ${rows} facts into a database file`,
        value: rps(duckOurs),
        unit: 'rows/s',
        note: `${of}: ${secs(duckTimes.a)} s`,
      },
      {
        group: g,
        name: 'DuckDB: CREATE TABLE AS read_parquet',
        value: rps(duckBase),
        unit: 'rows/s',
        note: `${of}: ${secs(duckTimes.b)} s`,
      },
      {
        group: g,
        name: 'DuckDB: load vs CREATE TABLE AS',
        value: duckBase / duckOurs,
        unit: 'ratio',
        target: '>= 0.8',
        ok: duckBase / duckOurs >= 0.8,
        note: `speed of load / speed of the baseline, ${of}`,
      },
      {
        group: g,
        name: 'PostgreSQL: incremental night (changes) vs full reload',
        value: full.ms / inc.ms,
        unit: 'ratio',
        note: `one run each: ${(inc.ms / 1000).toFixed(1)} s vs ${(full.ms / 1000).toFixed(1)} s; changes ${changes?.added ?? 0} added, ${changes?.removed ?? 0} removed`,
      },
      {
        group: g,
        name: 'DuckDB: incremental night (changes) vs full reload',
        value: duckFull.ms / duckInc.ms,
        unit: 'ratio',
        note: `one run each: ${(duckInc.ms / 1000).toFixed(1)} s vs ${(duckFull.ms / 1000).toFixed(1)} s`,
      },
    ];
  } finally {
    await pg.close();
    await rm(dir, { recursive: true, force: true });
  }
}
