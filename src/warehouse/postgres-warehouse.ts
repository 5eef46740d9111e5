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
import type { DatasetName } from '../datasets/index.js';
import { coerceError, WarehouseError } from '../errors.js';
import { mergeChangesSql, openDuck, sqlIdent, sqlString, type DuckSession } from '../output/index.js';
import { LEDGER_SELECT, LEDGER_TABLE, ledgerDdl, ledgerRows, type LedgerRow } from './ledger.js';
import { tickerIn } from './row-source.js';
import { postgresCsvExpr, primaryKey, sqlType, type TableColumn } from './table-columns.js';
import { redactTarget } from './target.js';
import type { LoadTransaction, Warehouse } from './warehouse.js';

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

/** SQLSTATE classes that mean "the server refused us" rather than "try again". */
const REFUSED = /^(28|3D)/;

export async function openPostgresWarehouse(o: PostgresWarehouseOptions): Promise<Warehouse> {
  const name = redactTarget(o.url);
  const client = new pg.Client({
    connectionString: o.url,
    connectionTimeoutMillis: o.connectTimeoutMs ?? 10_000,
    // No password in the URL or PGPASSWORD: the .pgpass file, as libpq reads it.
    password: async () => {
      const u = new URL(o.url);
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
    },
  });
  client.on('error', () => undefined); // a dropped connection fails the running query, which is what reports it
  try {
    await client.connect();
  } catch (err: unknown) {
    await client.end().catch(() => undefined);
    throw connectError(name, err);
  }
  const schema = o.schema ?? 'public';
  const table = (t: string): string => `${sqlIdent(schema)}.${sqlIdent(t)}`;
  let duck: DuckSession | undefined;
  let scratch: string | undefined;
  /** Renders `select` to CSV with DuckDB and streams it into `copy`. */
  const copyIn = async (copy: string, select: string): Promise<void> => {
    duck ??= await openDuck({ threads: 2, memoryLimit: '512MB' });
    scratch ??= await mkdtemp(join(o.tmpDir ?? tmpdir(), 'filings-export-load-'));
    const file = join(scratch, 'rows.csv');
    await duck.run(`COPY (${select}) TO ${sqlString(file)} (FORMAT csv, HEADER false)`);
    await pipeline(createReadStream(file, { highWaterMark: 1 << 20 }), client.query(copyFrom(copy)));
    await rm(file, { force: true });
  };
  const csvColumns = (columns: readonly TableColumn[]): string => columns.map(postgresCsvExpr).join(', ');
  const names = (columns: readonly TableColumn[]): string => columns.map((c) => sqlIdent(c.name)).join(', ');
  const readLedger = async (): Promise<LedgerRow[]> => {
    const exists = await client.query('SELECT to_regclass($1) AS t', [table(LEDGER_TABLE)]);
    if (exists.rows[0]?.t === null) return [];
    return ledgerRows((await client.query(`${LEDGER_SELECT} ${table(LEDGER_TABLE)}`)).rows);
  };
  const tx: LoadTransaction = {
    readLedger,
    async replaceTable(dataset, columns, source) {
      const loading = `${dataset}__loading`;
      await client.query(`DROP TABLE IF EXISTS ${table(loading)}`);
      await client.query(
        `CREATE TABLE ${table(loading)} (${columns.map((c) => `${sqlIdent(c.name)} ${sqlType('postgres', c)}`).join(', ')})`,
      );
      await copyIn(
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
        await client.query(
          `ALTER INDEX ${table(`${loading}_pkey`)} RENAME TO ${sqlIdent(`${dataset}_pkey`)}`,
        );
      const n = await client.query(`SELECT count(*)::bigint AS n FROM ${table(dataset)}`);
      return Number(n.rows[0]?.n ?? 0);
    },
    async mergeChanges(dataset, columns, changesFile, companies) {
      const changes = 'filings_export_changes';
      await client.query(
        `CREATE TEMP TABLE ${changes} (change text, ${columns.map((c) => `${sqlIdent(c.name)} ${sqlType('postgres', c)}`).join(', ')}) ON COMMIT DROP`,
      );
      await copyIn(
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
      await client.query(`DROP TABLE ${changes}`);
      return merged.rowCount ?? 0;
    },
    async replaceCompanies(dataset, columns, source, replaced, companies) {
      await client.query(
        `DELETE FROM ${table(dataset)} WHERE ${tickerIn(replaced)} OR NOT (${tickerIn(companies)})`,
      );
      const before = await client.query(`SELECT count(*)::bigint AS n FROM ${table(dataset)}`);
      await copyIn(
        `COPY ${table(dataset)} (${names(columns)}) FROM STDIN (FORMAT csv)`,
        `SELECT ${csvColumns(columns)} FROM ${source.sql} WHERE ${tickerIn(replaced)}`,
      );
      const after = await client.query(`SELECT count(*)::bigint AS n FROM ${table(dataset)}`);
      return Number(after.rows[0]?.n ?? 0) - Number(before.rows[0]?.n ?? 0);
    },
    async record(r) {
      await client.query(
        `INSERT INTO ${table(LEDGER_TABLE)} VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
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
    },
  };
  let closed = false;
  return {
    engine: 'postgres',
    name,
    readLedger,
    async tableColumns(dataset: DatasetName) {
      const res = await client.query(
        `SELECT a.attname AS c, t.typname AS t FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
         WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`,
        [table(dataset)],
      );
      return res.rows.length === 0
        ? undefined
        : new Map(res.rows.map((r: { c: string; t: string }) => [r.c, r.t]));
    },
    async transaction(fn) {
      await client.query('BEGIN');
      try {
        // One loader per schema at a time: a second one waits here, then sees the first one's ledger.
        await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`filings_export_load:${schema}`]);
        await client.query(`CREATE SCHEMA IF NOT EXISTS ${sqlIdent(schema)}`);
        await client.query(ledgerDdl(table(LEDGER_TABLE)));
        const out = await fn(tx);
        await client.query('COMMIT');
        return out;
      } catch (err: unknown) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      }
    },
    async close() {
      if (closed) return;
      closed = true;
      duck?.close();
      if (scratch !== undefined) await rm(scratch, { recursive: true, force: true });
      await client.end().catch(() => undefined);
    },
  };
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
