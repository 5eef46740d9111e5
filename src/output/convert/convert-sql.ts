/**
 * Builds the DuckDB SQL that turns staged NDJSON rows into typed output rows.
 *
 * Every field is read as text (VARCHAR) and cast in the SELECT: DuckDB's own typed JSON reading of
 * DECIMAL(38,0) is ~4x slower than VARCHAR → HUGEINT → DECIMAL, and its casts are lenient in ways
 * that lose data ('1.5'::INTEGER is 2, '2024-01-01T05:00Z'::DATE drops the time), so each cast is
 * guarded by the exact shape the type accepts.
 *
 * Two modes. `strict` raises an error on the first value that does not fit its column (the normal,
 * fast path). `tolerant` (used only when strict failed) sets such values to null and keeps the
 * original in `_extra` under the field's name, so nothing is ever dropped.
 */
import { Kind } from '../../types.js';
import { sqlIdent, sqlString } from './duckdb.js';
import type { ColumnDef, ColumnType, DatasetSchema } from '../../datasets/index.js';

export type ConvertMode = 'strict' | 'tolerant';

const INTEGER_DIGITS = '-?[0-9]{1,38}';
const STRING_KINDS = Kind.STRING | Kind.DATE_STRING;

interface ReadColumn {
  name: string;
  /** How the row's JSON is read into it: text, or JSON when the field mixes strings with other kinds. */
  readAs: 'VARCHAR' | 'JSON';
}

export interface ConvertInput {
  schema: DatasetSchema;
  /** Kinds observed per field (schema fields and extra fields). */
  kinds: ReadonlyMap<string, number>;
  /** Fields outside the schema, read into `_extra`. */
  extraFields: readonly string[];
  mode: ConvertMode;
  /**
   * The snapshot being published: `_snapshot_id` is this, whatever the staged rows say (a reused
   * part was staged by an earlier snapshot; its `_fetched_at` stays the true fetch time).
   */
  snapshotId?: string;
}

/** The staged rows of one output file and the row range to take from them. */
export interface ConvertSource {
  /** One gzip NDJSON file: a staged part, or several parts concatenated (src/output/staged-part/parquet/dataset-files.ts). */
  file: string;
  /** Rows to skip (a big part split across output files). */
  skip: number;
  /** Rows to take (after skip). */
  take: number;
  /** Rows in the file; when skip = 0 and take = total, no row numbering is needed. */
  total: number;
  /** Longest line of the file in bytes (maxLineBytesFor); sizes the line reader's buffer. */
  maxLineBytes: number;
  /** 'none' for a staged part's rows uncompressed (src/output/staged-part/layout.ts). @defaultValue 'gzip' */
  compression?: 'gzip' | 'none';
}

function readType(kinds: number | undefined, target: ColumnType | 'extra'): 'VARCHAR' | 'JSON' {
  // A JSON-typed value read as text loses the quotes of strings; read those fields as JSON.
  if (target !== 'JSON' && target !== 'extra') return 'VARCHAR';
  const k = (kinds ?? 0) & ~Kind.NULL;
  if (target === 'extra' && (k & ~STRING_KINDS) === 0) return 'VARCHAR';
  return (k & STRING_KINDS) !== 0 ? 'JSON' : 'VARCHAR';
}

/**
 * Typed expression of a field read as text; `fail` is what a value that does not fit becomes.
 * `kinds` (what the part writer saw in every row of the input) can prove a value's shape: a field
 * only ever seen as a safe integer, a YYYY-MM-DD string or a boolean needs no shape guard, and a
 * strict CAST still raises on what does not fit (an INTEGER overflow, 2024-02-30). Saves about a
 * tenth of the conversion of facts rows (docs/decisions.md).
 */
