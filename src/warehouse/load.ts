/**
 * `load`: brings a warehouse's tables to the published snapshots, exactly once. Each snapshot is
 * one transaction (data and ledger rows together, under the load lock), planned again inside it
 * from the ledger it sees, so a second loader that waited finds the work done and does nothing.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import type { DatasetName } from '../datasets/index.js';
import { InputError, WarehouseError } from '../errors.js';
import {
  parseManifest,
  type Manifest,
  MANIFEST_FILE,
  SNAPSHOTS_DIR,
  listStoredSnapshots,
  readStoredText,
  withLocalSnapshot,
  type StoredSnapshot,
  newestInListing,
  readLatest,
} from '../output/catalog/index.js';
import { joinKey, type Storage } from '../output/storage/index.js';
import type { Clock } from '../types.js';
import { systemClock } from '../types.js';
import { applyHistory, type HistoryLoad } from './history.js';
import { currentLoads, type LedgerRow, type LoadMode } from './ledger.js';
import { planSnapshot, type DatasetStep, type SnapshotPlan } from './plan.js';
import { rowSource } from './row-source.js';
import { shrinkRefusal, shrinksOf, type Shrink, type TableCompanies } from './shrink.js';
import { columnsFromSignature, columnsSignature, reportedType } from './table-columns.js';
import type { LoadTransaction, Warehouse } from './warehouse.js';

export interface LoadOptions {
  storage: Storage;
  warehouse: Warehouse;
  /** Datasets to load. @defaultValue every dataset of each snapshot */
  datasets?: readonly DatasetName[];
  /** Load exactly this snapshot. @defaultValue every published snapshot not yet loaded, in publish order, up to `latest` */
  snapshot?: string;
  /** Plan only: nothing is changed. @defaultValue false */
  dryRun?: boolean;
  /** Apply a load that empties a table or removes more than half of its companies (shrink.ts). @defaultValue false */
  allowShrink?: boolean;
  /** Scratch for a bucket's snapshot copied to local files. @defaultValue the OS temp dir */
  tmpDir?: string;
  /** @defaultValue systemClock */
  clock?: Clock;
  /** Keep `<dataset>_history` beside each table with a key (history.ts). @defaultValue false */
  history?: boolean;
}

export interface DatasetLoad {
  dataset: DatasetName;
  mode: LoadMode | 'skip';
  rows: number;
  reason: string;
  /** Companies whose rows this load removes from the table, when any (or the table emptied). */
  shrink?: DatasetShrink;
  /** What the load did to the dataset's history (`history`), when it has one. */
  history?: HistoryLoad;
}

/** A shrink as the report gives it (shrink.ts `Shrink`, under its snapshot and dataset). */
export type DatasetShrink = Omit<Shrink, 'snapshotId' | 'dataset'>;

export interface SnapshotLoad {
  snapshotId: string;
  snapshotDate: string;
  datasets: DatasetLoad[];
}

export interface LoadReport {
  target: string;
  dryRun: boolean;
  snapshots: SnapshotLoad[];
}

interface Candidate {
  stored: StoredSnapshot;
  manifest: Manifest;
  text: string;
}

