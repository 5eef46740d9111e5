/**
 * Point-in-time history (issue 40): `load --history` over HISTORY_BENCH_FACTS synthetic facts
 * (default 1,000,000) and 10 nights after the first, each night changing the value of 1 % of them.
 *
 * - Every night is loaded into two warehouses of each kind, one with history and one without,
 *   the one that goes first alternating; both take the night from its `changes`. The figure is
 *   the median of the 10 nights' times with history over the median without (target <= 1.5).
 * - Size: the history's rows and bytes against the current table's (DuckDB: each table copied
 *   alone into a fresh database file, its size on disk; PostgreSQL: pg_total_relation_size).
 * - An as-of read of one company (night 5's published_at) against the same company's rows in the
 *   current table, 3 runs each interleaved, medians; both must return the company's row count.
 * - HISTORY_BENCH_POSTGRES=0 leaves PostgreSQL out.
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import pg from 'pg';
import { startPrivatePostgres, type PrivatePostgres } from '../../src/infra/postgres-server.js';
import type { Manifest } from '../../src/output/index.js';
import type { LoadReport } from '../../src/warehouse/index.js';
import { exactDecimal, syntheticFactRow, type SyntheticCompany } from '../../test/helpers/synthetic-rows.js';
import { BENCH_COMPANIES, benchCompany, publishFactSnapshot } from '../support/fact-snapshot.js';
import { interleaved, loadInto, timed } from '../support/load-runs.js';
import { median } from '../support/stats.js';
import type { BenchResult } from '../support/types.js';

const NIGHTS = 10;
const QUERY_RUNS = 3;
const g = 'history';
const nightId = (n: number): string => `bench-history-${String(n).padStart(2, '0')}`;

/** The company whose facts never change: its part is carried over each night (an incremental night). */
const STILL = BENCH_COMPANIES - 1;
/** Facts of the other companies change in blocks of CHANGE of every SPAN: 1 % of all facts a night. */
const [CHANGE, SPAN] = [4, 350];

/**
 * Fact `i` of part `p` as night `n` publishes it: outside company STILL, the fact whose `i % SPAN`
 * falls in night k's block (k = 1…NIGHTS) takes a new value on night k and keeps it; night 0 is
 * the base. 4/350 of 7/8 of the facts is 1 % a night.
 */
function factRow(i: number, p: number, company: SyntheticCompany, n: number): Record<string, unknown> {
  const row = syntheticFactRow(i, company);
  const k = 1 + Math.floor((i % SPAN) / CHANGE);
  if (p === STILL || k > n) return row;
  const scaled = String(1_000_000 + k * 1000 + (i % 997));
  return { ...row, value_scaled_int: scaled, value_num: exactDecimal(scaled, Number(row.scale)) };
}

/** One warehouse kind: where its two sides load, and how its tables are read afterwards. */
interface Target {
  name: 'DuckDB' | 'PostgreSQL';
  load(n: number, history: boolean): Promise<LoadReport>;
}

/** Checks a night went the way the figure assumes: the table and its history from `changes`. */
function expectFromChanges(r: LoadReport, n: number, history: boolean): void {
  const d = r.snapshots[0]?.datasets.find((x) => x.dataset === 'facts_full');
  const how = history ? d?.history?.builtFrom : d?.mode;
  if (n > 0 && how !== 'changes')
    throw new Error(
      `night ${n} ${history ? 'history' : 'table'} was loaded by ${how ?? 'nothing'}, not changes: ${d?.reason ?? ''} ${d?.history?.reason ?? ''}`,
    );
}

/** Loads every night into both sides of `t`; the times of nights 1…NIGHTS (night 0 is the first load). */
async function loadNights(t: Target): Promise<{ history: number[]; current: number[] }> {
  const out = { history: [] as number[], current: [] as number[] };
  for (let n = 0; n <= NIGHTS; n++) {
    for (const history of n % 2 === 0 ? [true, false] : [false, true]) {
      const { ms, value } = await timed(() => t.load(n, history));
      expectFromChanges(value, n, history);
      if (n > 0) (history ? out.history : out.current).push(ms);
    }
  }
  return out;
}

