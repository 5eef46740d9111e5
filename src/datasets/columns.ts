/**
 * Column types of the output schemas, named as DuckDB spells them (the engine that writes the files).
 * Each maps to one Parquet physical/logical type and one type per warehouse dialect (ddl.ts).
 */
export const COLUMN_TYPES = [
  'VARCHAR',
  'BOOLEAN',
  'INTEGER',
  'BIGINT',
  'DOUBLE',
  'DATE',
  'TIMESTAMPTZ',
  'DECIMAL(38,0)',
  'VARCHAR[]',
  'JSON',
] as const;
export type ColumnType = (typeof COLUMN_TYPES)[number];

export function isColumnType(value: unknown): value is ColumnType {
  return typeof value === 'string' && (COLUMN_TYPES as readonly string[]).includes(value);
}

/**
 * What a column holds:
 * - `field`: an API row field of the same name, cast to `type`;
 * - `approx`: a DOUBLE rendering of the exact decimal string in `from` (convenience, approximate);
 * - `overflow`: the exact text of the DECIMAL field `from` when it does not fit DECIMAL(38,0), else null;
 * - `extra`: the `_extra` JSON object of fields the schema does not know (and of values that did not
 *   cast to their column's type), never dropped;
 * - `lineage`: added by the exporter to every row (`_snapshot_id`, `_fetched_at`, `_requested_ticker`).
 */
export type ColumnRole = 'field' | 'approx' | 'overflow' | 'extra' | 'lineage';

export interface ColumnDef {
  name: string;
  type: ColumnType;
  role: ColumnRole;
  /** Source field of an `approx` or `overflow` column. */
  from?: string;
  /** Schema version that added the column (inferred schemas evolve additively). */
  since?: number;
  /** One line for docs and DDL comments. */
  description?: string;
}

/** Columns every dataset ends with, in this order. */
export const EXTRA_COLUMN: ColumnDef = {
  name: '_extra',
  type: 'JSON',
  role: 'extra',
  description:
    'Fields the schema does not know, and values that did not fit their column type, as a JSON object; null when none.',
};

export const LINEAGE_COLUMNS: readonly ColumnDef[] = [
  { name: '_snapshot_id', type: 'VARCHAR', role: 'lineage', description: 'Snapshot that exported the row.' },
  {
    name: '_fetched_at',
    type: 'TIMESTAMPTZ',
    role: 'lineage',
    description: 'When the API request that returned the row was sent (UTC).',
  },
  {
    name: '_requested_ticker',
    type: 'VARCHAR',
    role: 'lineage',
    description: 'Company key (ticker or CIK) the exporter asked the API for.',
  },
];

/** Row keys the exporter owns; an API field of the same name is kept under `_api<name>` in `_extra`. */
export const RESERVED_NAMES: ReadonlySet<string> = new Set([
  EXTRA_COLUMN.name,
  ...LINEAGE_COLUMNS.map((c) => c.name),
]);
