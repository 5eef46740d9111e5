/**
 * The statements of point-in-time history (history.ts), written once for DuckDB and PostgreSQL:
 * the `<dataset>_history` table, its bookkeeping tables, the closing and opening of versions, and
 * the `facts_full_restatements` view. Names come in quoted; values as SQL literals.
 */
import { sqlIdent, sqlString } from '../output/index.js';
import { tickerIn } from './row-source.js';
import { sqlType, type Engine, type TableColumn } from './table-columns.js';

/** The columns a history table adds to its dataset's. */
export const VERSION_COLUMNS: readonly TableColumn[] = [
  { name: '_valid_from', type: 'TIMESTAMPTZ', role: 'lineage' },
  { name: '_valid_to', type: 'TIMESTAMPTZ', role: 'lineage' },
  { name: '_from_snapshot', type: 'VARCHAR', role: 'lineage' },
  { name: '_to_snapshot', type: 'VARCHAR', role: 'lineage' },
];

/** One night applied to a dataset's history: which snapshot, and how the versions were found. */
export function nightsDdl(table: string): string {
  return `CREATE TABLE IF NOT EXISTS ${table} (
  dataset VARCHAR NOT NULL,
  snapshot_id VARCHAR NOT NULL,
  snapshot_date DATE NOT NULL,
  published_at TIMESTAMPTZ NOT NULL,
  built_from VARCHAR NOT NULL,
  opened BIGINT NOT NULL,
  closed BIGINT NOT NULL,
  PRIMARY KEY (dataset, snapshot_id)
)`;
}

/** A night the history never saw: the versions on either side were joined at `joined_at`. */
export function gapsDdl(table: string): string {
  return `CREATE TABLE IF NOT EXISTS ${table} (
  dataset VARCHAR NOT NULL,
  missing_snapshot_id VARCHAR NOT NULL,
  why VARCHAR NOT NULL,
  after_snapshot_id VARCHAR NOT NULL,
  joined_at_snapshot_id VARCHAR NOT NULL,
  joined_at TIMESTAMPTZ NOT NULL,
  PRIMARY KEY (dataset, missing_snapshot_id)
)`;
}

export function historyTableDdl(engine: Engine, table: string, columns: readonly TableColumn[]): string {
  const defs = [...columns, ...VERSION_COLUMNS].map((c) => `${sqlIdent(c.name)} ${sqlType(engine, c)}`);
  return `CREATE TABLE IF NOT EXISTS ${table} (${defs.join(', ')})`;
}

/**
 * PostgreSQL's index of the open versions' key, which a night's close joins on; closed versions
 * never match it, so it stays the size of the current table. DuckDB has no partial index, and its
 * close is a hash join anyway: none there.
 */
export function openVersionsIndexDdl(
  engine: Engine,
  table: string,
  name: string,
  key: readonly string[],
): string | undefined {
  switch (engine) {
    case 'postgres':
      return `CREATE INDEX IF NOT EXISTS ${sqlIdent(`${name}_open`)} ON ${table} (${key.map(sqlIdent).join(', ')}) WHERE _valid_to IS NULL`;
    case 'duckdb':
      return undefined;
    default: {
      const never: never = engine;
      return never;
    }
  }
}

export function addColumnSql(engine: Engine, table: string, c: TableColumn): string {
  return `ALTER TABLE ${table} ADD COLUMN ${sqlIdent(c.name)} ${sqlType(engine, c)}`;
}

/** What the version statements of one dataset and night are written from. */
export interface VersionSql {
  history: string;
  columns: readonly TableColumn[];
  key: readonly string[];
  snapshotId: string;
  publishedAt: string;
}

const at = (iso: string): string => `CAST(${sqlString(iso)} AS TIMESTAMPTZ)`;
const keyMatch = (v: VersionSql, a: string, b: string): string =>
  v.key.map((k) => `${a}.${sqlIdent(k)} = ${b}.${sqlIdent(k)}`).join(' AND ');

/** Lineage (`_snapshot_id`, `_fetched_at`) differs between exports of one fact: never a new version, as in `changes`. */
function sameValues(v: VersionSql, a: string, b: string): string {
  const compared = v.columns.filter((c) => c.role !== 'lineage' && !v.key.includes(c.name));
  return (
    compared
      .map((c) => `NOT (${a}.${sqlIdent(c.name)} IS DISTINCT FROM ${b}.${sqlIdent(c.name)})`)
      .join(' AND ') || 'true'
  );
}

