/**
 * Job `nightly-trigger`: what the job scheduler (`filings-export schedule`) produces each night.
 * Scheduler jobs cannot carry a custom job id, so this job creates the snapshot flow itself under
 * the deterministic id `nightly-YYYY-MM-DD` (the scheduled date in the configured time zone).
 * Running it twice for the same night (a retry, a duplicate scheduler job) enqueues nothing new.
 */
import type { Job } from 'bullmq';
import {
  defineJob,
  incrementalPlanner,
  localDate,
  nightlySnapshotId,
  NIGHTLY_TRIGGER,
  type EnqueueOutcome,
  type JobHelpers,
  type NightlyTriggerPayload,
  type SnapshotSpec,
} from '../src/pipeline/index.js';
import type { Clock } from '../src/types.js';

export type { NightlyTriggerPayload };

/** Produced by the job scheduler (`filings-export schedule`); runs in the control worker. */
export const nightlyTriggerJob = defineJob({ type: NIGHTLY_TRIGGER, run: nightlyTrigger });

/** When the scheduler meant this job to run: scheduler job ids end in `:<epoch ms>`. */
export function scheduledAtMs(job: Pick<Job, 'id' | 'timestamp' | 'opts'>, clock: Clock): number {
  const m = /:(\d{10,})$/.exec(job.id ?? '');
  if (m?.[1]) return Number(m[1]);
  if (job.timestamp) return job.timestamp + (job.opts.delay ?? 0);
  return clock.now();
}

/** Creates the night's snapshot (full or incremental, as incremental.* decides), once. */
async function nightlyTrigger(
  payload: NightlyTriggerPayload,
  helpers: JobHelpers,
  job: Job,
): Promise<{ snapshotId: string; outcome: EnqueueOutcome['kind'] }> {
  // The scheduled time, not the processing time: a trigger that runs late is still that night's.
  const date = localDate(scheduledAtMs(job, helpers.clock), payload.tz);
  const asked: SnapshotSpec = {
    id: nightlySnapshotId(date),
    date,
    trigger: 'nightly',
    companies: payload.companies,
    datasets: payload.datasets,
    formats: payload.formats,
    outDir: payload.outDir,
  };
  // A trigger that fires twice finds the record and enqueues nothing: deciding again is harmless.
  const decided = await incrementalPlanner(helpers.config)(asked);
  const spec = decided.spec;
  const outcome = await helpers.enqueue(spec);
  helpers.logger.info(
    { snapshot: spec.id, outcome: outcome.kind, incremental: decided.note },
    'nightly trigger',
  );
  return { snapshotId: spec.id, outcome: outcome.kind };
}
