/**
 * What a job type's definition in jobs/ is, what the worker runner offers it (`JobEnv`) and what
 * each processor needs and returns. The definitions are written in jobs/ (one file per job type)
 * and injected by the composition root (the program entry), so src/ never imports jobs/.
 */
import type { Job, JobsOptions } from 'bullmq';
import type { Budget } from '../budget/index.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics/metrics.js';
import type { Clock, PartPointer } from '../types.js';
import type { EarlyConversion, EnqueueOutcome, IncrementalPlan, JobType } from './queue/index.js';
import type {
  OutageGuard,
  PartFetcher,
  PartWriterFactory,
  RateLimiterLike,
  ReusePorts,
  SegmentConverter,
  SegmentOutcome,
  SnapshotPublisher,
} from './part/index.js';
import type { SnapshotSpec, SnapshotStore } from './record/index.js';
import type { PipelineContext } from './context.js';

export interface ExportPartDeps {
  fetcher: PartFetcher;
  createWriter: PartWriterFactory;
  /** Size of a staged part under a root (local file or stored object), null when absent. @defaultValue a local stat */
  stagedBytes?: (root: string, file: string) => Promise<number | null>;
  /** Carries unchanged parts over from the previous snapshot (incremental nights). @defaultValue none: every part is fetched */
  reuse?: ReusePorts;
  store: SnapshotStore;
  budget: Budget;
  /** Holds the whole parts queue on a 429 or an outage (a Queue of the parts queue, or the Worker). */
  rateLimiter: RateLimiterLike;
  /** API outages shared by every worker: hold the queue and probe instead of burning attempts. */
  outage: Pick<OutageGuard, 'gate' | 'failed' | 'answered'>;
  /** retry.outage_max_ms, for the message of a part that gives up. */
  maxOutageMs: number;
  /** Marks the snapshot stopped and removes its parts that have not started. */
  stopSnapshot(snapshotId: string, message: string, job: Job): Promise<void>;
  /**
   * Aborted when the worker starts shutting down: a part still waiting for its rate-limit slot
   * (a pacing sleep) goes back to the queue at once instead of sending its request. Requests
   * already sent are left to finish. @defaultValue none (only the job's own signal)
   */
  closing?: AbortSignal;
  clock: Clock;
  logger: Logger;
  /** Prometheus metrics of this process. @defaultValue none (nothing recorded) */
  metrics?: Metrics;
  /**
   * Announces segments of big parts to convert while they are staged (output.convert_while_staging).
   * @defaultValue none: parts are converted when the snapshot is published
   */
  earlyConversion?: EarlyConversion;
}

export interface ConvertSegmentDeps {
  convert: SegmentConverter;
  store: Pick<SnapshotStore, 'state'>;
  logger: Logger;
}

export interface PublishSnapshotDeps {
  store: SnapshotStore;
  publish: SnapshotPublisher;
  clock: Clock;
  logger: Logger;
  /** How long the per-part hash stays after publication. */
  partsTtlSeconds: number;
  /** Prometheus metrics of this process. @defaultValue none */
  metrics?: Metrics;
  /** Queues the warehouse load of a published snapshot (output.load_into set). @defaultValue no load */
  enqueueLoad?: (snapshotId: string, outDir: string) => Promise<void>;
}

/** What one dataset of a load did (warehouse/load.ts `DatasetLoad`, without importing it here). */
export interface LoadedDataset {
  snapshotId: string;
  dataset: string;
  mode: 'full' | 'changes' | 'skip';
  rows: number;
  reason: string;
}

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

export interface PublishSnapshotResult {
  snapshotId: string;
  status: 'published' | 'failed' | 'stopped';
  manifest: string | null;
  rows: Record<string, number>;
}

export interface NightlyTriggerDeps {
  enqueue(spec: SnapshotSpec): Promise<EnqueueOutcome>;
  /** Decides whether the night is incremental (pipeline/queue/incremental.ts). @defaultValue every night full */
  planIncremental?: (spec: SnapshotSpec) => Promise<IncrementalPlan>;
  clock: Clock;
  logger: Logger;
}

export type ExportPartProcessor = (job: Job, token?: string, signal?: AbortSignal) => Promise<PartPointer>;
export type PublishSnapshotProcessor = (job: Job) => Promise<PublishSnapshotResult>;
export type ConvertSegmentProcessor = (job: Job) => Promise<SegmentOutcome>;
export type NightlyTriggerProcessor = (
  job: Job,
) => Promise<{ snapshotId: string; outcome: EnqueueOutcome['kind'] }>;

/** The ports the worker runner offers every job definition (the exporter adapts src/api and src/output). */
export interface JobPorts {
  fetcher: PartFetcher;
  createWriter: PartWriterFactory;
  /** See ExportPartDeps.stagedBytes. */
  stagedBytes?: (root: string, file: string) => Promise<number | null>;
  /** See ExportPartDeps.reuse. @defaultValue none: every part is fetched */
  reuse?: ReusePorts;
  publish: SnapshotPublisher;
  /** Converts segments of parts being staged. @defaultValue none: convert-segment jobs are skipped */
  convertSegment?: SegmentConverter;
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