export async function loadSnapshots(o: LoadOptions): Promise<LoadReport> {
  const wh = o.warehouse;
  const clock = o.clock ?? systemClock;
  const stored = await publishedSnapshots(o.storage);
  const byId = new Map(stored.map((s) => [s.snapshotId, s]));
  const ledger = await wh.readLedger();
  const candidates = await pick(o, stored, ledger);
  // The plan of every snapshot as if the earlier ones were loaded: printed by --dry-run, and used
  // to check the tables before anything changes.
  const simulated = new Map(currentLoads(ledger));
  const plans: SnapshotPlan[] = [];
  for (const c of candidates) {
    const plan = planFor(o, c, simulated, byId);
    plans.push(plan);
    for (const s of plan.steps)
      if (s.kind !== 'skip')
        simulated.set(s.dataset, simulatedLoad(c.manifest, s, columnsSignature(s.columns)));
  }
  await checkTables(wh, plans, currentLoads(ledger));
  const shrinks = await checkShrinks(o, plans, candidates);
  const report: LoadReport = { target: wh.name, dryRun: o.dryRun === true, snapshots: [] };
  if (o.dryRun === true) {
    report.snapshots = plans.map((p) => ({
      snapshotId: p.snapshotId,
      snapshotDate: p.snapshotDate,
      datasets: p.steps.map((s) =>
        withShrink({ dataset: s.dataset, mode: modeOf(s), rows: 0, reason: s.reason }, p.snapshotId, shrinks),
      ),
    }));
    return report;
  }
  for (const c of candidates) {
    const done = await withLocalSnapshot(
      o.storage,
      c.manifest.snapshot_id,
      { data: true, ...(o.tmpDir !== undefined ? { tmpDir: o.tmpDir } : {}) },
      (localRoot) =>
        wh.transaction(async (tx) => {
          const current = currentLoads(await tx.readLedger());
          const plan = planFor(o, c, current, byId);
          return applyPlan(tx, plan, {
            c,
            localRoot,
            current,
            clock,
            history: o.history === true,
            order: stored,
          });
        }),
    );
    report.snapshots.push({
      ...done,
      datasets: done.datasets.map((d) => withShrink(d, done.snapshotId, shrinks)),
    });
  }
  return report;
}

/**
 * The published snapshots under the root. None is an error, found before a warehouse is opened
 * (so a mistyped --out creates no database file), as for `verify` and `ddl`.
 */
export async function publishedSnapshots(storage: Storage): Promise<StoredSnapshot[]> {
  const stored = (await listStoredSnapshots(storage)).filter((s) => s.published && s.manifest !== null);
  if (stored.length === 0)
    throw new InputError(
      `no published snapshot under ${storage.root}: nothing to load (check --out or output.dir)`,
    );
  return stored;
}

/**
 * The companies each table would lose, from what the tables hold now; refused (nothing changes)
 * when one would be emptied or lose more than half of them, unless allowShrink or dryRun.
 */
async function checkShrinks(
  o: LoadOptions,
  plans: readonly SnapshotPlan[],
  candidates: readonly Candidate[],
): Promise<Shrink[]> {
  const touched = new Set(
    plans.flatMap((p) => p.steps.filter((s) => s.kind !== 'skip').map((s) => s.dataset)),
  );
  const held = new Map<DatasetName, TableCompanies | undefined>();
  for (const dataset of touched) held.set(dataset, await o.warehouse.tableCompanies(dataset));
  const shrinks = shrinksOf(
    plans.map((plan, i) => ({ plan, manifest: candidates[i]!.manifest })),
    held,
  );
  const refused = shrinks.filter((s) => s.refused);
  if (refused.length > 0 && o.allowShrink !== true && o.dryRun !== true)
    throw shrinkRefusal(o.warehouse.name, refused);
  return shrinks;
}

function withShrink(d: DatasetLoad, snapshotId: string, shrinks: readonly Shrink[]): DatasetLoad {
  const s = shrinks.find((x) => x.snapshotId === snapshotId && x.dataset === d.dataset);
  if (s === undefined || d.mode === 'skip') return d;
  const { snapshotId: _id, dataset: _dataset, ...shrink } = s;
  return { ...d, shrink };
}