function typedExpr(
  ref: string,
  col: ColumnDef,
  readAs: 'VARCHAR' | 'JSON',
  mode: ConvertMode,
  kinds: number | undefined,
): string {
  const strict = mode === 'strict';
  const fail = strict
    ? `error(${sqlString(`value of ${col.name} does not fit ${col.type}: `)} || ${ref})`
    : 'NULL';
  const guarded = (guard: string, cast: string): string =>
    `CASE WHEN ${ref} IS NULL THEN NULL WHEN ${guard} THEN ${cast} ELSE ${fail} END`;
  const cast = (t: string): string => (strict ? `CAST(${ref} AS ${t})` : `TRY_CAST(${ref} AS ${t})`);
  const seenOnly = (kind: number): boolean =>
    strict && kinds !== undefined && (kinds & ~Kind.NULL) === kind && readAs === 'VARCHAR';
  switch (col.type) {
    case 'VARCHAR':
      return ref;
    case 'JSON':
      return readAs === 'JSON' ? ref : cast('JSON');
    case 'BOOLEAN':
      if (seenOnly(Kind.BOOLEAN)) return cast('BOOLEAN');
      return `CASE WHEN ${ref} IS NULL THEN NULL WHEN ${ref} = 'true' THEN true WHEN ${ref} = 'false' THEN false ELSE ${strict ? fail : 'NULL'} END`;
    case 'INTEGER':
      if (seenOnly(Kind.INT)) return cast('INTEGER');
      return guarded(`regexp_full_match(${ref}, '-?[0-9]{1,10}')`, cast('INTEGER'));
    case 'BIGINT':
      if (seenOnly(Kind.INT)) return cast('BIGINT');
      return guarded(`regexp_full_match(${ref}, '-?[0-9]{1,19}')`, cast('BIGINT'));
    case 'DOUBLE':
      return cast('DOUBLE');
    case 'DATE':
      if (seenOnly(Kind.DATE_STRING)) return cast('DATE');
      return guarded(`regexp_full_match(${ref}, '[0-9]{4}-[0-9]{2}-[0-9]{2}')`, cast('DATE'));
    case 'TIMESTAMPTZ':
      return cast('TIMESTAMPTZ');
    case 'DECIMAL(38,0)':
      // VARCHAR → HUGEINT → DECIMAL is exact for ≤ 38 digits and far faster than VARCHAR → DECIMAL.
      return guarded(
        `regexp_full_match(${ref}, '${INTEGER_DIGITS}')`,
        `CAST(CAST(${ref} AS HUGEINT) AS DECIMAL(38,0))`,
      );
    case 'VARCHAR[]':
      return strict
        ? `CAST(CAST(${ref} AS JSON) AS VARCHAR[])`
        : `TRY_CAST(TRY_CAST(${ref} AS JSON) AS VARCHAR[])`;
  }
}

/** The SELECT producing typed rows, in schema column order. */
export function convertSelect(input: ConvertInput, source: ConvertSource): string {
  const { schema, extraFields } = input;
  const reads = readColumns(input);
  const readAs = new Map(reads.map((r) => [r.name, r.readAs]));
  const overflowOf = new Map(schema.columns.filter((c) => c.role === 'overflow').map((c) => [c.from, c]));
  const failureEntries: string[] = [];
  const extraEntries: string[] = [];
  const select: string[] = [];
  for (const c of schema.columns) {
    const alias = sqlIdent(c.name);
    switch (c.role) {
      case 'field': {
        const field = fieldSelect(input, c, readAs.get(c.name) ?? 'VARCHAR', overflowOf.has(c.name));
        select.push(`${field.expr} AS ${alias}`);
        if (field.failure !== null) failureEntries.push(field.failure);
        break;
      }
      case 'approx':
        select.push(`TRY_CAST(${sqlIdent(c.from ?? '')} AS DOUBLE) AS ${alias}`);
        break;
      case 'overflow': {
        const ref = sqlIdent(c.from ?? '');
        select.push(
          `CASE WHEN NOT regexp_full_match(${ref}, '${INTEGER_DIGITS}') THEN ${ref} END AS ${alias}`,
        );
        break;
      }
      case 'extra': {
        for (const name of extraFields) extraEntries.push(extraEntry(input, name, readAs.get(name)));
        select.push('__EXTRA__'); // filled below: cast failures of later field columns belong in it too
        break;
      }
      case 'lineage':
        select.push(lineageSelect(input, c, alias));
        break;
    }
  }
  const extra = extraColumn([...extraEntries, ...failureEntries]);
  const list = select.map((s) => (s === '__EXTRA__' ? extra : s)).join(',\n  ');
  return `SELECT\n  ${list}\nFROM ${rowsFrom(reads, source)}`;
}

