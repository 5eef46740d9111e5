/**
 * What a job type's definition in jobs/ is: its contract, and how it runs one job with the
 * worker's helpers (job-helpers.ts). The definitions are written in jobs/ (one file per job type)
 * and injected by the composition root (the program entry), so src/ never imports jobs/.
 */
import { UnrecoverableError, type Job } from 'bullmq';
import { coerceError } from '../errors.js';
import type { JobHelpers } from './job-helpers.js';
import type { JobType } from './queue/index.js';

/** One processor, whatever its job type: BullMQ passes the lock token and an abort signal. */
export type JobProcessor = (job: Job, token?: string, signal?: AbortSignal) => Promise<unknown>;

/**
 * Everything about one job type in one place (jobs/<type>.ts): its contract from `JOB_TYPES`
 * (name, queue, payload check, options) and what one job of it does.
 */
export interface JobDefinition<P = unknown, R = unknown> {
  readonly type: JobType<string, P>;
  /**
   * Runs one job, its payload already checked by the type. `token` and `signal` are BullMQ's: the
   * job's lock and its abort (cancelled, or the worker closing past its deadline).
   */
  run(payload: P, helpers: JobHelpers, job: Job, token?: string, signal?: AbortSignal): Promise<R>;
  /** Runs on the worker's `failed` event for a job of this type. @defaultValue nothing */
  onFailed?(job: Job, err: Error, helpers: JobHelpers): void;
}

/** A definition with its payload type closed over, so that one list holds every job type. */
export interface DefinedJob {
  readonly type: JobType;
  /** The worker's processor for jobs of this type (tests call it with helpers of their own). */
  start(helpers: JobHelpers): JobProcessor;
  onFailed?(job: Job, err: Error, helpers: JobHelpers): void;
}

export function defineJob<P, R>(def: JobDefinition<P, R>): DefinedJob & JobDefinition<P, R> {
  return {
    ...def,
    start: (helpers) => async (job, token, signal) =>
      def.run(payloadOf(def.type, job), helpers, job, token, signal),
  };
}

/** The job's payload as its type checks it; one that does not parse can never succeed, so no retry. */
function payloadOf<P>(type: JobType<string, P>, job: Job): P {
  try {
    return type.parse(job.data);
  } catch (err: unknown) {
    throw new UnrecoverableError(coerceError(err).message);
  }
}

/** Every job type's definition, once each (jobs/index.ts); the entry injects the list. */
export type JobDefinitions = readonly DefinedJob[];
