/**
 * What loading one snapshot does to each dataset's table, decided from the snapshot's manifest and
 * the ledger (pure: no I/O). A table moves to the snapshot in one of three ways:
 * - `merge`: the snapshot's `changes` rows for the dataset, applied with MERGE (facts datasets);
 * - `companies`: the rows of the companies whose part changed are replaced (datasets without
 *   `changes`: a part carried over unchanged, or a catalog with the same fingerprint, is kept);
 * - `full`: the table is rebuilt from the snapshot's files and swapped in atomically.
 * The first two need an unbroken chain: the snapshot's `changes` were computed against exactly the
 * snapshot the table holds, with the same columns, and the snapshot is not a full refresh.
 */
import type { DatasetName } from '../datasets/index.js';
import { CHANGE_SOURCES } from '../output/index.js';
import type { Manifest, ManifestPart } from '../output/catalog/index.js';
import type { LedgerRow } from './ledger.js';
import { columnsSignature, type TableColumn } from './table-columns.js';
import { counted } from '../counted.js';

interface StepBase {
  dataset: DatasetName;
  columns: TableColumn[];
  /** One line: why this way. */
  reason: string;
}

export type DatasetStep =
  | (StepBase & { kind: 'full' })
  | (StepBase & {
      kind: 'merge';
      /** The `changes` file of this dataset, relative to the root. */
      changesFile: string;
      /** Companies of the snapshot: rows of any other company are deleted. */
      companies: string[];
      expectedRows: number;
    })
  | (StepBase & {
      kind: 'companies';
      /** Companies whose rows are replaced. */
      replaced: string[];
      companies: string[];
    })
  | (StepBase & { kind: 'skip' });

export interface SnapshotPlan {
  snapshotId: string;
  snapshotDate: string;
  steps: DatasetStep[];
}

export interface PlanInput {
  manifest: Manifest;
  /** Datasets to load (those of the manifest when undefined). */
  datasets?: readonly DatasetName[];
  /** What each table holds now (ledger.ts `currentLoads`). */
  current: ReadonlyMap<DatasetName, LedgerRow>;
  /** The manifest of a snapshot still under the root, if readable (to compare catalogs' fingerprints). */
  previous: (snapshotId: string) => Manifest | undefined;
  /** Ids of the snapshots under the root (a chain through a missing one was pruned). */
  stored: ReadonlySet<string>;
}

export function planSnapshot(input: PlanInput): SnapshotPlan {
  const m = input.manifest;
  const names = (input.datasets ?? (Object.keys(m.datasets) as DatasetName[])).filter(
    (d) => m.datasets[d] !== undefined,
  );
  return {
    snapshotId: m.snapshot_id,
    snapshotDate: m.snapshot_date,
    steps: names.map((d) => planDataset(input, d)),
  };
}

function planDataset(input: PlanInput, dataset: DatasetName): DatasetStep {
  const m = input.manifest;
  const ds = m.datasets[dataset]!;
  const columns = ds.columns.map((c) => ({ name: c.name, type: c.type, role: c.role }));
  const base = { dataset, columns };
  const held = input.current.get(dataset);
  if (held?.snapshot_id === m.snapshot_id) return { ...base, kind: 'skip', reason: 'already loaded' };
  const full = (reason: string): DatasetStep => ({ ...base, kind: 'full', reason });
  if (held === undefined) return full('first load');
  if (held.columns !== columnsSignature(columns))
    return full(`schema change: the columns differ from those loaded from ${held.snapshot_id}`);
  const against = m.changes?.against;
  if (against === undefined) return full(`${m.snapshot_id} has no changes dataset`);
  if (against !== held.snapshot_id)
    return full(
      `chain broken: ${m.snapshot_id}'s changes are against ${against}${input.stored.has(against) ? '' : ' (pruned)'}, the table holds ${held.snapshot_id}`,
    );
  if (m.incremental?.reused_from === null && m.incremental.full_refresh_date === m.snapshot_date)
    return full(`${m.snapshot_id} is a full refresh`);
  const companies = [...new Set(m.parts.filter((p) => p.dataset === dataset).map((p) => p.ticker))].sort();
  const file = m.changes?.files.find((f) => f.source_dataset === dataset);
  if (file !== undefined)
    return {
      ...base,
      kind: 'merge',
      changesFile: file.path,
      companies,
      expectedRows: file.rows,
      reason: `changes against ${held.snapshot_id}: ${file.counts.added} added, ${file.counts.changed} changed, ${file.counts.removed} removed`,
    };
  if (CHANGE_SOURCES.includes(dataset)) return full(`${m.snapshot_id} has no changes for ${dataset}`);
  const previous = input.previous(held.snapshot_id);
  if (previous === undefined) return full(`${held.snapshot_id}'s manifest cannot be read (pruned)`);
  const before = new Map(previous.parts.filter((p) => p.dataset === dataset).map((p) => [p.ticker, p]));
  const replaced = m.parts
    .filter((p) => p.dataset === dataset && !unchanged(p, before.get(p.ticker), held.snapshot_id))
    .map((p) => p.ticker)
    .sort();
  return {
    ...base,
    kind: 'companies',
    replaced,
    companies,
    reason: `${replaced.length} of ${counted(companies.length, 'company', 'companies')} changed since ${held.snapshot_id}${replaced.length > 0 ? `: ${replaced.slice(0, 5).join(', ')}${replaced.length > 5 ? ', …' : ''}` : ''}`,
  };
}

/** A part whose rows are those of the snapshot the table holds. */
function unchanged(p: ManifestPart, before: ManifestPart | undefined, heldId: string): boolean {
  if (p.reused === true && p.reused_from === heldId) return true;
  return (
    before !== undefined &&
    p.fingerprint !== undefined &&
    p.fingerprint === before.fingerprint &&
    p.status === before.status &&
    p.rows === before.rows
  );
}