/** The snapshots to load: the one asked for, or those published after the last one loaded. */
async function pick(o: LoadOptions, stored: StoredSnapshot[], ledger: LedgerRow[]): Promise<Candidate[]> {
  const read = async (s: StoredSnapshot): Promise<Candidate> => {
    const key = joinKey(SNAPSHOTS_DIR, s.snapshotId, MANIFEST_FILE);
    const text = await readStoredText(o.storage, key);
    return { stored: s, manifest: parseManifest(text, o.storage.url(key), s.snapshotId), text };
  };
  if (o.snapshot !== undefined) {
    const s = stored.find((x) => x.snapshotId === o.snapshot);
    if (s === undefined)
      throw new InputError(`snapshot ${o.snapshot} is not published under ${o.storage.root}: nothing loaded`);
    return [await read(s)];
  }
  // listStoredSnapshots lists in publish order, the one order of "newer" (src/output/catalog/publish-order.ts).
  const order = stored;
  const loaded = new Set(ledger.map((r) => r.snapshot_id));
  const newest = ledger[ledger.length - 1];
  // After the snapshot loaded last; when it was pruned since, after every one published before that load.
  const at = newest === undefined ? -1 : order.findIndex((s) => s.snapshotId === newest.snapshot_id);
  const after = newest === undefined ? 0 : at >= 0 ? at + 1 : publishedBy(order, newest.loaded_at);
  const latest = newestInListing(order, (await readLatest(o.storage))?.snapshot_id);
  const end = latest === undefined ? order.length : order.indexOf(latest) + 1;
  // Older snapshots than the one loaded last would move the tables back: --snapshot does that on purpose.
  const chosen = order.slice(after, end).filter((s) => !loaded.has(s.snapshotId));
  return Promise.all(chosen.map(read));
}

/**
 * How many snapshots of the listing (in publish order) were published by `loadedAt`: those the
 * load of a snapshot since pruned had already passed.
 */
function publishedBy(order: readonly StoredSnapshot[], loadedAt: string): number {
  const loadedMs = Date.parse(loadedAt);
  return order.filter((s) => Date.parse(s.manifest?.published_at ?? '') <= loadedMs).length;
}

function planFor(
  o: LoadOptions,
  c: Candidate,
  current: ReadonlyMap<DatasetName, LedgerRow>,
  byId: ReadonlyMap<string, StoredSnapshot>,
): SnapshotPlan {
  return planSnapshot({
    manifest: c.manifest,
    ...(o.datasets !== undefined ? { datasets: o.datasets } : {}),
    current,
    previous: (id) => byId.get(id)?.manifest ?? undefined,
    stored: new Set(byId.keys()),
  });
}

/** What applying one snapshot's plan needs besides the plan. */
interface ApplyContext {
  c: Candidate;
  localRoot: string;
  /** What each table held when the transaction began. */
  current: ReadonlyMap<DatasetName, LedgerRow>;
  clock: Clock;
  history: boolean;
  /** The published snapshots in publish order. */
  order: readonly StoredSnapshot[];
}

async function applyPlan(tx: LoadTransaction, plan: SnapshotPlan, x: ApplyContext): Promise<SnapshotLoad> {
  const { c, localRoot, current, clock } = x;
  const sha = createHash('sha256').update(c.text).digest('hex');
  let seq = Math.max(0, ...[...current.values()].map((r) => r.seq));
  const out: SnapshotLoad = { snapshotId: plan.snapshotId, snapshotDate: plan.snapshotDate, datasets: [] };
  for (const step of plan.steps) {
    const rows = await applyStep(tx, step, c.manifest, localRoot);
    const history = x.history && step.kind !== 'skip' ? await stepHistory(tx, step, x) : undefined;
    out.datasets.push({
      dataset: step.dataset,
      mode: modeOf(step),
      rows,
      reason: step.reason,
      ...(history !== undefined ? { history } : {}),
    });
    if (step.kind === 'skip') continue;
    seq += 1;
    await tx.record({
      seq,
      snapshot_id: plan.snapshotId,
      snapshot_date: plan.snapshotDate,
      dataset: step.dataset,
      mode: step.kind === 'full' ? 'full' : 'changes',
      rows,
      loaded_at: new Date(clock.now()).toISOString(),
      manifest_sha256: sha,
      columns: columnsSignature(step.columns),
      reason: step.reason,
    });
  }
  return out;
}

