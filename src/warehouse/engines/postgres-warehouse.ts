/**
 * PostgreSQL as a load target, through the `pg` driver. Rows go in with COPY … FROM STDIN
 * (pg-copy-streams), as CSV that an in-process DuckDB renders from the snapshot's files. Every load
 * transaction first takes `pg_advisory_xact_lock`, so two loaders into one schema run one after
 * the other; the lock and every change go with the transaction, also when the loader is killed.
 */
import { createReadStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import pgpass from 'pgpass';
import type { DatasetName } from '../../datasets/index.js';
import { coerceError, WarehouseError } from '../../errors.js';
import { mergeChangesSql, openDuck, sqlIdent, sqlString, type DuckSession } from '../../output/index.js';
import { LEDGER_SELECT, LEDGER_TABLE, ledgerDdl, ledgerRows, type LedgerRow } from '../ledger.js';
import { tickerIn } from '../row-source.js';
import { readTableCompanies } from '../shrink.js';
import { postgresCsvExpr, primaryKey, sqlType, type TableColumn } from '../table-columns.js';
import { redactTarget } from '../target.js';
import type { LoadTransaction, RowSource, Warehouse } from '../warehouse.js';

export interface PostgresWarehouseOptions {
  /** `postgres://user@host:port/db`; missing parts from PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE. */
  url: string;
  /** Schema of the tables (created when missing). @defaultValue `public` */
  schema?: string;
  /** Where the CSV rendered for COPY is written (removed after each COPY). @defaultValue the OS temp dir */
  tmpDir?: string;
  /** Connection timeout. @defaultValue 10000 */
  connectTimeoutMs?: number;
}

/** The `changes` rows of the dataset MERGEd last, kept for its history (dropped at commit). */
const CHANGES_TEMP = 'pg_temp.filings_export_changes';

/** SQLSTATE classes that mean "the server refused us" rather than "try again". */
const REFUSED = /^(28|3D)/;

export async function openPostgresWarehouse(o: PostgresWarehouseOptions): Promise<Warehouse> {
  const name = redactTarget(o.url);
  const client = await connect(o, name);
  const schema = o.schema ?? 'public';
  const copier = csvCopier(client, o.tmpDir);
  const s: PgSession = {
    client,
    table: (t) => `${sqlIdent(schema)}.${sqlIdent(t)}`,
    copyIn: copier.copyIn,
  };
  const readLedger = (): Promise<LedgerRow[]> => readPgLedger(s);
  const tx: LoadTransaction = {
    sql: {
      engine: 'postgres',
      table: s.table,
      exec: async (sql) => (await client.query(sql)).rowCount ?? 0,
      all: async (sql) => (await client.query(sql)).rows as Record<string, unknown>[],
      columns: (t) => tableColumns(s, t),
    },
    // mergeChanges leaves the dataset's changes in this temp table until the next one or the commit.
    changesSource: () => CHANGES_TEMP,
    readLedger,
    replaceTable: (dataset, columns, source) => replaceTable(s, dataset, columns, source),
    mergeChanges: (dataset, columns, changesFile, companies) =>
      mergeChanges(s, dataset, columns, changesFile, companies),
    replaceCompanies: (dataset, columns, source, replaced, companies) =>
      replaceCompanies(s, dataset, columns, source, replaced, companies),
    record: (r) => recordLoad(s, r),
  };
  let closed = false;
  return {
    engine: 'postgres',
    name,
    readLedger,
    tableColumns: (dataset) => tableColumns(s, dataset),
    tableCompanies: async (dataset) =>
      readTableCompanies(s.table(dataset), await tableColumns(s, dataset), async (sql) => {
        return (await client.query(sql)).rows as Record<string, unknown>[];
      }),
    transaction: (fn) => inLoadTransaction(s, schema, () => fn(tx)),
    async close() {
      if (closed) return;
      closed = true;
      await copier.close();
      await client.end().catch(() => undefined);
    },
  };
}

/** The connection and what every statement of a load needs from it. */
interface PgSession {
  readonly client: pg.Client;
  /** The schema-qualified, quoted name of a table. */
  table(name: string): string;
  /** Renders `select` to CSV with DuckDB and streams it into the `copy` statement. */
  copyIn(copy: string, select: string): Promise<void>;
}

/** Connects, or throws a WarehouseError saying whether the server refused or could not be reached. */
async function connect(o: PostgresWarehouseOptions, name: string): Promise<pg.Client> {
  const client = new pg.Client({
    connectionString: o.url,
    connectionTimeoutMillis: o.connectTimeoutMs ?? 10_000,
    password: () => passwordFor(o.url),
  });
  client.on('error', () => undefined); // a dropped connection fails the running query, which is what reports it
  try {
    await client.connect();
  } catch (err: unknown) {
    await client.end().catch(() => undefined);
    throw connectError(name, err);
  }
  return client;
}

/** The URL's password, else PGPASSWORD, else (no password in either) the .pgpass file, as libpq reads it. */
async function passwordFor(url: string): Promise<string> {
  const u = new URL(url);
  if (u.password !== '') return decodeURIComponent(u.password);
  if (process.env.PGPASSWORD !== undefined) return process.env.PGPASSWORD;
  return new Promise<string>((resolve) =>
    pgpass(
      {
        host: u.hostname || process.env.PGHOST || 'localhost',
        port: u.port || process.env.PGPORT || '5432',
        database: u.pathname.slice(1) || process.env.PGDATABASE || '',
        user: decodeURIComponent(u.username) || process.env.PGUSER || '',
      },
      (pass) => resolve(pass ?? ''),
    ),
  );
}

/**
 * COPY … FROM STDIN fed with CSV that an in-process DuckDB renders into a scratch folder; both
 * are made on first use and removed by `close`.
 */
function csvCopier(
  client: pg.Client,
  tmpDir: string | undefined,
): { copyIn: PgSession['copyIn']; close(): Promise<void> } {
  let duck: DuckSession | undefined;
  let scratch: string | undefined;
  return {
    async copyIn(copy, select) {
      duck ??= await openDuck({ threads: 2, memoryLimit: '512MB' });
      scratch ??= await mkdtemp(join(tmpDir ?? tmpdir(), 'filings-export-load-'));
      const file = join(scratch, 'rows.csv');
      await duck.run(`COPY (${select}) TO ${sqlString(file)} (FORMAT csv, HEADER false)`);
      await pipeline(createReadStream(file, { highWaterMark: 1 << 20 }), client.query(copyFrom(copy)));
      await rm(file, { force: true });
    },
    async close() {
      duck?.close();
      if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
    },
  };
}

const csvColumns = (columns: readonly TableColumn[]): string => columns.map(postgresCsvExpr).join(', ');
const names = (columns: readonly TableColumn[]): string => columns.map((c) => sqlIdent(c.name)).join(', ');
const columnDefs = (columns: readonly TableColumn[]): string =>
  columns.map((c) => `${sqlIdent(c.name)} ${sqlType('postgres', c)}`).join(', ');

async function countRows(s: PgSession, dataset: string): Promise<number> {
  const n = await s.client.query(`SELECT count(*)::bigint AS n FROM ${s.table(dataset)}`);
  return Number(n.rows[0]?.n ?? 0);
}

async function readPgLedger(s: PgSession): Promise<LedgerRow[]> {
  const exists = await s.client.query('SELECT to_regclass($1) AS t', [s.table(LEDGER_TABLE)]);
  if (exists.rows[0]?.t === null) return [];
  return ledgerRows((await s.client.query(`${LEDGER_SELECT} ${s.table(LEDGER_TABLE)}`)).rows);
}

/** Column name → type name from the catalog; undefined when the table does not exist. */
async function tableColumns(s: PgSession, dataset: string): Promise<Map<string, string> | undefined> {
  const res = await s.client.query(
    `SELECT a.attname AS c, t.typname AS t FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
         WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`,
    [s.table(dataset)],
  );
  return res.rows.length === 0
    ? undefined
    : new Map(res.rows.map((r: { c: string; t: string }) => [r.c, r.t]));
}

/** Runs `fn` in one transaction that holds the schema's load lock and sees the schema and ledger exist. */
async function inLoadTransaction<T>(s: PgSession, schema: string, fn: () => Promise<T>): Promise<T> {
  await s.client.query('BEGIN');
  try {
    // One loader per schema at a time: a second one waits here, then sees the first one's ledger.
    await s.client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`filings_export_load:${schema}`]);
    await s.client.query(`CREATE SCHEMA IF NOT EXISTS ${sqlIdent(schema)}`);
    await s.client.query(ledgerDdl(s.table(LEDGER_TABLE)));
    const out = await fn();
    await s.client.query('COMMIT');
    return out;
  } catch (err: unknown) {
    await s.client.query('ROLLBACK').catch(() => undefined);
    throw err;
  }
}