/** The fields the JSON parse reads (schema fields, lineage, extra fields) and as what. */
function readColumns(input: ConvertInput): ReadColumn[] {
  const { schema, kinds, extraFields } = input;
  const reads: ReadColumn[] = [];
  for (const c of schema.columns) {
    if (c.role === 'field') reads.push({ name: c.name, readAs: readType(kinds.get(c.name), c.type) });
    else if (c.role === 'lineage') reads.push({ name: c.name, readAs: 'VARCHAR' });
  }
  for (const name of extraFields) reads.push({ name, readAs: readType(kinds.get(name), 'extra') });
  return reads;
}

/**
 * A field column's typed expression, and in tolerant mode the `_extra` entry keeping a value that
 * would not cast (null when it cannot fail).
 */
function fieldSelect(
  input: ConvertInput,
  c: ColumnDef,
  r: 'VARCHAR' | 'JSON',
  hasOverflow: boolean,
): { expr: string; failure: string | null } {
  const { kinds, mode } = input;
  const ref = sqlIdent(c.name);
  const keepsOverflow = c.type === 'DECIMAL(38,0)' && hasOverflow;
  // With an overflow column, a value that is not a 38-digit integer is kept there, not an error.
  const expr = keepsOverflow
    ? `CASE WHEN regexp_full_match(${ref}, '${INTEGER_DIGITS}') THEN CAST(CAST(${ref} AS HUGEINT) AS DECIMAL(38,0)) END`
    : typedExpr(ref, c, r, mode, kinds.get(c.name));
  const castable = !(c.type === 'VARCHAR' || (c.type === 'JSON' && r === 'JSON') || keepsOverflow);
  const failure =
    mode === 'tolerant' && castable
      ? `{'key': ${sqlString(c.name)}, 'value': CASE WHEN ${ref} IS NOT NULL AND (${expr}) IS NULL THEN to_json(${ref}) END}`
      : null;
  return { expr, failure };
}

/** The `_extra` entry of a field the schema does not name, as JSON. */
function extraEntry(input: ConvertInput, name: string, r: 'VARCHAR' | 'JSON' | undefined): string {
  const { kinds, mode } = input;
  const ref = sqlIdent(name);
  const k = (kinds.get(name) ?? 0) & ~Kind.NULL;
  const json =
    r === 'JSON'
      ? ref
      : (k & ~STRING_KINDS) === 0
        ? `to_json(${ref})`
        : mode === 'strict'
          ? `CAST(${ref} AS JSON)`
          : `coalesce(TRY_CAST(${ref} AS JSON), to_json(${ref}))`;
  return `{'key': ${sqlString(name)}, 'value': ${json}}`;
}

/** A lineage column: the fetch time typed, the snapshot id given, else the staged text. */
function lineageSelect(input: ConvertInput, c: ColumnDef, alias: string): string {
  return c.type === 'TIMESTAMPTZ'
    ? `${input.mode === 'strict' ? 'CAST' : 'TRY_CAST'}(${sqlIdent(c.name)} AS TIMESTAMPTZ) AS ${alias}`
    : c.name === '_snapshot_id' && input.snapshotId !== undefined
      ? `${sqlString(input.snapshotId)} AS ${alias}`
      : `${sqlIdent(c.name)} AS ${alias}`;
}

