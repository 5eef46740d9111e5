/** The evidence row schema (interface 2.6). */
import type { ColumnDef } from './columns.js';

export const EVIDENCE_SCHEMA_VERSION = 1;

const f = (name: string, type: ColumnDef['type'], description?: string): ColumnDef => ({
  name,
  type,
  role: 'field',
  ...(description === undefined ? {} : { description }),
});

export const EVIDENCE_COLUMNS: readonly ColumnDef[] = [
  f('evidence_key', 'VARCHAR'),
  f('cik', 'VARCHAR'),
  f('source_accession', 'VARCHAR'),
  f('source_form_type', 'VARCHAR'),
  f('source_is_amendment', 'BOOLEAN'),
  f('source_filed_at', 'DATE'),
  f('filing_url', 'VARCHAR'),
  f('document_url', 'VARCHAR'),
  f('evidence_url', 'VARCHAR'),
  f('viewer_url', 'VARCHAR'),
  f('snippet_text', 'VARCHAR'),
  f('locator_type', 'VARCHAR', '`html`, `ixbrl` or `xbrl`.'),
  f('html_start_offset', 'BIGINT'),
  f('html_end_offset', 'BIGINT'),
  f('document_name', 'VARCHAR'),
  f('document_sequence', 'VARCHAR'),
  f('section_title', 'VARCHAR'),
  f('highlight_payload_json', 'JSON', 'Machine-readable locator payload, as a JSON object.'),
];
