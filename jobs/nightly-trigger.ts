/**
 * Job `nightly-trigger`: what the job scheduler (`filings-export schedule`) produces each night.
 * Scheduler jobs cannot carry a custom job id, so this job creates the snapshot flow itself under
 * the deterministic id `nightly-YYYY-MM-DD` (the scheduled date in the configured time zone).
 * Running it twice for the same night (a retry, a duplicate scheduler job) enqueues nothing new.
 */
import { UnrecoverableError, type Job } from 'bullmq';
import { coerceError } from '../src/errors.js';
import {
  defineJob,
  incrementalPlanner,
  localDate,
  nightlySnapshotId,
  NIGHTLY_TRIGGER,
  type EnqueueOutcome,
  type IncrementalPlan,
  type NightlyTriggerPayload,
  type SnapshotSpec,
} from '../src/pipeline/index.js';
import type { Logger } from '../src/log.js';
import type { Clock } from '../src/types.js';

export interface NightlyTriggerDeps {
  enqueue(spec: SnapshotSpec): Promise<EnqueueOutcome>;
  /** Decides whether the night is incremental (pipeline/queue/incremental.ts). @defaultValue every night full */
  planIncremental?: (spec: SnapshotSpec) => Promise<IncrementalPlan>;
  clock: Clock;
  logger: Logger;
}

export type NightlyTriggerProcessor = (
  job: Job,
) => Promise<{ snapshotId: string; outcome: EnqueueOutcome['kind'] }>;

export type { NightlyTriggerPayload };

/** Produced by the job scheduler (`filings-export schedule`); runs in the control worker. */
export const nightlyTriggerJob = defineJob({
  type: NIGHTLY_TRIGGER,
  deps: (env): NightlyTriggerDeps => ({
    enqueue: (spec) => env.ctx.enqueue(spec),
    planIncremental: incrementalPlanner(env.ctx.config),
    clock: env.clock,
    logger: env.logger,
  }),
  create: createNightlyTriggerProcessor,
});

/** When the scheduler meant this job to run: scheduler job ids end in `:<epoch ms>`. */
export function scheduledAtMs(job: Pick<Job, 'id' | 'timestamp' | 'opts'>, clock: Clock): number {
  const m = /:(\d{10,})$/.exec(job.id ?? '');
  if (m?.[1]) return Number(m[1]);
  if (job.timestamp) return job.timestamp + (job.opts.delay ?? 0);
  return clock.now();
}

export function createNightlyTriggerProcessor(deps: NightlyTriggerDeps): NightlyTriggerProcessor {
  return async function processNightlyTrigger(job: Job) {
    let p: NightlyTriggerPayload;
    try {
      p = NIGHTLY_TRIGGER.parse(job.data);
    } catch (err: unknown) {
      throw new UnrecoverableError(coerceError(err).message);
    }
    // The scheduled time, not the processing time: a trigger that runs late is still that night's.
    const date = localDate(scheduledAtMs(job, deps.clock), p.tz);
    const asked: SnapshotSpec = {
      id: nightlySnapshotId(date),
      date,
      trigger: 'nightly',
      companies: p.companies,
      datasets: p.datasets,
      formats: p.formats,
      outDir: p.outDir,
    };
    // A trigger that fires twice finds the record and enqueues nothing: deciding again is harmless.
    const decided = deps.planIncremental ? await deps.planIncremental(asked) : { spec: asked, note: 'full' };
    const spec = decided.spec;
    const outcome = await deps.enqueue(spec);
    deps.logger.info(
      { snapshot: spec.id, outcome: outcome.kind, incremental: decided.note },
      'nightly trigger',
    );
    return { snapshotId: spec.id, outcome: outcome.kind };
  };
}
