/**
 * Job `export-part`: one part of a snapshot = one (company, dataset) = exactly one API request per
 * attempt. Streams the rows from the client into the part writer (staging) and returns a pointer
 * (file, rows, bytes, sha256), never the rows. What a failure does is the failure policy's row for
 * its error code (src/pipeline/part/failure-policy.ts, rendered in docs/architecture.md "Failures").
 *
 * An attempt runs three named steps (jobs/export-part/): prepare or reuse (prepare.ts), fetch and
 * stage (fetch-and-stage.ts), and on a throw, act on the failure (on-failure.ts). A changed
 * company's catalog part then moves the company's other parts to the front of the queue
 * (changed-company-first.ts).
 */
import type { Job } from 'bullmq';
import { defineJob, EXPORT_PART, type ExportPartPayload, type JobHelpers } from '../src/pipeline/index.js';
import type { PartPointer } from '../src/types.js';
import { recordPart, startAttempt } from './export-part/attempt.js';
import { moveChangedCompanyFirst } from './export-part/changed-company-first.js';
import { fetchAndStage } from './export-part/fetch-and-stage.js';
import { actOnFailure } from './export-part/on-failure.js';
import { passOutageGate, prepareOrReuse } from './export-part/prepare.js';

export type { ExportPartPayload };

/** One part of a snapshot, in the parts worker (rate-limited by the budget). */
export const exportPartJob = defineJob({
  type: EXPORT_PART,
  run: exportPart,
  onFailed: (job, err, helpers) =>
    helpers.logger.debug(
      { job: job.id, reason: err.message, attempts: job.attemptsMade },
      'part attempt failed',
    ),
});

/** One attempt of the part: prepare or reuse, fetch and stage, record; on a throw, the failure step. */
async function exportPart(
  payload: ExportPartPayload,
  helpers: JobHelpers,
  job: Job,
  token?: string,
  signal?: AbortSignal,
): Promise<PartPointer> {
  const attempt = startAttempt(payload, helpers, job, token, signal);
  const prepared = await prepareOrReuse(attempt);
  if (prepared.kind === 'settled') return prepared.pointer;
  await passOutageGate(attempt);
  const startedAt = performance.now();
  const timed = (): void =>
    helpers.metrics?.partDuration.observe(
      { dataset: payload.dataset },
      (performance.now() - startedAt) / 1000,
    );
  try {
    const pointer = await fetchAndStage(attempt, prepared.spec.operation, prepared.note);
    timed();
    await recordPart(attempt, pointer);
    attempt.log.debug({ rows: pointer.rows, bytes: pointer.bytes }, 'part exported');
    await moveChangedCompanyFirst(attempt, pointer);
    return pointer;
  } catch (err: unknown) {
    return actOnFailure(attempt, err, timed);
  }
}
