/**
 * Job `load-snapshot`: after `publish-snapshot`, brings the warehouse of `output.load_into` to the
 * published snapshots (every one not yet loaded, up to `latest`), exactly once (src/warehouse).
 * Its outcome goes on the snapshot's record (status, the status page) and into the metrics. A load
 * that would empty a table or remove most of its companies is refused, never retried; a failure
 * is retried by BullMQ (attempts with backoff). The snapshot stays published whatever happens.
 */
import { UnrecoverableError, type Job } from 'bullmq';
import { coerceError, errorCode, isRetryable } from '../src/errors.js';
import {
  defineJob,
  LOAD_SNAPSHOT,
  loadAfterPublish,
  type JobHelpers,
  type LoadedDataset,
  type LoadSnapshotPayload,
} from '../src/pipeline/index.js';
import { counted } from '../src/counted.js';

export type { LoadSnapshotPayload };

/** Queued by publish-snapshot when `output.load_into` is set; runs in the control worker. */
export const loadSnapshotJob = defineJob({ type: LOAD_SNAPSHOT, run: loadSnapshot });

/** Loads every published snapshot not yet loaded, up to `latest`, into output.load_into. */
async function loadSnapshot(
  payload: LoadSnapshotPayload,
  helpers: JobHelpers,
  job: Job,
): Promise<{ snapshotId: string; loaded: LoadedDataset[] }> {
  const log = helpers.logger.child({ snapshot: payload.snapshotId, job: LOAD_SNAPSHOT.name });
  try {
    const loaded = await loadAfterPublish(helpers.config)(payload.outDir);
    const acted = loaded.filter((d) => d.mode !== 'skip');
    for (const d of acted)
      helpers.metrics?.loads.inc({ outcome: 'loaded', mode: d.mode === 'full' ? 'full' : 'changes' });
    helpers.metrics?.lastLoad.set(helpers.clock.now() / 1000);
    const message =
      acted.length === 0
        ? 'up to date'
        : acted
            .map(
              (d) =>
                `${d.snapshotId} ${d.dataset} ${d.mode} ${counted(d.rows, 'row')}${d.shrink !== undefined ? ` (${d.shrink})` : ''}${d.history !== undefined ? ` (${d.history})` : ''}`,
            )
            .join('; ');
    await helpers.record.recordLoad(payload.snapshotId, {
      outcome: 'loaded',
      atMs: helpers.clock.now(),
      message,
    });
    log.info({ loaded: acted.length }, `warehouse load: ${message}`);
    return { snapshotId: payload.snapshotId, loaded };
  } catch (err: unknown) {
    const e = coerceError(err);
    // A load that would shrink a table is refused, not failed: the warehouse is fine, the
    // snapshot is suspect, and only a person (`load --allow-shrink`) can say it is meant.
    const outcome = errorCode(e) === 'WAREHOUSE_SHRINK_REFUSED' ? 'refused' : 'failed';
    helpers.metrics?.loads.inc({ outcome, mode: 'unknown' });
    const last = !isRetryable(e) || job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
    const message = `${errorCode(e)}: ${e.message}${last ? '' : ' (will retry)'}`;
    await helpers.record.recordLoad(payload.snapshotId, { outcome, atMs: helpers.clock.now(), message });
    log.error({ reason: e.message }, `warehouse load ${outcome}: ${message}`);
    // A refused login or an altered table fails the same way again: no retry until someone acts.
    throw isRetryable(e) ? e : new UnrecoverableError(message);
  }
}
