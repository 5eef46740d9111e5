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
  type LoadedDataset,
  type LoadSnapshotPayload,
  type SnapshotStore,
} from '../src/pipeline/index.js';
import type { Logger } from '../src/log.js';
import type { Metrics } from '../src/metrics/metrics.js';
import type { Clock } from '../src/types.js';
import { counted } from '../src/counted.js';

export interface LoadSnapshotDeps {
  /** Loads every published snapshot not yet loaded, up to `latest`, into output.load_into. */
  load(outDir: string): Promise<LoadedDataset[]>;
  store: Pick<SnapshotStore, 'recordLoad'>;
  clock: Clock;
  logger: Logger;
  /** @defaultValue none */
  metrics?: Metrics;
}

export type LoadSnapshotProcessor = (job: Job) => Promise<{ snapshotId: string; loaded: LoadedDataset[] }>;

export type { LoadSnapshotPayload };

/** Queued by publish-snapshot when `output.load_into` is set; runs in the control worker. */
export const loadSnapshotJob = defineJob({
  type: LOAD_SNAPSHOT,
  deps: (env): LoadSnapshotDeps => ({
    load: loadAfterPublish(env.ctx.config),
    store: env.ctx.store,
    clock: env.clock,
    logger: env.logger,
    ...(env.metrics ? { metrics: env.metrics } : {}),
  }),
  create: createLoadSnapshotProcessor,
});

export function createLoadSnapshotProcessor(deps: LoadSnapshotDeps): LoadSnapshotProcessor {
  return async function processLoadSnapshot(job: Job) {
    let p: LoadSnapshotPayload;
    try {
      p = LOAD_SNAPSHOT.parse(job.data);
    } catch (err: unknown) {
      throw new UnrecoverableError(coerceError(err).message);
    }
    const log = deps.logger.child({ snapshot: p.snapshotId, job: LOAD_SNAPSHOT.name });
    try {
      const loaded = await deps.load(p.outDir);
      const acted = loaded.filter((d) => d.mode !== 'skip');
      for (const d of acted)
        deps.metrics?.loads.inc({ outcome: 'loaded', mode: d.mode === 'full' ? 'full' : 'changes' });
      deps.metrics?.lastLoad.set(deps.clock.now() / 1000);
      const message =
        acted.length === 0
          ? 'up to date'
          : acted
              .map(
                (d) =>
                  `${d.snapshotId} ${d.dataset} ${d.mode} ${counted(d.rows, 'row')}${d.shrink !== undefined ? ` (${d.shrink})` : ''}${d.history !== undefined ? ` (${d.history})` : ''}`,
              )
              .join('; ');
      await deps.store.recordLoad(p.snapshotId, { outcome: 'loaded', atMs: deps.clock.now(), message });
      log.info({ loaded: acted.length }, `warehouse load: ${message}`);
      return { snapshotId: p.snapshotId, loaded };
    } catch (err: unknown) {
      const e = coerceError(err);
      // A load that would shrink a table is refused, not failed: the warehouse is fine, the
      // snapshot is suspect, and only a person (`load --allow-shrink`) can say it is meant.
      const outcome = errorCode(e) === 'WAREHOUSE_SHRINK_REFUSED' ? 'refused' : 'failed';
      deps.metrics?.loads.inc({ outcome, mode: 'unknown' });
      const last = !isRetryable(e) || job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      const message = `${errorCode(e)}: ${e.message}${last ? '' : ' (will retry)'}`;
      await deps.store.recordLoad(p.snapshotId, { outcome, atMs: deps.clock.now(), message });
      log.error({ reason: e.message }, `warehouse load ${outcome}: ${message}`);
      // A refused login or an altered table fails the same way again: no retry until someone acts.
      throw isRetryable(e) ? e : new UnrecoverableError(message);
    }
  };
}
