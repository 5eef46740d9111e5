/**
 * The warehouse port: what `load` needs from a database, implemented per engine in engines/
 * (engines/duckdb-warehouse.ts, engines/postgres-warehouse.ts). Every change happens inside
 * `transaction`, which holds the database's load lock, so a load is applied whole or not at all.
 */
import type { DatasetName } from '../datasets/index.js';
import type { LedgerRow } from './ledger.js';
import type { TableCompanies } from './shrink.js';
import type { Engine, TableColumn } from './table-columns.js';

/** Where a dataset's rows are read from: DuckDB table expression over local files. */
export interface RowSource {
  /** `read_parquet([...])`-like expression, or a typed empty SELECT when the dataset has no file. */
  sql: string;
}

/** Plain statements in the load's transaction, for what both engines spell alike (history.ts). */
export interface SqlPort {
  readonly engine: Engine;
  /** The schema-qualified, quoted name of a table. */
  table(name: string): string;
  /** Runs a statement; the rows it inserted, updated or deleted. */
  exec(sql: string): Promise<number>;
  all(sql: string): Promise<Record<string, unknown>[]>;
  /** Column name → type name as the database reports it; undefined when the table does not exist. */
  columns(table: string): Promise<Map<string, string> | undefined>;
}

export interface LoadTransaction {
  readonly sql: SqlPort;
  /**
   * The dataset's rows of a `changes` file as a table expression with a `change` column, valid
   * after `mergeChanges` of that dataset in this transaction.
   */
  changesSource(dataset: DatasetName, changesFile: string): string;
  /** The ledger as this transaction sees it (under the lock). */
  readLedger(): Promise<LedgerRow[]>;
  /** Rebuilds the table from `source` beside the old one and swaps it in. Returns its rows. */
  replaceTable(dataset: DatasetName, columns: readonly TableColumn[], source: RowSource): Promise<number>;
  /** MERGEs the `changes` rows of the dataset, then deletes rows of companies not in `companies`. */
  mergeChanges(
    dataset: DatasetName,
    columns: readonly TableColumn[],
    changesFile: string,
    companies: readonly string[],
  ): Promise<number>;
  /** Replaces the rows of `replaced` companies from `source`; deletes those not in `companies`. */
  replaceCompanies(
    dataset: DatasetName,
    columns: readonly TableColumn[],
    source: RowSource,
    replaced: readonly string[],
    companies: readonly string[],
  ): Promise<number>;
  record(row: LedgerRow): Promise<void>;
}

export interface Warehouse {
  readonly engine: Engine;
  /** The target as given, password removed: safe to print. */
  readonly name: string;
  /** The ledger (empty when it does not exist yet). */
  readLedger(): Promise<LedgerRow[]>;
  /** Column name → type name as the database reports it; undefined when the table does not exist. */
  tableColumns(dataset: DatasetName): Promise<Map<string, string> | undefined>;
  /** The table's rows and companies (shrink.ts); undefined when the table does not exist. */
  tableCompanies(dataset: DatasetName): Promise<TableCompanies | undefined>;
  /** Runs `fn` in one transaction holding the load lock; rolls back when it throws. */
  transaction<T>(fn: (tx: LoadTransaction) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}