function closeWhere(v: VersionSql, condition: string, from?: string): string {
  return `UPDATE ${v.history} AS h SET _valid_to = ${at(v.publishedAt)}, _to_snapshot = ${sqlString(v.snapshotId)}${from !== undefined ? ` FROM ${from}` : ''} WHERE h._valid_to IS NULL AND (${condition})`;
}

function insertFrom(v: VersionSql, from: string, where: string): string {
  const cols = v.columns.map((c) => sqlIdent(c.name));
  return `INSERT INTO ${v.history} (${[...cols, ...VERSION_COLUMNS.map((c) => sqlIdent(c.name))].join(', ')})
SELECT ${cols.map((c) => `c.${c}`).join(', ')}, ${at(v.publishedAt)}, NULL, ${sqlString(v.snapshotId)}, NULL FROM ${from} AS c WHERE ${where}`;
}

/**
 * Which companies' open versions a night closes apart from its `changes`, which name no key of a
 * company that left the set: `departed` (none: no statement), or, when the companies the history
 * held are not known, every company but tonight's (`companies`).
 */
export type LeftTheSet = { departed: readonly string[] } | { companies: readonly string[] };

/**
 * From the snapshot's `changes` rows (`source`, with a `change` column): every key they name is
 * closed, and reopened unless removed; so are the keys of companies that left the set. The close
 * is a join with the changed keys, and the companies apart: one `EXISTS … OR …` ran as a subplan
 * per open version in PostgreSQL (3.95x the table's load at 200,000 facts). Those that left are
 * named when known, so a night none left skips the statement that scanned every open version.
 */
export function versionsFromChanges(
  v: VersionSql,
  source: string,
  left: LeftTheSet,
): { close: readonly string[]; open: string } {
  const keys = v.key.map(sqlIdent).join(', ');
  return {
    close: [
      closeWhere(v, keyMatch(v, 'c', 'h'), `(SELECT DISTINCT ${keys} FROM ${source}) AS c`),
      ...closeLeft(v, left),
    ],
    open: insertFrom(v, source, `c.change <> 'removed'`),
  };
}

function closeLeft(v: VersionSql, left: LeftTheSet): string[] {
  if (!('departed' in left)) return [closeWhere(v, `NOT (${tickerIn(left.companies)})`)];
  return left.departed.length === 0 ? [] : [closeWhere(v, tickerIn(left.departed))];
}

/**
 * From the current table, already at the snapshot (a full reload, a night after a gap): an open
 * version without an equal current row is closed, then a current row without an open version opens one.
 */
export function versionsFromTable(
  v: VersionSql,
  current: string,
): { close: readonly string[]; open: string } {
  return {
    close: [
      closeWhere(
        v,
        `NOT EXISTS (SELECT 1 FROM ${current} AS c WHERE ${keyMatch(v, 'c', 'h')} AND ${sameValues(v, 'c', 'h')})`,
      ),
    ],
    open: insertFrom(
      v,
      current,
      `NOT EXISTS (SELECT 1 FROM ${v.history} AS h WHERE h._valid_to IS NULL AND ${keyMatch(v, 'c', 'h')})`,
    ),
  };
}

/**
 * The keys of facts_full whose `value_num` changed from one version to the next: both values,
 * accessions and filing dates, and the night the new one was first seen.
 */
export function restatementsViewSql(view: string, history: string): string {
  const w = `OVER (PARTITION BY fact_key, _requested_ticker ORDER BY _valid_from)`;
  return `CREATE OR REPLACE VIEW ${view} AS
SELECT fact_key, _requested_ticker, cik, metric_id, period_key, old_value_num, new_value_num,
  old_accession, new_accession, old_filed_at, new_filed_at, old_from_snapshot, seen_in_snapshot, seen_at
FROM (
  SELECT fact_key, _requested_ticker, cik, metric_id, period_key,
    LAG(value_num) ${w} AS old_value_num, value_num AS new_value_num,
    LAG(source_accession) ${w} AS old_accession, source_accession AS new_accession,
    LAG(source_filed_at) ${w} AS old_filed_at, source_filed_at AS new_filed_at,
    LAG(_from_snapshot) ${w} AS old_from_snapshot, _from_snapshot AS seen_in_snapshot, _valid_from AS seen_at
  FROM ${history}
) AS v
WHERE old_from_snapshot IS NOT NULL AND new_value_num IS DISTINCT FROM old_value_num`;
}
