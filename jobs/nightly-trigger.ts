/**
 * Job `nightly-trigger`: what the job scheduler (`filings-export schedule`) produces each night.
 * Scheduler jobs cannot carry a custom job id, so this job creates the snapshot flow itself under
 * the deterministic id `nightly-YYYY-MM-DD` (the scheduled date in the configured time zone).
 * Running it twice for the same night (a retry, a duplicate scheduler job) enqueues nothing new.
 */
import { UnrecoverableError, type Job } from 'bullmq';
import { z } from 'zod';
import { TICKER_PATTERN, CIK_PATTERN_10 } from '../src/config/schema.js';
import { coerceError } from '../src/errors.js';
import type { Logger } from '../src/log.js';
import type { EnqueueOutcome } from '../src/pipeline/enqueue.js';
import { localDate, nightlySnapshotId } from '../src/pipeline/ids.js';
import { parsePayload } from '../src/pipeline/payload.js';
import type { SnapshotSpec } from '../src/pipeline/snapshot-store.js';
import { DATASETS, OUTPUT_FORMATS, type Clock } from '../src/types.js';

export const name = 'nightly-trigger';

const payloadSchema = z.strictObject({
  v: z.literal(1, 'must be 1 (payload version)'),
  /** Time zone that dates the snapshot (the scheduler's tz). */
  tz: z.string().min(1),
  companies: z
    .array(
      z.discriminatedUnion('kind', [
        z.strictObject({
          kind: z.literal('ticker'),
          ticker: z.string().regex(TICKER_PATTERN, 'must be a ticker'),
        }),
        z.strictObject({
          kind: z.literal('cik'),
          cik: z.string().regex(CIK_PATTERN_10, 'must be a 10-digit CIK'),
        }),
      ]),
    )
    .min(1, 'must name at least one company'),
  datasets: z.array(z.enum(DATASETS, `must be one of ${DATASETS.join(', ')}`)).min(1),
  formats: z.array(z.enum(OUTPUT_FORMATS, `must be one of ${OUTPUT_FORMATS.join(', ')}`)).min(1),
  outDir: z.string().min(1),
});

export type NightlyTriggerPayload = z.infer<typeof payloadSchema>;

export function parseNightlyTriggerPayload(data: unknown): NightlyTriggerPayload {
  return parsePayload(payloadSchema, data, name);
}

export interface NightlyTriggerDeps {
  enqueue(spec: SnapshotSpec): Promise<EnqueueOutcome>;
  clock: Clock;
  logger: Logger;
}

/** When the scheduler meant this job to run: scheduler job ids end in `:<epoch ms>`. */
export function scheduledAtMs(job: Pick<Job, 'id' | 'timestamp' | 'opts'>, clock: Clock): number {
  const m = /:(\d{10,})$/.exec(job.id ?? '');
  if (m?.[1]) return Number(m[1]);
  if (job.timestamp) return job.timestamp + (job.opts.delay ?? 0);
  return clock.now();
}

export function createNightlyTriggerProcessor(deps: NightlyTriggerDeps) {
  return async function processNightlyTrigger(
    job: Job,
  ): Promise<{ snapshotId: string; outcome: EnqueueOutcome['kind'] }> {
    let p: NightlyTriggerPayload;
    try {
      p = parseNightlyTriggerPayload(job.data);
    } catch (err: unknown) {
      throw new UnrecoverableError(coerceError(err).message);
    }
    // The scheduled time, not the processing time: a trigger that runs late is still that night's.
    const date = localDate(scheduledAtMs(job, deps.clock), p.tz);
    const spec: SnapshotSpec = {
      id: nightlySnapshotId(date),
      date,
      trigger: 'nightly',
      companies: p.companies,
      datasets: p.datasets,
      formats: p.formats,
      outDir: p.outDir,
    };
    const outcome = await deps.enqueue(spec);
    deps.logger.info({ snapshot: spec.id, outcome: outcome.kind }, 'nightly trigger');
    return { snapshotId: spec.id, outcome: outcome.kind };
  };
}
