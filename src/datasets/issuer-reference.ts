/** The issuer reference row schema (interface 2.7). */
import type { ColumnDef } from './columns.js';

export const ISSUER_REFERENCE_SCHEMA_VERSION = 1;

const f = (name: string, type: ColumnDef['type']): ColumnDef => ({ name, type, role: 'field' });

export const ISSUER_REFERENCE_COLUMNS: readonly ColumnDef[] = [
  f('cik', 'VARCHAR'),
  f('current_ticker', 'VARCHAR'),
  f('issuer_name', 'VARCHAR'),
  f('ipo_date', 'DATE'),
  f('exchange', 'VARCHAR'),
  f('sector', 'VARCHAR'),
  f('industry', 'VARCHAR'),
  f('sic_code', 'VARCHAR'),
  f('as_of_date', 'DATE'),
];