/** The `_extra` column: the non-null entries as a JSON object, NULL when none. */
function extraColumn(entries: readonly string[]): string {
  return entries.length === 0
    ? `CAST(NULL AS JSON) AS ${sqlIdent('_extra')}`
    : `CAST(NULLIF(CAST(to_json(map_from_entries(list_filter([${entries.join(', ')}], lambda e: e.value IS NOT NULL))) AS VARCHAR), '{}') AS JSON) AS ${sqlIdent('_extra')}`;
}

/** The rows the SELECT reads: the source's lines parsed once each, or only the slice asked for. */
function rowsFrom(reads: readonly ReadColumn[], source: ConvertSource): string {
  // One JSON parse per row, into text (or JSON) fields by name; the reader only splits lines.
  const structure = sqlString(JSON.stringify(Object.fromEntries(reads.map((r) => [r.name, r.readAs]))));
  const lines = lineScan(source.file, source.maxLineBytes, source.compression ?? 'gzip');
  if (source.skip === 0 && source.take === source.total)
    return `(SELECT unnest(json_transform(line, ${structure})) FROM ${lines})`;
  // Row numbering in file order (insertion order is preserved): skipped lines are not even parsed,
  // and LIMIT stops the scan early.
  return `(SELECT unnest(json_transform(line, ${structure})) FROM ${lines} WITH ORDINALITY AS src(line, "__fx_row")\n  WHERE "__fx_row" > ${source.skip} LIMIT ${source.take})`;
}

/**
 * Longest line the line reader accepts, in bytes, for staged parts whose longest line is `chars`
 * UTF-16 units (UTF-8 needs at most 3 bytes per unit). Unknown (a part staged by an older version): 16 MiB, what
 * DuckDB's JSON reader accepted.
 */
export function maxLineBytesFor(chars: number | undefined): number {
  if (chars === undefined) return UNKNOWN_MAX_LINE_BYTES;
  return Math.max(MIN_MAX_LINE_BYTES, 3 * chars + 2);
}

const UNKNOWN_MAX_LINE_BYTES = 16 * 1024 * 1024;
const MIN_MAX_LINE_BYTES = 4096;
const MIN_LINE_BUFFER_BYTES = 1024 * 1024;

/**
 * An NDJSON file (gzip, or plain) as one text column `line`, in file order: read_csv with a delimiter that
 * cannot occur (JSON.stringify escapes every control character) and no quoting only splits lines,
 * through one buffer sized to the longest line (1 MiB for facts rows). DuckDB's read_ndjson holds
 * ~36 MB of fixed buffers instead (maximum_object_size cannot go below 16 MiB): a third of the
 * publishing worker's memory budget (docs/decisions.md, "publishing memory").
 */
function lineScan(file: string, maxLineBytes: number, compression: 'gzip' | 'none'): string {
  const buffer = Math.max(MIN_LINE_BUFFER_BYTES, 2 * maxLineBytes);
  return `read_csv(${sqlString(file)}, columns = {'line': 'VARCHAR'}, delim = chr(1), quote = '', escape = '', header = false, auto_detect = false, compression = '${compression}', max_line_size = ${maxLineBytes}, buffer_size = ${buffer}, hive_partitioning = false)`;
}

/** The NDJSON projection of typed rows: exact decimals as strings, timestamps as ISO-8601 UTC. */
export function ndjsonSelect(schema: DatasetSchema, from: string): string {
  const replace: string[] = [];
  for (const c of schema.columns) {
    const ref = sqlIdent(c.name);
    if (c.type === 'DECIMAL(38,0)') replace.push(`CAST(${ref} AS VARCHAR) AS ${ref}`);
    else if (c.type === 'TIMESTAMPTZ') replace.push(`strftime(${ref}, '%Y-%m-%dT%H:%M:%S.%gZ') AS ${ref}`);
  }
  const cols = schema.columns.map((c) => sqlIdent(c.name)).join(', ');
  return replace.length === 0
    ? `SELECT ${cols} FROM ${from}`
    : `SELECT * REPLACE (${replace.join(', ')}) FROM (SELECT ${cols} FROM ${from})`;
}
