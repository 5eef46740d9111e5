/**
 * Whether a part of an incremental snapshot can carry over the previous published snapshot's rows
 * instead of a request: only when this night's series catalog of the company has the fingerprint
 * the previous snapshot recorded, and the previous part of the same dataset was `done`. Anything
 * else (catalog changed, failed, without fingerprint; previous part failed, not found, missing) is
 * fetched, with the reason kept for the status.
 */
import type { Manifest, ManifestPart } from '../../output/index.js';
import type { DatasetName, PartPointer } from '../../types.js';

/** The dataset whose part decides for the others. */
export const CHANGE_DATASET: DatasetName = 'series_catalog';

export type ReuseDecision =
  /** This snapshot's catalog part of the company has not ended yet. */
  { kind: 'wait' } | { kind: 'fetch'; reason: string } | { kind: 'reuse'; previous: ManifestPart };

export function decideReuse(
  dataset: DatasetName,
  ticker: string,
  catalog: PartPointer | undefined,
  previous: Manifest,
): ReuseDecision {
  if (catalog === undefined) return { kind: 'wait' };
  if (catalog.status !== 'done')
    return { kind: 'fetch', reason: `this night's ${CHANGE_DATASET} part is ${catalog.status}` };
  if (catalog.fingerprint === undefined)
    return { kind: 'fetch', reason: `the ${CHANGE_DATASET} rows carry no series version` };
  const find = (d: DatasetName): ManifestPart | undefined =>
    previous.parts.find((p) => p.dataset === d && p.ticker === ticker);
  const before = find(CHANGE_DATASET);
  if (before?.fingerprint === undefined)
    return { kind: 'fetch', reason: `${previous.snapshot_id} has no catalog fingerprint for ${ticker}` };
  if (before.fingerprint !== catalog.fingerprint)
    return { kind: 'fetch', reason: 'changed since the previous snapshot' };
  const part = find(dataset);
  if (part === undefined)
    return { kind: 'fetch', reason: `${previous.snapshot_id} has no ${dataset} part for ${ticker}` };
  if (part.status !== 'done')
    return { kind: 'fetch', reason: `its ${dataset} part in ${previous.snapshot_id} was ${part.status}` };
  if (part.rows > 0 && (part.archive === undefined || part.sha256 === undefined || part.bytes === undefined))
    return { kind: 'fetch', reason: `${previous.snapshot_id} kept no copy of its ${dataset} part` };
  return { kind: 'reuse', previous: part };
}
