/**
 * A changed company's other parts run right after its catalog part. On an incremental night every
 * other part waits behind all the catalogs (BullMQ priority), so the one company that filed would
 * start its requests only once the last catalog of the night had ended: with hundreds of companies,
 * the largest fixed cost of a night where one company changed. Its catalog part, once it is done and
 * the company is known to have changed, moves the company's other parts to the front of the queue.
 */
import { Job, type Queue } from 'bullmq';
import type { Manifest } from '../../output/index.js';
import { DATASETS, type DatasetName, type PartPointer } from '../../types.js';
import { CHANGE_DATASET, companyChanged } from './reuse-decision.js';

/**
 * The datasets (besides the catalog) whose part of this company to hurry now that its catalog part
 * has ended: all of them when the company changed (companyChanged), none when it did not (its
 * parts are carried over in a few Redis reads, in their turn). Datasets the snapshot does not have
 * are listed too: their jobs do not exist, and hurrying them does nothing.
 */
export function datasetsToHurry(key: string, catalog: PartPointer, previous: Manifest): DatasetName[] {
  if (companyChanged(key, catalog, previous) === undefined) return [];
  return DATASETS.filter((d) => d !== CHANGE_DATASET);
}

/** Moves jobs of the parts queue to its front: the ones waiting their turn, and the ones delayed. */
export type PartHurrier = (jobIds: readonly string[]) => Promise<void>;

/**
 * Priority 0 is BullMQ's wait list, which a worker takes before every prioritized job; all parts of
 * an incremental night have a priority (1 catalogs, 2 the rest), so a hurried part is next. A part
 * that already looked for its catalog is delayed (a 250 ms step): it is promoted as well. A job that
 * is absent (the dataset is not in the snapshot), active or finished is left as it is.
 */
export function partHurrier(queue: Queue): PartHurrier {
  return async (jobIds) => {
    for (const id of jobIds) {
      const job = await Job.fromId(queue, id);
      if (job === undefined) continue;
      await job.changePriority({ priority: 0 });
      // It may leave the delayed set between the two calls (its step ended): then it waits already.
      if (await job.isDelayed()) await job.promote().catch(() => undefined);
    }
  };
}
