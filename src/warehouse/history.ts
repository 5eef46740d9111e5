/**
 * Point-in-time history (`load --history`, docs/history.md): `<dataset>_history` beside each current
 * table whose dataset has a key, one row per version of one key, valid from the `published_at` of
 * the snapshot that first held it until that of the one that replaced or removed it (NULL while
 * current). Applied in the load's transaction right after the current table moved to a snapshot,
 * so it rides on the same ledger: each night once, in order, never half. From the night's `changes`
 * when the history stood where the table stood; otherwise (a first or full load, a night after a
 * gap) by comparing the open versions with the current table, which joins them at this night.
 */
import type { DatasetName } from '../datasets/index.js';
import type { Manifest, StoredSnapshot } from '../output/catalog/index.js';
import { sqlString } from '../output/index.js';
import {
  addColumnSql,
  gapsDdl,
  historyTableDdl,
  nightsDdl,
  openVersionsIndexDdl,
  restatementsViewSql,
  versionsFromChanges,
  versionsFromTable,
  type LeftTheSet,
  type VersionSql,
} from './history-sql.js';
import { primaryKey, type TableColumn } from './table-columns.js';
import type { LoadTransaction, SqlPort } from './warehouse.js';

export const HISTORY_NIGHTS_TABLE = 'filings_export_history_nights';
export const HISTORY_GAPS_TABLE = 'filings_export_history_gaps';
export const RESTATEMENTS_VIEW = 'facts_full_restatements';

export function historyTable(dataset: DatasetName): string {
  return `${dataset}_history`;
}

export const GAP_REASONS = ['pruned before it was loaded', 'loaded without history'] as const;

/** A night the history never saw. */
export interface HistoryGap {
  snapshotId: string;
  why: (typeof GAP_REASONS)[number];
}

/** What one night did to one dataset's history. */
export interface HistoryLoad {
  builtFrom: 'changes' | 'compared' | 'skip';
  opened: number;
  closed: number;
  /** The nights missing before this one (their versions were joined at this one). */
  gaps: HistoryGap[];
  /** Why the history was left as it was (`skip`). */
  reason?: string;
}

export interface HistoryInput {
  dataset: DatasetName;
  columns: readonly TableColumn[];
  manifest: Manifest;
  /** The snapshot the current table held before this night (the ledger's). */
  heldBefore: string | undefined;
  /** The night's `changes` when the current table was MERGEd from them. */
  changes?: { file: string; companies: readonly string[] };
  /** The published snapshots, in publish order. */
  order: readonly StoredSnapshot[];
}

interface Night {
  snapshotId: string;
  publishedMs: number;
}

/** Brings the dataset's history to the snapshot the current table now holds; undefined without a key. */
export async function applyHistory(tx: LoadTransaction, i: HistoryInput): Promise<HistoryLoad | undefined> {
  const key = primaryKey(i.dataset, i.columns);
  if (key === undefined) return undefined;
  const { sql } = tx;
  const m = i.manifest;
  await sql.exec(nightsDdl(sql.table(HISTORY_NIGHTS_TABLE)));
  await sql.exec(gapsDdl(sql.table(HISTORY_GAPS_TABLE)));
  const last = await lastNight(sql, i.dataset);
  // An older snapshot loaded on purpose (--snapshot) moves the table back, never the history.
  if (last !== undefined && Date.parse(m.published_at) <= last.publishedMs)
    return {
      builtFrom: 'skip',
      opened: 0,
      closed: 0,
      gaps: [],
      reason: `it already holds ${last.snapshotId}`,
    };
  const history = sql.table(historyTable(i.dataset));
  const existed = await prepareTable(sql, historyTable(i.dataset), i.columns, key);
  const v: VersionSql = {
    history,
    columns: i.columns,
    key,
    snapshotId: m.snapshot_id,
    publishedAt: m.published_at,
  };
  const fromChanges = existed && i.changes !== undefined && last?.snapshotId === i.heldBefore;
  const statements =
    fromChanges && i.changes !== undefined
      ? versionsFromChanges(v, tx.changesSource(i.dataset, i.changes.file), leftTheSet(i, i.changes))
      : versionsFromTable(v, sql.table(i.dataset));
  let closed = 0;
  for (const close of statements.close) closed += await sql.exec(close);
  const opened = await sql.exec(statements.open);
  const gaps = last === undefined ? [] : historyGaps(last, m, i.order);
  const builtFrom = fromChanges ? 'changes' : 'compared';
  await recordNight(sql, i.dataset, m, { builtFrom, opened, closed, gaps }, last);
  if (i.dataset === 'facts_full') await sql.exec(restatementsViewSql(sql.table(RESTATEMENTS_VIEW), history));
  return { builtFrom, opened, closed, gaps };
}

