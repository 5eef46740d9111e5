/**
 * One attempt of one part, as every step of the part processor reads it (prepare or reuse, fetch
 * and stage, act on the failure), and the two things each step may do with it: record the
 * part's result, or hold the whole parts queue during an outage.
 */
import { RateLimitError, UnrecoverableError, type Job } from 'bullmq';
import { coerceError } from '../../src/errors.js';
import type { Logger } from '../../src/log.js';
import { companyKey, EXPORT_PART, type ExportPartPayload } from '../../src/pipeline/index.js';
import type { PartPointer } from '../../src/types.js';
import type { ExportPartDeps } from './deps.js';

export interface PartAttempt {
  deps: ExportPartDeps;
  job: Job;
  token: string | undefined;
  /** The job's own signal: aborted when the job is cancelled or the worker closes past its deadline. */
  signal: AbortSignal | undefined;
  p: ExportPartPayload;
  /** The company's key (ticker or CIK) as parts and files name it. */
  key: string;
  /** `<dataset> <key>`, for messages. */
  label: string;
  base: Pick<PartPointer, 'dataset' | 'ticker'>;
  log: Logger;
}

/** Reads the job's payload; a payload that does not parse can never succeed, so no retry. */
export function startAttempt(
  deps: ExportPartDeps,
  job: Job,
  token: string | undefined,
  signal: AbortSignal | undefined,
): PartAttempt {
  let p: ExportPartPayload;
  try {
    p = EXPORT_PART.parse(job.data);
  } catch (err: unknown) {
    throw new UnrecoverableError(coerceError(err).message);
  }
  const key = companyKey(p.company);
  const label = `${p.dataset} ${key}`;
  const log = deps.logger.child({ snapshot: p.snapshotId, part: label, attempt: job.attemptsMade + 1 });
  return { deps, job, token, signal, p, key, label, base: { dataset: p.dataset, ticker: key }, log };
}

/**
 * Records the part's result in the snapshot (status, counts) and in the metrics. A snapshot
 * cancelled while the part was in flight refuses it: the result is discarded (`run --retry`
 * fetches the part again) and the job ends without counting it.
 */
export async function recordPart(a: PartAttempt, pointer: PartPointer): Promise<PartPointer> {
  const m = a.deps.metrics;
  if (!(await a.deps.store.recordPart(a.p.snapshotId, pointer))) {
    a.log.info(
      { status: pointer.status },
      'snapshot cancelled (or its record is gone): part result discarded',
    );
    return pointer;
  }
  m?.parts.inc({ dataset: a.p.dataset, outcome: pointer.status });
  if (pointer.status === 'done') {
    m?.rows.inc({ dataset: a.p.dataset }, pointer.rows);
    m?.bytes.inc({ dataset: a.p.dataset }, pointer.bytes);
  }
  return pointer;
}

/** A part that ends without a file: failed, or an answer that is final (404, 400). */
export function recordEnded(
  a: PartAttempt,
  status: 'failed' | 'not_found' | 'bad_request',
  message: string,
): Promise<PartPointer> {
  return recordPart(a, { ...a.base, status, rows: 0, bytes: 0, message });
}

/** Holds the whole parts queue until `untilMs`; the job goes back without spending an attempt. */
export async function holdForOutage(a: PartAttempt, untilMs: number): Promise<never> {
  a.deps.metrics?.outageHolds.inc();
  await a.deps.rateLimiter.rateLimit(Math.max(1, untilMs - a.deps.clock.now()));
  throw new RateLimitError();
}

/** Any answer of the API ends an outage; logs how long it lasted. */
export async function apiAnswered(a: PartAttempt): Promise<void> {
  const lasted = await a.deps.outage.answered();
  if (lasted !== null)
    a.deps.logger.info({ outageMs: lasted }, 'API reachable again; the parts queue resumes');
}