/** The two reads compared: one company as of `at` in the history, and in the current table. */
function companyReads(cik: string, at: string): { asOf: string; current: string } {
  const t = `TIMESTAMPTZ '${at}'`;
  return {
    asOf: `SELECT * FROM facts_full_history WHERE cik = '${cik}' AND _valid_from <= ${t} AND (_valid_to IS NULL OR _valid_to > ${t})`,
    current: `SELECT * FROM facts_full WHERE cik = '${cik}'`,
  };
}

interface Sizes {
  rows: { history: number; current: number };
  bytes: { history: number; current: number };
}

interface Reads {
  asOf: number[];
  current: number[];
}

/** Runs both reads QUERY_RUNS times interleaved through `query` (returns the row count); checks the counts. */
async function timeReads(
  query: (sql: string) => Promise<number>,
  cik: string,
  at: string,
  expected: number,
): Promise<Reads> {
  const sql = companyReads(cik, at);
  const check = async (q: string): Promise<void> => {
    const n = await query(q);
    if (n !== expected) throw new Error(`${q} returned ${n} rows, expected ${expected}`);
  };
  const times = await interleaved(
    QUERY_RUNS,
    () => check(sql.asOf),
    () => check(sql.current),
  );
  return { asOf: times.a, current: times.b };
}

/** DuckDB: rows of both tables, each copied alone into a fresh file for its bytes, and the reads. */
async function duckFigures(
  file: string,
  dir: string,
  cik: string,
  at: string,
  perCompany: number,
): Promise<{ sizes: Sizes; reads: Reads }> {
  const db = await DuckDBInstance.create(file, { threads: '2', memory_limit: '1GB' });
  const c = await db.connect();
  try {
    const count = async (sql: string): Promise<number> => (await c.runAndReadAll(sql)).getRows().length;
    const rowsOf = async (table: string): Promise<number> =>
      Number((await c.runAndReadAll(`SELECT count(*) FROM ${table}`)).getRows()[0]?.[0]);
    const bytesOf = async (table: string): Promise<number> => {
      const alone = join(dir, `alone-${table}.duckdb`);
      await c.run(`ATTACH '${alone}' AS alone`);
      await c.run(`CREATE TABLE alone.${table} AS SELECT * FROM ${table}`);
      await c.run('DETACH alone');
      return (await stat(alone)).size;
    };
    const sizes: Sizes = {
      rows: { history: await rowsOf('facts_full_history'), current: await rowsOf('facts_full') },
      bytes: { history: await bytesOf('facts_full_history'), current: await bytesOf('facts_full') },
    };
    return { sizes, reads: await timeReads(count, cik, at, perCompany) };
  } finally {
    c.closeSync();
    db.closeSync();
  }
}

/** PostgreSQL (schema `hist`): rows and total relation bytes of both tables, and the reads. */
async function pgFigures(
  server: PrivatePostgres,
  cik: string,
  at: string,
  perCompany: number,
): Promise<{ sizes: Sizes; reads: Reads }> {
  const client = new pg.Client({ connectionString: server.url });
  await client.connect();
  try {
    await client.query('SET search_path TO hist');
    const one = async (sql: string): Promise<number> =>
      Number((await client.query<{ n: string }>(sql)).rows[0]?.n);
    const sizes: Sizes = {
      rows: {
        history: await one('SELECT count(*) AS n FROM facts_full_history'),
        current: await one('SELECT count(*) AS n FROM facts_full'),
      },
      bytes: {
        history: await one(`SELECT pg_total_relation_size('hist.facts_full_history') AS n`),
        current: await one(`SELECT pg_total_relation_size('hist.facts_full') AS n`),
      },
    };
    const count = async (sql: string): Promise<number> => (await client.query(sql)).rowCount ?? 0;
    return { sizes, reads: await timeReads(count, cik, at, perCompany) };
  } finally {
    await client.end();
  }
}

const secs = (ms: number): string => (ms / 1000).toFixed(2);
const mb = (b: number): string => (b / 1e6).toFixed(1);

