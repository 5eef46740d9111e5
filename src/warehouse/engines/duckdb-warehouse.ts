/**
 * DuckDB as a load target: a database file opened by this process, which DuckDB lets one process
 * write at a time (a second loader is refused with WAREHOUSE_UNAVAILABLE and retries later).
 * Tables keep the Parquet's own types; reads go straight from the snapshot's files.
 */
import { DuckDBInstance } from '@duckdb/node-api';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { DatasetName } from '../../datasets/index.js';
import { coerceError, WarehouseError } from '../../errors.js';
import { mergeChangesSql, sqlIdent, sqlString } from '../../output/index.js';
import { LEDGER_SELECT, LEDGER_TABLE, ledgerDdl, ledgerRows } from '../ledger.js';
import { tickerIn } from '../row-source.js';
import { readTableCompanies } from '../shrink.js';
import { primaryKey, sqlType, type TableColumn } from '../table-columns.js';
import type { LoadTransaction, SqlPort, Warehouse } from '../warehouse.js';

export interface DuckDbWarehouseOptions {
  path: string;
  /** Schema of the tables. @defaultValue `main` */
  schema?: string;
  /** DuckDB threads. @defaultValue 2 */
  threads?: number;
  /** DuckDB memory_limit. @defaultValue `1GB` */
  memoryLimit?: string;
}

export async function openDuckDbWarehouse(o: DuckDbWarehouseOptions): Promise<Warehouse> {
  const name = `duckdb:${o.path}`;
  const instance = await openInstance(o, name);
  const conn = await instance.connect();
  const schema = o.schema ?? 'main';
  const all = async (sql: string): Promise<Record<string, unknown>[]> =>
    (await conn.runAndReadAll(sql)).getRowObjectsJson() as Record<string, unknown>[];
  const s: DuckWarehouseSession = {
    schema,
    table: (t) => `${sqlIdent(schema)}.${sqlIdent(t)}`,
    all,
    run: async (sql) => {
      await conn.run(sql);
    },
    count: async (sql) => Number((await all(sql))[0]?.n ?? 0),
  };
  const tx = loadTransaction(s, {
    engine: 'duckdb',
    table: s.table,
    exec: async (sql) => (await conn.run(sql)).rowsChanged,
    all,
    columns: (t) => tableColumns(s, t),
  });
  let closed = false;
  return {
    engine: 'duckdb',
    name,
    readLedger: tx.readLedger,
    tableColumns: (dataset) => tableColumns(s, dataset),
    tableCompanies: async (dataset) =>
      readTableCompanies(s.table(dataset), await tableColumns(s, dataset), s.all),
    transaction: (fn) => inLoadTransaction(s, () => fn(tx)),
    async close() {
      if (closed) return;
      closed = true;
      conn.closeSync();
      instance.closeSync();
    },
  };
}

/** The open database and what every statement of a load needs from it. */
interface DuckWarehouseSession {
  readonly schema: string;
  /** The schema-qualified, quoted name of a table. */
  table(name: string): string;
  all(sql: string): Promise<Record<string, unknown>[]>;
  run(sql: string): Promise<void>;
  /** The `n` column of the first row (0 without rows). */
  count(sql: string): Promise<number>;
}

/** Opens (creating) the database file; a file another process holds is WAREHOUSE_UNAVAILABLE, to retry later. */
async function openInstance(o: DuckDbWarehouseOptions, name: string): Promise<DuckDBInstance> {
  await mkdir(dirname(o.path), { recursive: true });
  try {
    return await DuckDBInstance.create(o.path, {
      threads: String(o.threads ?? 2),
      memory_limit: o.memoryLimit ?? '1GB',
      autoinstall_known_extensions: 'false',
    });
  } catch (err: unknown) {
    const e = coerceError(err);
    if (/lock/i.test(e.message))
      throw new WarehouseError(
        'WAREHOUSE_UNAVAILABLE',
        `${name} is open in another process (DuckDB allows one writer): try again when it is done`,
        { cause: e },
      );
    throw new WarehouseError('WAREHOUSE_REFUSED', `${name}: cannot open: ${e.message}`, { cause: e });
  }
}

/** Column name → type name from the catalog; undefined when the table does not exist. */
async function tableColumns(
  s: DuckWarehouseSession,
  dataset: string,
): Promise<Map<string, string> | undefined> {
  const rows = await s.all(
    `SELECT column_name AS c, data_type AS t FROM information_schema.columns WHERE table_schema = ${sqlString(s.schema)} AND table_name = ${sqlString(dataset)} ORDER BY ordinal_position`,
  );
  return rows.length === 0 ? undefined : new Map(rows.map((r) => [String(r.c), String(r.t)]));
}