/** Builds `<dataset>__loading` from `source`, keys it, and swaps it in for the table. */
async function replaceTable(
  s: PgSession,
  dataset: DatasetName,
  columns: readonly TableColumn[],
  source: RowSource,
): Promise<number> {
  const { client, table } = s;
  const loading = `${dataset}__loading`;
  await client.query(`DROP TABLE IF EXISTS ${table(loading)}`);
  await client.query(`CREATE TABLE ${table(loading)} (${columnDefs(columns)})`);
  await s.copyIn(
    `COPY ${table(loading)} (${names(columns)}) FROM STDIN (FORMAT csv)`,
    `SELECT ${csvColumns(columns)} FROM ${source.sql}`,
  );
  // The key is built after the rows are in (faster than checking row by row), before the swap.
  const key = primaryKey(dataset, columns);
  if (key !== undefined)
    await client.query(
      `ALTER TABLE ${table(loading)} ADD CONSTRAINT ${sqlIdent(`${loading}_pkey`)} PRIMARY KEY (${key.map(sqlIdent).join(', ')})`,
    );
  await client.query(`DROP TABLE IF EXISTS ${table(dataset)}`);
  await client.query(`ALTER TABLE ${table(loading)} RENAME TO ${sqlIdent(dataset)}`);
  if (key !== undefined)
    await client.query(`ALTER INDEX ${table(`${loading}_pkey`)} RENAME TO ${sqlIdent(`${dataset}_pkey`)}`);
  return countRows(s, dataset);
}