/**
 * The companies of the snapshot the table held (where the history stands, on a night built from
 * `changes`) that tonight's parts lack, from its manifest; when it was pruned since it was loaded,
 * tonight's companies, and every other one is closed.
 */
function leftTheSet(i: HistoryInput, changes: { companies: readonly string[] }): LeftTheSet {
  const held = i.order.find((s) => s.snapshotId === i.heldBefore)?.manifest;
  if (held == null) return { companies: changes.companies };
  const tonight = new Set(changes.companies);
  const before = new Set(held.parts.filter((p) => p.dataset === i.dataset).map((p) => p.ticker));
  return { departed: [...before].filter((t) => !tonight.has(t)).sort() };
}

/** The night the dataset's history holds now. */
async function lastNight(sql: SqlPort, dataset: DatasetName): Promise<Night | undefined> {
  const rows = await sql.all(
    `SELECT snapshot_id, CAST(published_at AS VARCHAR) AS published_at FROM ${sql.table(HISTORY_NIGHTS_TABLE)} WHERE dataset = ${sqlString(dataset)} ORDER BY published_at DESC LIMIT 1`,
  );
  const r = rows[0];
  return r === undefined
    ? undefined
    : { snapshotId: String(r.snapshot_id), publishedMs: Date.parse(String(r.published_at)) };
}

/**
 * Creates the history table and its index of open versions, or adds the columns a schema change
 * brought (and the index a history made before it lacks); whether the table existed.
 */
async function prepareTable(
  sql: SqlPort,
  name: string,
  columns: readonly TableColumn[],
  key: readonly string[],
): Promise<boolean> {
  const have = await sql.columns(name);
  if (have === undefined) await sql.exec(historyTableDdl(sql.engine, sql.table(name), columns));
  else
    for (const c of columns)
      if (!have.has(c.name)) await sql.exec(addColumnSql(sql.engine, sql.table(name), c));
  const index = openVersionsIndexDdl(sql.engine, sql.table(name), name, key);
  if (index !== undefined) await sql.exec(index);
  return have !== undefined;
}

/**
 * The nights between the one the history holds and `m`: those still published that it never saw,
 * and the night `m`'s changes were computed against when it is gone (pruned before it was loaded).
 */
export function historyGaps(last: Night, m: Manifest, order: readonly StoredSnapshot[]): HistoryGap[] {
  const at = order.findIndex((s) => s.snapshotId === m.snapshot_id);
  const lastAt = order.findIndex((s) => s.snapshotId === last.snapshotId);
  const between = order.filter((s, j) => {
    if (s.snapshotId === m.snapshot_id || (at >= 0 && j >= at)) return false;
    return lastAt >= 0 ? j > lastAt : Date.parse(s.manifest?.published_at ?? '') > last.publishedMs;
  });
  const gaps: HistoryGap[] = between.map((s) => ({
    snapshotId: s.snapshotId,
    why: 'loaded without history',
  }));
  const against = m.changes?.against;
  if (against !== undefined && against !== last.snapshotId && !order.some((s) => s.snapshotId === against))
    gaps.push({ snapshotId: against, why: 'pruned before it was loaded' });
  return gaps;
}

async function recordNight(
  sql: SqlPort,
  dataset: DatasetName,
  m: Manifest,
  done: Omit<HistoryLoad, 'builtFrom'> & { builtFrom: 'changes' | 'compared' },
  last: Night | undefined,
): Promise<void> {
  const at = `CAST(${sqlString(m.published_at)} AS TIMESTAMPTZ)`;
  for (const g of done.gaps)
    await sql.exec(
      `INSERT INTO ${sql.table(HISTORY_GAPS_TABLE)} VALUES (${[dataset, g.snapshotId, g.why, last?.snapshotId ?? '', m.snapshot_id].map(sqlString).join(', ')}, ${at}) ON CONFLICT DO NOTHING`,
    );
  await sql.exec(
    `INSERT INTO ${sql.table(HISTORY_NIGHTS_TABLE)} VALUES (${sqlString(dataset)}, ${sqlString(m.snapshot_id)}, CAST(${sqlString(m.snapshot_date)} AS DATE), ${at}, ${sqlString(done.builtFrom)}, ${done.opened}, ${done.closed})`,
  );
}
