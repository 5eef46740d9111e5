/**
 * The helpers object every job gets beside its payload (graphile-worker's `(payload, helpers)`),
 * built once per worker by the worker runner. Each port a job may use is stated here, once; jobs/
 * reads it, and a test of a job builds one of its own.
 */
import type { Job, JobsOptions } from 'bullmq';
import type { Budget } from '../budget/index.js';
import type { Config } from '../config/load.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics/metrics.js';
import type { Clock } from '../types.js';
import type {
  PartFetcher,
  PartHurrier,
  RateLimiterLike,
  ReusePorts,
  SnapshotPublisher,
  StagedPartPorts,
} from './part/index.js';
import type { EarlyConversion, EnqueueOutcome, JobType } from './queue/index.js';
import type { OutageGuard, SnapshotSpec, SnapshotStore } from './record/index.js';

export interface JobHelpers {
  /** The worker's config, loaded and checked once (src/config/), for the settings a job reads. */
  config: Config;
  /** Sends a part's one request through the API client (client-fetcher.ts). */
  fetcher: PartFetcher;
  /** The API key's request budget (rate, quota, concurrency), shared by every worker of the key. */
  budget: Budget;

  /**
   * The staged part (src/output/staged-part/): its writer, its size when found again, and its
   * pieces converted while it is staged.
   */
  staged: StagedPartPorts;
  /**
   * Announces pieces of big parts to convert while they are staged (output.convert_while_staging).
   * @defaultValue none: parts are converted when the snapshot is published
   */
  earlyConversion?: EarlyConversion;

  /** Carries unchanged parts over from the previous snapshot (incremental nights). @defaultValue none: every part is fetched */
  reuse?: ReusePorts;
  /** Builds a snapshot's published files, manifest and _SUCCESS from its staged parts. */
  publish: SnapshotPublisher;
  /** The snapshots' record in Redis: state, parts, counts (record/snapshot-store.ts). */
  record: SnapshotStore;
  /** The logger of the worker that runs the job (`worker: parts` or `control`). */
  logger: Logger;
  clock: Clock;
  /** Prometheus metrics of this process. @defaultValue none (nothing recorded) */
  metrics?: Metrics;
  /**
   * Aborted when the worker starts shutting down: a part still waiting for its rate-limit slot
   * (a pacing sleep) goes back to the queue at once instead of sending its request. Requests
   * already sent are left to finish.
   */
  closing: AbortSignal;

  // The queues.
  /** Queues one job of `type` with the type's options, plus per-job ones (a jobId). */
  add<P>(type: JobType<string, P>, payload: P, opts?: JobsOptions): Promise<void>;
  /** Creates a snapshot's flow, unless the snapshot exists (queue/enqueue.ts). */
  enqueue(spec: SnapshotSpec): Promise<EnqueueOutcome>;
  /** Marks the snapshot stopped and removes its parts that have not started. */
  stopSnapshot(snapshotId: string, message: string, job: Job): Promise<void>;
  /** Holds the whole parts queue on a 429 or an outage. */
  rateLimiter: RateLimiterLike;
  /** API outages shared by every worker: hold the queue and probe instead of burning attempts. */
  outage: Pick<OutageGuard, 'gate' | 'failed' | 'answered'>;
  /**
   * Moves parts to the front of the parts queue: a changed company's other parts, once its catalog
   * part is done (incremental nights); otherwise they run in their turn, after every catalog.
   */
  hurry: PartHurrier;
}

/** The helpers the output module provides (output-adapter.ts), and how to release them. */
export type OutputHelpers = Pick<JobHelpers, 'staged' | 'reuse' | 'publish'> & {
  /** Releases the output's storages (bucket connections) once the workers stopped. @defaultValue nothing to release */
  closeOutput?(): Promise<void>;
};
