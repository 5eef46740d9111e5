/**
 * The fact row schema (interface 2.2 plus the dimensional fields of facts/full), shared by
 * facts_full, facts_core and facts_latest so the three load into one table shape.
 */
import type { ColumnDef } from './columns.js';

/** Bump when the column list or a type changes; the manifest records it per dataset. */
export const FACT_SCHEMA_VERSION = 1;

const f = (name: string, type: ColumnDef['type'], description?: string): ColumnDef => ({
  name,
  type,
  role: 'field',
  ...(description === undefined ? {} : { description }),
});

export const FACT_COLUMNS: readonly ColumnDef[] = [
  f('fact_key', 'VARCHAR', 'Stable public key of the fact (sha256 hex).'),
  f('series_key', 'VARCHAR', 'Stable public key of the series (64 lowercase hex).'),
  f('cik', 'VARCHAR', 'Zero-padded 10-digit CIK.'),
  f('current_ticker', 'VARCHAR'),
  f('metric_id', 'VARCHAR', 'XBRL concept id `<taxonomy>#<Concept>`.'),
  f('metric_label', 'VARCHAR'),
  f('period_key', 'VARCHAR', '`duration:START..END` or `instant:DATE`.'),
  f('period_kind', 'VARCHAR', '`instant` or `duration`.'),
  f('period_start', 'DATE'),
  f('period_end', 'DATE'),
  f('period_end_year', 'INTEGER'),
  f('period_end_quarter', 'INTEGER', 'Calendar quarter 1..4 in which the period ends.'),
  f('unit_signature', 'VARCHAR'),
  f('unit_class', 'VARCHAR'),
  f('currency', 'VARCHAR'),
  f('value_num', 'VARCHAR', 'Exact decimal in full units, as text. Equals value_scaled_int x 10^scale.'),
  {
    name: 'value_num_approx',
    type: 'DOUBLE',
    role: 'approx',
    from: 'value_num',
    description:
      'APPROXIMATE: value_num as a double, for charts and quick filters. Never for sums that must be exact.',
  },
  f('value_scaled_int', 'DECIMAL(38,0)', 'Exact integer significand.'),
  {
    name: 'value_scaled_int_text',
    type: 'VARCHAR',
    role: 'overflow',
    from: 'value_scaled_int',
    description:
      'Exact text of value_scaled_int when it is not an integer of at most 38 digits (then value_scaled_int is null); null otherwise.',
  },
  f('scale', 'INTEGER', 'Power-of-ten exponent applied to value_scaled_int.'),
  f('source_accession', 'VARCHAR'),
  f('source_form_type', 'VARCHAR'),
  f('source_is_amendment', 'BOOLEAN'),
  f('source_is_current_filing_period', 'BOOLEAN'),
  f('source_filed_at', 'DATE'),
  f('evidence_key', 'VARCHAR'),
  f('evidence_url', 'VARCHAR'),
  f('is_consolidated', 'BOOLEAN', 'False for dimensional rows.'),
  f('dims_key', 'VARCHAR', 'Dimension combination key; null for consolidated rows (facts/full).'),
  f('axis_types', 'VARCHAR[]', 'Axis names of a dimensional row (facts/full).'),
  f('dimension_path_label', 'VARCHAR', 'Human-readable slice label (facts/full).'),
];