/** The figures of one warehouse kind. */
function figures(
  name: Target['name'],
  loads: { history: number[]; current: number[] },
  f: { sizes: Sizes; reads: Reads },
): BenchResult[] {
  const [withH, without] = [median(loads.history), median(loads.current)];
  const [asOf, current] = [median(f.reads.asOf), median(f.reads.current)];
  const { rows, bytes } = f.sizes;
  return [
    {
      group: g,
      name: `${name}: a night's load with history vs the table's changes load alone`,
      value: withH / without,
      unit: 'ratio',
      target: '<= 1.5',
      ok: withH / without <= 1.5,
      note: `medians of ${loads.history.length} nights: ${secs(withH)} s vs ${secs(without)} s`,
    },
    {
      group: g,
      name: `${name}: history rows / current table rows after ${NIGHTS} nights`,
      value: rows.history / rows.current,
      unit: 'ratio',
      note: `${rows.history} vs ${rows.current} rows`,
    },
    {
      group: g,
      name: `${name}: history bytes / current table bytes`,
      value: bytes.history / bytes.current,
      unit: 'ratio',
      note: `${mb(bytes.history)} MB vs ${mb(bytes.current)} MB${name === 'DuckDB' ? ' (each table alone in a file)' : ' (pg_total_relation_size)'}`,
    },
    {
      group: g,
      name: `${name}: as-of read of one company vs its rows in the current table`,
      value: asOf / current,
      unit: 'ratio',
      note: `medians of ${QUERY_RUNS}, interleaved: ${asOf.toFixed(0)} ms vs ${current.toFixed(0)} ms`,
    },
  ];
}

/** Publishes night 0 and NIGHTS nights after it, each with `changes` against the one before. */
async function publishNights(root: string, rows: number): Promise<Manifest[]> {
  const out: Manifest[] = [];
  for (let n = 0; n <= NIGHTS; n++)
    out.push(
      await publishFactSnapshot(root, {
        id: nightId(n),
        date: `2026-11-${String(n + 1).padStart(2, '0')}`,
        rows,
        formats: ['parquet'],
        ...(n > 0
          ? {
              changesAgainst: nightId(n - 1),
              reused: { part: STILL, from: nightId(n - 1), fullRefreshDate: '2026-11-01' },
            }
          : {}),
        row: (i, p, company) => factRow(i, p, company, n),
      }),
    );
  return out;
}

/** Versions the history must hold after every night: one per fact, one more per change. */
function expectedVersions(rows: number): number {
  const per = Math.ceil(rows / BENCH_COMPANIES);
  let changed = 0;
  for (let i = 0; i < Math.min(rows, STILL * per); i++) if (i % SPAN < CHANGE * NIGHTS) changed++;
  return rows + changed;
}

export async function run(): Promise<BenchResult[]> {
  const rows = Number(process.env.HISTORY_BENCH_FACTS ?? 1_000_000);
  const withPg = process.env.HISTORY_BENCH_POSTGRES !== '0';
  const dir = await mkdtemp(join(tmpdir(), 'fx-history-bench-'));
  const root = join(dir, 'out');
  const server = withPg ? await startPrivatePostgres() : undefined;
  try {
    const nights = await publishNights(root, rows);
    const at = nights[5]?.published_at ?? '';
    const per = Math.ceil(rows / BENCH_COMPANIES);
    const [p, cik] = [3, benchCompany(3).cik];
    const perCompany = Math.max(0, Math.min(per, rows - p * per));
    const duckFile = (history: boolean): string => join(dir, history ? 'history.duckdb' : 'current.duckdb');
    const duck: Target = {
      name: 'DuckDB',
      load: (n, history) => loadInto(`duckdb:${duckFile(history)}`, root, { snapshot: nightId(n), history }),
    };
    const results = [];
    const check = (s: Sizes, name: string): void => {
      if (s.rows.history !== expectedVersions(rows))
        throw new Error(
          `${name}: the history holds ${s.rows.history} versions, expected ${expectedVersions(rows)}`,
        );
    };
    const duckLoads = await loadNights(duck);
    const duckF = await duckFigures(duckFile(true), dir, cik, at, perCompany);
    check(duckF.sizes, 'DuckDB');
    results.push(...figures('DuckDB', duckLoads, duckF));
    if (server !== undefined) {
      const pgT: Target = {
        name: 'PostgreSQL',
        load: (n, history) =>
          loadInto(server.url, root, { schema: history ? 'hist' : 'cur', snapshot: nightId(n), history }),
      };
      const pgLoads = await loadNights(pgT);
      const pgF = await pgFigures(server, cik, at, perCompany);
      check(pgF.sizes, 'PostgreSQL');
      results.push(...figures('PostgreSQL', pgLoads, pgF));
    }
    return results;
  } finally {
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  }
}
