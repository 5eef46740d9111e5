/**
 * The shrink guard of `load`: a load never removes whole companies from a table silently. The
 * companies a table holds (its `_requested_ticker` values) are compared with those each snapshot
 * would leave (its parts with rows); the companies that go are named in the report, and a load
 * that would leave a table holding rows empty, or remove more than half of its companies, is
 * refused before anything changes unless `--allow-shrink` is given. Every dataset's rows carry the
 * lineage column, so every table is compared by company; a table without it (made by an older
 * writer) is guarded on emptiness only.
 */
import type { DatasetName } from '../datasets/index.js';
import { WarehouseError } from '../errors.js';
import { sqlIdent } from '../output/index.js';
import type { Manifest } from '../output/catalog/index.js';
import type { SnapshotPlan } from './plan.js';

/** The lineage column naming a row's company (src/datasets/columns.ts). */
export const COMPANY_COLUMN = '_requested_ticker';

/** What a table holds, by company. */
export interface TableCompanies {
  rows: number;
  /** The companies with rows; null when the table has no company column. */
  companies: ReadonlySet<string> | null;
}

/** What one snapshot's load would do to one table's companies. */
export interface Shrink {
  snapshotId: string;
  dataset: DatasetName;
  /** Companies the table holds before this snapshot is loaded. */
  before: number;
  /** Companies whose rows this snapshot removes, sorted. */
  removed: string[];
  /** The table holds rows and would hold none. */
  emptied: boolean;
  /** Refused without `--allow-shrink`: this step, or the load up to it, empties the table or removes more than half its companies. */
  refused: boolean;
}

/**
 * What a table holds, read with `all` (one SQL for DuckDB and PostgreSQL); undefined when the
 * table does not exist (`columns` as `Warehouse.tableColumns` reports them).
 */
export async function readTableCompanies(
  table: string,
  columns: ReadonlyMap<string, string> | undefined,
  all: (sql: string) => Promise<Record<string, unknown>[]>,
): Promise<TableCompanies | undefined> {
  if (columns === undefined) return undefined;
  if (!columns.has(COMPANY_COLUMN)) {
    const [row] = await all(`SELECT count(*) AS n FROM ${table}`);
    return { rows: Number(row?.n ?? 0), companies: null };
  }
  const rows = await all(`SELECT ${sqlIdent(COMPANY_COLUMN)} AS t, count(*) AS n FROM ${table} GROUP BY 1`);
  return {
    rows: rows.reduce((n, r) => n + Number(r.n), 0),
    companies: new Set(rows.map((r) => String(r.t ?? ''))),
  };
}

/** What the table of `dataset` holds once `m` is loaded: its files' rows, by the parts that have some. */
function snapshotHolds(m: Manifest, dataset: DatasetName): TableCompanies {
  return {
    rows: m.datasets[dataset]?.rows ?? 0,
    companies: new Set(m.parts.filter((p) => p.dataset === dataset && p.rows > 0).map((p) => p.ticker)),
  };
}

/**
 * The shrinks of loading `plans` one after the other (with their manifests), from what the tables
 * hold now (`held`: undefined for a table that does not exist). Each step is compared with the
 * table as the step before left it; the companies gone since the start of the load also count
 * against the table as it was, so two halves in a row are not a whole table in silence.
 */
export function shrinksOf(
  plans: readonly { plan: SnapshotPlan; manifest: Manifest }[],
  held: ReadonlyMap<DatasetName, TableCompanies | undefined>,
): Shrink[] {
  const now = new Map(held);
  const start = new Map(held);
  const out: Shrink[] = [];
  for (const { plan, manifest } of plans)
    for (const step of plan.steps) {
      if (step.kind === 'skip') continue;
      const before = now.get(step.dataset);
      const after = snapshotHolds(manifest, step.dataset);
      now.set(step.dataset, after);
      if (before === undefined) continue;
      const shrink = compare(plan.snapshotId, step.dataset, before, after);
      const first = start.get(step.dataset);
      const overall = first === undefined ? shrink : compare(plan.snapshotId, step.dataset, first, after);
      const refused = refuses(shrink) || refuses(overall);
      // Named as the step changes the table, unless only the whole load crosses the line.
      const said = refuses(shrink) || !refused ? shrink : overall;
      if (said.removed.length > 0 || said.emptied) out.push({ ...said, refused });
    }
  return out;
}

function compare(
  snapshotId: string,
  dataset: DatasetName,
  before: TableCompanies,
  after: TableCompanies,
): Omit<Shrink, 'refused'> {
  const kept = after.companies ?? new Set<string>();
  const removed = before.companies === null ? [] : [...before.companies].filter((c) => !kept.has(c)).sort();
  return {
    snapshotId,
    dataset,
    before: before.companies?.size ?? 0,
    removed,
    emptied: before.rows > 0 && after.rows === 0,
  };
}

/** The line `load` draws: the table emptied, or more than half its companies gone. */
function refuses(s: Omit<Shrink, 'refused'>): boolean {
  return s.emptied || s.removed.length * 2 > s.before;
}

/** "1 company", "2 companies". */
export function companies(n: number): string {
  return `${n} ${n === 1 ? 'company' : 'companies'}`;
}

/** Up to 10 names, then how many more. */
export function nameList(names: readonly string[]): string {
  const shown = names.slice(0, 10).join(', ');
  return names.length > 10 ? `${shown} and ${names.length - 10} more` : shown;
}

/** What a shrink does, as the report and the refusal say it. */
export function describeShrink(s: Pick<Shrink, 'before' | 'removed' | 'emptied'>): string {
  const gone = `${s.removed.length} of ${companies(s.before)} removed${s.removed.length > 0 ? ` (${nameList(s.removed)})` : ''}`;
  if (!s.emptied) return gone;
  return s.before === 0 ? 'left empty' : `left empty: ${gone}`;
}

/** The one line `load` fails with when shrinks were refused; nothing was applied. */
export function shrinkRefusal(target: string, refused: readonly Shrink[]): WarehouseError {
  const bySnapshot = [...new Set(refused.map((s) => s.snapshotId))].map(
    (id) =>
      `${id}: ${refused
        .filter((s) => s.snapshotId === id)
        .map((s) => `${s.dataset} ${describeShrink(s)}`)
        .join(', ')}`,
  );
  return new WarehouseError(
    'WAREHOUSE_SHRINK_REFUSED',
    `${target}: refusing to shrink tables (${bySnapshot.join('; ')}); nothing was loaded: check the snapshot, or load it anyway with \`filings-export load --into ${target} --allow-shrink\``,
  );
}