async function applyStep(
  tx: LoadTransaction,
  step: DatasetStep,
  m: Manifest,
  localRoot: string,
): Promise<number> {
  switch (step.kind) {
    case 'skip':
      return 0;
    case 'full': {
      const rows = await tx.replaceTable(
        step.dataset,
        step.columns,
        rowSource(localRoot, m, step.dataset, step.columns),
      );
      // The files' rows counted as loaded: a reader that stops early (DuckDB 1.5.6 can, on a gzip
      // of several members) must fail the load, whose transaction then keeps the old table.
      const published = m.datasets[step.dataset]?.rows;
      if (published !== undefined && rows !== published)
        throw new WarehouseError(
          'WAREHOUSE_REFUSED',
          `${step.dataset}: ${rows} rows were read from ${m.snapshot_id}'s files, its manifest says ${published}; nothing was loaded`,
        );
      return rows;
    }
    case 'merge':
      return tx.mergeChanges(
        step.dataset,
        step.columns,
        join(localRoot, ...step.changesFile.split('/')),
        step.companies,
      );
    case 'companies':
      return tx.replaceCompanies(
        step.dataset,
        step.columns,
        rowSource(localRoot, m, step.dataset, step.columns),
        step.replaced,
        step.companies,
      );
    default: {
      const never: never = step;
      throw new Error(`unknown step ${JSON.stringify(never)}`);
    }
  }
}

/** Brings the dataset's history to the snapshot its table now holds (history.ts). */
function stepHistory(
  tx: LoadTransaction,
  step: DatasetStep,
  x: ApplyContext,
): Promise<HistoryLoad | undefined> {
  return applyHistory(tx, {
    dataset: step.dataset,
    columns: step.columns,
    manifest: x.c.manifest,
    heldBefore: x.current.get(step.dataset)?.snapshot_id,
    ...(step.kind === 'merge'
      ? { changes: { file: join(x.localRoot, ...step.changesFile.split('/')), companies: step.companies } }
      : {}),
    order: x.order,
  });
}

function modeOf(step: DatasetStep): LoadMode | 'skip' {
  return step.kind === 'skip' ? 'skip' : step.kind === 'full' ? 'full' : 'changes';
}

/** The ledger row a step would write, for planning the snapshots after it. */
function simulatedLoad(m: Manifest, s: DatasetStep, columns: string): LedgerRow {
  return {
    seq: 0,
    snapshot_id: m.snapshot_id,
    snapshot_date: m.snapshot_date,
    dataset: s.dataset,
    mode: s.kind === 'full' ? 'full' : 'changes',
    rows: 0,
    loaded_at: '',
    manifest_sha256: '',
    columns,
    reason: s.reason,
  };
}

/**
 * Before anything changes: every table a plan touches is the one the last load left (same
 * columns, same types), or does not exist. A table altered by hand is named with its column.
 */
async function checkTables(
  wh: Warehouse,
  plans: readonly SnapshotPlan[],
  current: ReadonlyMap<DatasetName, LedgerRow>,
): Promise<void> {
  const touched = new Set(
    plans.flatMap((p) => p.steps.filter((s) => s.kind !== 'skip').map((s) => s.dataset)),
  );
  for (const dataset of touched) {
    const actual = await wh.tableColumns(dataset);
    if (actual === undefined) continue;
    const held = current.get(dataset);
    if (held === undefined)
      throw new WarehouseError(
        'WAREHOUSE_REFUSED',
        `${wh.name}: table ${dataset} exists but no load made it (no ${dataset} row in the ledger): rename or drop it; nothing was loaded`,
      );
    for (const col of columnsFromSignature(held.columns)) {
      const want = reportedType(wh.engine, col);
      const got = actual.get(col.name);
      if (got === undefined || got.toLowerCase() !== want.toLowerCase())
        throw new WarehouseError(
          'WAREHOUSE_REFUSED',
          `${wh.name}: table ${dataset}, column ${col.name}: ${got === undefined ? 'missing' : `is ${got}`}, expected ${want} (as loaded from ${held.snapshot_id}); nothing was loaded`,
        );
    }
  }
}