/** Runs `fn` in one transaction that sees the schema and the ledger exist; rolls back when it throws. */
async function inLoadTransaction<T>(s: DuckWarehouseSession, fn: () => Promise<T>): Promise<T> {
  await s.run('BEGIN TRANSACTION');
  try {
    if (s.schema !== 'main') await s.run(`CREATE SCHEMA IF NOT EXISTS ${sqlIdent(s.schema)}`);
    await s.run(ledgerDdl(s.table(LEDGER_TABLE)));
    const out = await fn();
    await s.run('COMMIT');
    return out;
  } catch (err: unknown) {
    await s.run('ROLLBACK').catch(() => undefined);
    throw err;
  }
}

/** The statements of a load; reads go straight from the snapshot's files. */
function loadTransaction(s: DuckWarehouseSession, sql: SqlPort): LoadTransaction {
  const { table, run, count } = s;
  return {
    sql,
    changesSource: (dataset, changesFile) => changesRows(dataset, changesFile),
    async readLedger() {
      const exists = await s.all(
        `SELECT 1 FROM information_schema.tables WHERE table_schema = ${sqlString(s.schema)} AND table_name = ${sqlString(LEDGER_TABLE)}`,
      );
      return exists.length === 0 ? [] : ledgerRows(await s.all(`${LEDGER_SELECT} ${table(LEDGER_TABLE)}`));
    },
    async replaceTable(dataset, columns, source) {
      const loading = `${dataset}__loading`;
      await run(`DROP TABLE IF EXISTS ${table(loading)}`);
      await run(createTable(table(loading), dataset, columns));
      await run(`INSERT INTO ${table(loading)} SELECT ${columnList(columns)} FROM ${source.sql}`);
      await run(`DROP TABLE IF EXISTS ${table(dataset)}`);
      await run(`ALTER TABLE ${table(loading)} RENAME TO ${sqlIdent(dataset)}`);
      return count(`SELECT count(*) AS n FROM ${table(dataset)}`);
    },
    async mergeChanges(dataset, columns, changesFile, companies) {
      const source = changesRows(dataset, changesFile);
      const applied = await count(`SELECT count(*) AS n FROM ${source}`);
      await run(
        mergeChangesSql(
          table(dataset),
          source,
          columns.map((c) => c.name),
          sqlIdent,
        ),
      );
      await run(`DELETE FROM ${table(dataset)} WHERE NOT (${tickerIn(companies)})`);
      return applied;
    },
    async replaceCompanies(dataset, columns, source, replaced, companies) {
      await run(`DELETE FROM ${table(dataset)} WHERE ${tickerIn(replaced)} OR NOT (${tickerIn(companies)})`);
      const n = await count(`SELECT count(*) AS n FROM ${source.sql} WHERE ${tickerIn(replaced)}`);
      await run(
        `INSERT INTO ${table(dataset)} SELECT ${columnList(columns)} FROM ${source.sql} WHERE ${tickerIn(replaced)}`,
      );
      return n;
    },
    async record(r) {
      await run(
        `INSERT INTO ${table(LEDGER_TABLE)} VALUES (${r.seq}, ${sqlString(r.snapshot_id)}, ${sqlString(r.snapshot_date)}, ${sqlString(r.dataset)}, ${sqlString(r.mode)}, ${r.rows}, ${sqlString(r.loaded_at)}, ${sqlString(r.manifest_sha256)}, ${sqlString(r.columns)}, ${sqlString(r.reason)})`,
      );
    },
  };
}

function changesRows(dataset: DatasetName, changesFile: string): string {
  return `(SELECT * FROM read_parquet(${sqlString(changesFile)}) WHERE source_dataset = ${sqlString(dataset)})`;
}

function columnList(columns: readonly TableColumn[]): string {
  return columns.map((c) => sqlIdent(c.name)).join(', ');
}

function createTable(name: string, dataset: DatasetName, columns: readonly TableColumn[]): string {
  const key = primaryKey(dataset, columns);
  const defs = columns.map((c) => `${sqlIdent(c.name)} ${sqlType('duckdb', c)}`);
  if (key !== undefined) defs.push(`PRIMARY KEY (${key.map(sqlIdent).join(', ')})`);
  return `CREATE TABLE ${name} (${defs.join(', ')})`;
}
