/**
 * How a dataset's columns become table columns in each warehouse, derived from the column types
 * of the snapshot's manifest (the same types the Parquet files have) and the dataset registry.
 */
import {
  DATASET_REGISTRY,
  type ColumnDef,
  type ColumnType,
  type DatasetDefinition,
  type DatasetName,
} from '../datasets/index.js';
import { sqlIdent } from '../output/index.js';

/** A column as the manifest lists it. */
export type TableColumn = Pick<ColumnDef, 'name' | 'type' | 'role'>;

export const ENGINES = ['duckdb', 'postgres'] as const;
export type Engine = (typeof ENGINES)[number];

/**
 * Text columns holding an exact decimal: the source of an `approx` column (value_num). PostgreSQL's
 * unconstrained NUMERIC keeps every digit and the scale as written; DuckDB's DECIMAL has a fixed
 * scale and at most 38 digits, so there they stay text, exactly as in the Parquet.
 */
const EXACT_DECIMAL_TEXT: ReadonlySet<string> = new Set(
  (Object.values(DATASET_REGISTRY) as DatasetDefinition[])
    .flatMap((d) => d.schema.columns)
    .flatMap((c) => (c.role === 'approx' && c.from !== undefined ? [c.from] : [])),
);

/** PostgreSQL type per column type: what CREATE TABLE says and what pg_attribute's udt name reads. */
const POSTGRES: Record<ColumnType, { sql: string; udt: string }> = {
  VARCHAR: { sql: 'text', udt: 'text' },
  BOOLEAN: { sql: 'boolean', udt: 'bool' },
  INTEGER: { sql: 'integer', udt: 'int4' },
  BIGINT: { sql: 'bigint', udt: 'int8' },
  DOUBLE: { sql: 'double precision', udt: 'float8' },
  DATE: { sql: 'date', udt: 'date' },
  TIMESTAMPTZ: { sql: 'timestamptz', udt: 'timestamptz' },
  'DECIMAL(38,0)': { sql: 'numeric(38,0)', udt: 'numeric' },
  'VARCHAR[]': { sql: 'text[]', udt: '_text' },
  // jsonb: the JSON columns (_extra, highlight_payload_json, catalog objects) can be queried and indexed.
  JSON: { sql: 'jsonb', udt: 'jsonb' },
};

/** DuckDB keeps the Parquet's own types; information_schema spells TIMESTAMPTZ out. */
const DUCKDB_INFO_TYPE: Partial<Record<ColumnType, string>> = { TIMESTAMPTZ: 'TIMESTAMP WITH TIME ZONE' };

/** The column's type in CREATE TABLE. */
export function sqlType(engine: Engine, c: TableColumn): string {
  const exact = EXACT_DECIMAL_TEXT.has(c.name) && c.type === 'VARCHAR';
  if (engine === 'duckdb') return c.type;
  return exact ? 'numeric' : POSTGRES[c.type].sql;
}

/** The type name the database reports for a column of this type (to notice a table altered by hand). */
export function reportedType(engine: Engine, c: TableColumn): string {
  if (engine === 'duckdb') return DUCKDB_INFO_TYPE[c.type] ?? c.type;
  return EXACT_DECIMAL_TEXT.has(c.name) && c.type === 'VARCHAR' ? 'numeric' : POSTGRES[c.type].udt;
}

/**
 * The DuckDB expression that renders a column as PostgreSQL reads it in COPY's CSV: everything as
 * DuckDB writes it (dates, timestamps with offset, shortest round-trip doubles, JSON text, an empty
 * string quoted and a null left empty), lists as array literals.
 */
export function postgresCsvExpr(c: TableColumn): string {
  const col = sqlIdent(c.name);
  if (c.type !== 'VARCHAR[]') return col;
  const element = `CASE WHEN x IS NULL THEN 'NULL' ELSE '"' || replace(replace(x, '\\', '\\\\'), '"', '\\"') || '"' END`;
  return `CASE WHEN ${col} IS NULL THEN NULL ELSE '{' || array_to_string(list_transform(${col}, x -> ${element}), ',') || '}' END AS ${col}`;
}

/** The table's primary key: the dataset's key with `_requested_ticker` (one company may be asked twice). */
export function primaryKey(dataset: DatasetName, columns: readonly TableColumn[]): string[] | undefined {
  const key = (DATASET_REGISTRY[dataset] as DatasetDefinition).key;
  if (key === undefined || !columns.some((c) => c.name === key)) return undefined;
  return [key, '_requested_ticker'];
}

/** A stable text of the column list, kept in the ledger to notice a schema change. */
export function columnsSignature(columns: readonly TableColumn[]): string {
  return JSON.stringify(columns.map((c) => [c.name, c.type]));
}

/** The column list back from its signature. */
export function columnsFromSignature(signature: string): TableColumn[] {
  return (JSON.parse(signature) as [string, ColumnType][]).map(([name, type]) => ({
    name,
    type,
    role: 'field',
  }));
}
