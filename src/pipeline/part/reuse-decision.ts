/**
 * Whether a part of an incremental snapshot can carry over the previous published snapshot's rows
 * instead of a request: only when this night's series catalog of the company has the fingerprint
 * the previous snapshot recorded, and the previous part of the same dataset was `done`. Anything
 * else (catalog changed, failed, without fingerprint; previous part failed, not found, missing) is
 * fetched, with the reason kept for the status.
 */
import type { Manifest, ManifestFile, ManifestPart } from '../../output/index.js';
import type { DatasetName, PartPointer } from '../../types.js';

/** The dataset whose part decides for the others. */
export const CHANGE_DATASET: DatasetName = 'series_catalog';

export type ReuseDecision =
  /** This snapshot's catalog part of the company has not ended yet. */
  | { kind: 'wait' }
  | { kind: 'fetch'; reason: string }
  /**
   * `files`: the source's published files holding the company's rows (reused from them, nothing
   * staged); empty when the source predates that and its archived staged part is carried over.
   */
  | { kind: 'reuse'; previous: ManifestPart; files: ManifestFile[] };

export function decideReuse(
  dataset: DatasetName,
  ticker: string,
  catalog: PartPointer | undefined,
  previous: Manifest,
): ReuseDecision {
  if (catalog === undefined) return { kind: 'wait' };
  const changed = companyChanged(ticker, catalog, previous);
  if (changed !== undefined) return { kind: 'fetch', reason: changed };
  const part = previous.parts.find((p) => p.dataset === dataset && p.ticker === ticker);
  if (part === undefined)
    return { kind: 'fetch', reason: `${previous.snapshot_id} has no ${dataset} part for ${ticker}` };
  if (part.status !== 'done')
    return { kind: 'fetch', reason: `its ${dataset} part in ${previous.snapshot_id} was ${part.status}` };
  if (part.rows === 0) return { kind: 'reuse', previous: part, files: [] };
  const files = previous.files.filter(
    (f) => f.dataset === dataset && (f.companies ?? []).some((c) => c.ticker === ticker),
  );
  if (files.some((f) => f.format === 'parquet')) return { kind: 'reuse', previous: part, files };
  if (part.archive !== undefined && part.sha256 !== undefined && part.bytes !== undefined)
    return { kind: 'reuse', previous: part, files: [] };
  return { kind: 'fetch', reason: `${previous.snapshot_id} kept no Parquet copy of its ${dataset} part` };
}

/**
 * Why the company cannot be carried over whatever the dataset (its catalog part is not done, has
 * no fingerprint, or differs from the previous snapshot's), or undefined when its catalog is unchanged.
 */
export function companyChanged(ticker: string, catalog: PartPointer, previous: Manifest): string | undefined {
  if (catalog.status !== 'done') return `this night's ${CHANGE_DATASET} part is ${catalog.status}`;
  if (catalog.fingerprint === undefined) return `the ${CHANGE_DATASET} rows carry no series version`;
  const before = previous.parts.find((p) => p.dataset === CHANGE_DATASET && p.ticker === ticker);
  if (before?.fingerprint === undefined)
    return `${previous.snapshot_id} has no catalog fingerprint for ${ticker}`;
  if (before.fingerprint !== catalog.fingerprint) return 'changed since the previous snapshot';
  return undefined;
}
