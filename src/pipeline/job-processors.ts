/**
 * What a job type's definition in jobs/ is and what the worker runner offers it (`JobEnv`). The
 * definitions, with each processor's deps, are written in jobs/ (one file per job type) and
 * injected by the composition root (the program entry), so src/ never imports jobs/.
 */
import type { Job, JobsOptions } from 'bullmq';
import type { Budget } from '../budget/index.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics/metrics.js';
import type { Clock } from '../types.js';
import type { JobType } from './queue/index.js';
import type { PartFetcher, ReusePorts, SnapshotPublisher, StagedPartPorts } from './part/index.js';
import type { PipelineContext } from './context.js';

/** The ports the worker runner offers every job definition (the exporter adapts src/api and src/output). */
export interface JobPorts {
  fetcher: PartFetcher;
  staged: StagedPartPorts;
  /** Carries unchanged parts over from the previous snapshot (incremental nights). @defaultValue none: every part is fetched */
  reuse?: ReusePorts;
  publish: SnapshotPublisher;
}

/** What the worker runner offers each job definition to build its processor's deps from. */
export interface JobEnv {
  ctx: PipelineContext;
  ports: JobPorts;
  budget: Budget;
  clock: Clock;
  /** @defaultValue none (nothing recorded) */
  metrics?: Metrics;
  /** The logger of the worker that runs the job (`worker: parts` or `control`). */
  logger: Logger;
  /** Aborted when the worker starts shutting down. */
  closing: AbortSignal;
  /** Marks the snapshot stopped and removes its parts that have not started. */
  stopSnapshot(snapshotId: string, message: string, job: Job): Promise<void>;
  /** Queues one job of `type` with the type's options, plus per-job ones (a jobId). */
  add<P>(type: JobType<string, P>, payload: P, opts?: JobsOptions): Promise<void>;
}

/** One processor, whatever its job type: BullMQ passes the lock token and an abort signal. */
export type JobProcessor = (job: Job, token?: string, signal?: AbortSignal) => Promise<unknown>;

/**
 * Everything about one job type in one place (jobs/<type>.ts): its contract from `JOB_TYPES`
 * (name, queue, payload check, options), how its deps come from the runner's offer, and its
 * processor factory.
 */
export interface JobDefinition<P = unknown, D = unknown> {
  readonly type: JobType<string, P>;
  /** The processor's deps out of what the runner offers. */
  deps(env: JobEnv): D;
  /** The typed processor factory (tests call it with deps of their own). */
  create(deps: D): JobProcessor;
  /** Runs on the worker's `failed` event for a job of this type. @defaultValue nothing */
  onFailed?(job: Job, err: Error, env: JobEnv): void;
}

/** A definition with its deps type closed over, so that one list holds every job type. */
export interface DefinedJob {
  readonly type: JobType;
  start(env: JobEnv): JobProcessor;
  onFailed?(job: Job, err: Error, env: JobEnv): void;
}

export function defineJob<P, D>(def: JobDefinition<P, D>): DefinedJob & JobDefinition<P, D> {
  return { ...def, start: (env) => def.create(def.deps(env)) };
}

/** Every job type's definition, once each (jobs/index.ts); the entry injects the list. */
export type JobDefinitions = readonly DefinedJob[];
