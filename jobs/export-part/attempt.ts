/**
 * One attempt of one part, as every step of the part processor reads it (prepare or reuse, fetch
 * and stage, act on the failure), and the two things each step may do with it: record the
 * part's result, or hold the whole parts queue during an outage.
 */
import { RateLimitError, type Job } from 'bullmq';
import type { Logger } from '../../src/log.js';
import { companyKey, type ExportPartPayload, type JobHelpers } from '../../src/pipeline/index.js';
import type { PartPointer } from '../../src/types.js';

export interface PartAttempt {
  payload: ExportPartPayload;
  helpers: JobHelpers;
  job: Job;
  token: string | undefined;
  /** The job's own signal: aborted when the job is cancelled or the worker closes past its deadline. */
  signal: AbortSignal | undefined;
  /** The company's key (ticker or CIK) as parts and files name it. */
  key: string;
  /** `<dataset> <key>`, for messages. */
  label: string;
  base: Pick<PartPointer, 'dataset' | 'ticker'>;
  log: Logger;
}

/** One attempt of the part `payload` names, as its job's steps read it. */
export function startAttempt(
  payload: ExportPartPayload,
  helpers: JobHelpers,
  job: Job,
  token?: string,
  signal?: AbortSignal,
): PartAttempt {
  const key = companyKey(payload.company);
  const label = `${payload.dataset} ${key}`;
  const log = helpers.logger.child({
    snapshot: payload.snapshotId,
    part: label,
    attempt: job.attemptsMade + 1,
  });
  const base = { dataset: payload.dataset, ticker: key };
  return { payload, helpers, job, token, signal, key, label, base, log };
}

/**
 * Records the part's result in the snapshot (status, counts) and in the metrics. A snapshot
 * cancelled while the part was in flight refuses it: the result is discarded (`run --retry`
 * fetches the part again) and the job ends without counting it.
 */
export async function recordPart(attempt: PartAttempt, pointer: PartPointer): Promise<PartPointer> {
  const { helpers, payload } = attempt;
  const m = helpers.metrics;
  if (!(await helpers.record.recordPart(payload.snapshotId, pointer))) {
    attempt.log.info(
      { status: pointer.status },
      'snapshot cancelled (or its record is gone): part result discarded',
    );
    return pointer;
  }
  m?.parts.inc({ dataset: payload.dataset, outcome: pointer.status });
  if (pointer.status === 'done') {
    m?.rows.inc({ dataset: payload.dataset }, pointer.rows);
    m?.bytes.inc({ dataset: payload.dataset }, pointer.bytes);
  }
  return pointer;
}

/** A part that ends without a file: failed, or an answer that is final (404, 400). */
export function recordEnded(
  attempt: PartAttempt,
  status: 'failed' | 'not_found' | 'bad_request',
  message: string,
): Promise<PartPointer> {
  return recordPart(attempt, { ...attempt.base, status, rows: 0, bytes: 0, message });
}

/** Holds the whole parts queue until `untilMs`; the job goes back without spending an attempt. */
export async function holdForOutage(attempt: PartAttempt, untilMs: number): Promise<never> {
  attempt.helpers.metrics?.outageHolds.inc();
  await attempt.helpers.rateLimiter.rateLimit(Math.max(1, untilMs - attempt.helpers.clock.now()));
  throw new RateLimitError();
}

/** Any answer of the API ends an outage; logs how long it lasted. */
export async function apiAnswered(attempt: PartAttempt): Promise<void> {
  const lasted = await attempt.helpers.outage.answered();
  if (lasted !== null)
    attempt.helpers.logger.info({ outageMs: lasted }, 'API reachable again; the parts queue resumes');
}