/** MERGEs the dataset's rows of the `changes` file through a temp table, then drops companies no longer in the set. */
async function mergeChanges(
  s: PgSession,
  dataset: DatasetName,
  columns: readonly TableColumn[],
  changesFile: string,
  companies: readonly string[],
): Promise<number> {
  const { client, table } = s;
  const changes = CHANGES_TEMP;
  await client.query(`DROP TABLE IF EXISTS ${changes}`);
  await client.query(`CREATE TEMP TABLE ${changes} (change text, ${columnDefs(columns)}) ON COMMIT DROP`);
  await s.copyIn(
    `COPY ${changes} (change, ${names(columns)}) FROM STDIN (FORMAT csv)`,
    `SELECT change, ${csvColumns(columns)} FROM read_parquet(${sqlString(changesFile)}) WHERE source_dataset = ${sqlString(dataset)}`,
  );
  const merged = await client.query(
    mergeChangesSql(
      table(dataset),
      changes,
      columns.map((c) => c.name),
      sqlIdent,
    ),
  );
  await client.query(`DELETE FROM ${table(dataset)} WHERE NOT (${tickerIn(companies)})`);
  return merged.rowCount ?? 0;
}

/** Deletes the rows of `replaced` companies and of those not in `companies`, then copies the replaced ones in. */
async function replaceCompanies(
  s: PgSession,
  dataset: DatasetName,
  columns: readonly TableColumn[],
  source: RowSource,
  replaced: readonly string[],
  companies: readonly string[],
): Promise<number> {
  await s.client.query(
    `DELETE FROM ${s.table(dataset)} WHERE ${tickerIn(replaced)} OR NOT (${tickerIn(companies)})`,
  );
  const before = await countRows(s, dataset);
  await s.copyIn(
    `COPY ${s.table(dataset)} (${names(columns)}) FROM STDIN (FORMAT csv)`,
    `SELECT ${csvColumns(columns)} FROM ${source.sql} WHERE ${tickerIn(replaced)}`,
  );
  return (await countRows(s, dataset)) - before;
}

async function recordLoad(s: PgSession, r: LedgerRow): Promise<void> {
  await s.client.query(
    `INSERT INTO ${s.table(LEDGER_TABLE)} VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [
      r.seq,
      r.snapshot_id,
      r.snapshot_date,
      r.dataset,
      r.mode,
      r.rows,
      r.loaded_at,
      r.manifest_sha256,
      r.columns,
      r.reason,
    ],
  );
}

/** One line for a failed connection, without the password. */
function connectError(name: string, err: unknown): WarehouseError {
  const e = coerceError(err);
  const sqlState = (e as { code?: unknown }).code;
  if (typeof sqlState === 'string' && REFUSED.test(sqlState))
    return new WarehouseError('WAREHOUSE_REFUSED', `${name}: ${e.message}`, { cause: e });
  const detail = e.message !== '' ? e.message : ((e as { code?: string }).code ?? e.name);
  return new WarehouseError('WAREHOUSE_UNAVAILABLE', `${name}: cannot connect: ${detail}`, { cause: e });
}
