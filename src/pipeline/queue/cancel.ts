/**
 * Cancels a snapshot on a person's word (`filings-export cancel`): the record moves to
 * `cancelled` with who and when (the snapshot store owns the move), then its jobs are removed.
 * BullMQ cannot remove a job a worker holds: such a part runs to its end, and the record refuses
 * its result (it is fetched again by `run --retry`); the publish job, if it outlives the removal,
 * refuses a cancelled snapshot. Published snapshots and the budget are not touched.
 */
import { Job, type Queue } from 'bullmq';
import { InputError } from '../../errors.js';
import { companyKey, type SnapshotSpec, type SnapshotStore, type SnapshotView } from '../record/index.js';
import { partJobId, publishJobId } from './ids.js';

export interface CancelDeps {
  store: SnapshotStore;
  partsQueue: Queue;
  snapshotsQueue: Queue;
}

export interface CancelOutcome {
  record: SnapshotView;
  /** Part jobs removed before they ran (waiting, delayed, or waiting for a rate-limit slot). */
  removed: number;
  /** Part jobs a worker held: they end on their own and their results are discarded. */
  inFlight: number;
}

/** Part jobs looked up at once: bounded, so a 10,000-company snapshot does not flood Redis. */
const BATCH = 200;

/**
 * Cancels `id` for `by`. Throws an InputError naming the state when there is nothing to cancel:
 * no record, already ended (published, failed, stopped, cancelled), or its publish job has begun.
 */
export async function cancelSnapshot(deps: CancelDeps, id: string, by: string): Promise<CancelOutcome> {
  const before = await deps.store.get(id);
  if (!before) throw new InputError(`snapshot ${id}: no such snapshot (or its record expired)`);
  await refuseWhilePublishing(deps, id);
  if (!(await deps.store.cancel(id, by))) {
    const now = (await deps.store.view(id)) ?? before;
    throw new InputError(
      `snapshot ${id} is ${now.state}${now.message ? ` (${now.message})` : ''}; ` +
        `only a queued, waiting or running snapshot can be cancelled`,
    );
  }
  const jobs = await removeJobs(deps, before.spec);
  const record = await deps.store.view(id);
  if (!record) throw new Error(`snapshot ${id} vanished while it was cancelled`);
  return { record, ...jobs };
}

/** A publish job that has begun writes the snapshot out: too late to cancel it. */
async function refuseWhilePublishing(deps: CancelDeps, id: string): Promise<void> {
  const state = await deps.snapshotsQueue.getJobState(publishJobId(id));
  if (state === 'active')
    throw new InputError(
      `snapshot ${id} is being published (its parts have all ended); too late to cancel it: ` +
        `see how it ends with: filings-export status ${id}`,
    );
}

/** Removes the snapshot's publish job and every part job no worker holds. */
async function removeJobs(deps: CancelDeps, spec: SnapshotSpec): Promise<Omit<CancelOutcome, 'record'>> {
  const ids = spec.companies.flatMap((c) => spec.datasets.map((d) => partJobId(spec.id, d, companyKey(c))));
  let removed = 0;
  let inFlight = 0;
  for (let i = 0; i < ids.length; i += BATCH) {
    const states = await Promise.all(ids.slice(i, i + BATCH).map((j) => deps.partsQueue.getJobState(j)));
    for (const s of states) {
      if (s === 'active') inFlight++;
      else if (s !== 'completed' && s !== 'failed' && s !== 'unknown') removed++;
    }
  }
  const parent = await Job.fromId(deps.snapshotsQueue, publishJobId(spec.id));
  if (parent) {
    // Without a held part the whole flow goes at once; otherwise only the parts not started, and
    // the parent stays until the held ones end (then refuses the cancelled snapshot).
    if (inFlight === 0)
      await parent.remove({ removeChildren: true }).catch(() => parent.removeUnprocessedChildren());
    else await parent.removeUnprocessedChildren();
  }
  return { removed, inFlight };
}
