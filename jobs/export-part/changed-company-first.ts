/**
 * After a company's catalog part on an incremental night: when the company changed, its other parts
 * go to the front of the parts queue (src/pipeline/part/hurry-changed.ts), so its requests start now
 * instead of after every other company's catalog.
 */
import { coerceError } from '../../src/errors.js';
import { CHANGE_DATASET, datasetsToHurry, partJobId } from '../../src/pipeline/index.js';
import type { PartPointer } from '../../src/types.js';
import type { PartAttempt } from './attempt.js';

/** Best effort: a failure is logged, and the parts then simply run in their turn. */
export async function moveChangedCompanyFirst(attempt: PartAttempt, catalog: PartPointer): Promise<void> {
  const { helpers, payload, key } = attempt;
  if (payload.dataset !== CHANGE_DATASET) return;
  if (payload.reuse === undefined || helpers.reuse === undefined) return;
  try {
    const previous = await helpers.reuse.previousManifest(payload.outDir, payload.reuse.from);
    const datasets = datasetsToHurry(key, catalog, previous);
    if (datasets.length === 0) return;
    await helpers.hurry(datasets.map((d) => partJobId(payload.snapshotId, d, key)));
    attempt.log.debug({ datasets }, 'changed company: its other parts go first');
  } catch (err: unknown) {
    attempt.log.warn({ err: coerceError(err).message }, 'could not move the changed company’s parts forward');
  }
}
