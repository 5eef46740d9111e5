/**
 * What the worker runner hands the job processors of jobs/, and what it expects back. The
 * processors are written in jobs/ (one file per job type) and injected here by the composition
 * root (the program entry), so src/ never imports jobs/.
 */
import type { Job } from 'bullmq';
import type { Budget } from '../budget/index.js';
import type { Logger } from '../log.js';
import type { Metrics } from '../metrics/metrics.js';
import type { Clock, PartPointer } from '../types.js';
import type { EnqueueOutcome } from './enqueue.js';
import type { IncrementalPlan } from './incremental.js';
import type { OutageGuard } from './outage.js';
import type { RateLimiterLike } from './part-budget.js';
import type { ConvertSegmentPayload } from './job-payloads.js';
import type {
  PartFetcher,
  PartWriterFactory,
  ReusePorts,
  SegmentConverter,
  SegmentOutcome,
  SnapshotPublisher,
} from './ports.js';
import type { SnapshotSpec, SnapshotStore } from './snapshot-store.js';

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

/** How a parts worker hands ranges of a part being staged to the control workers. */
export interface EarlyConversion {
  /** Rows per segment: whole row groups (early-segments.ts SEGMENT_ROW_GROUPS). */
  segmentRows: number;
  /** Queues one convert-segment job. */
  enqueue(payload: ConvertSegmentPayload): Promise<void>;
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
  /** Decides whether the night is incremental (pipeline/incremental.ts). @defaultValue every night full */
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

/** The processor factories of every job type: jobs/index.ts provides them, the entry injects them. */
export interface JobProcessors {
  exportPart(deps: ExportPartDeps): ExportPartProcessor;
  publishSnapshot(deps: PublishSnapshotDeps): PublishSnapshotProcessor;
  nightlyTrigger(deps: NightlyTriggerDeps): NightlyTriggerProcessor;
  convertSegment(deps: ConvertSegmentDeps): ConvertSegmentProcessor;
  loadSnapshot(deps: LoadSnapshotDeps): LoadSnapshotProcessor;
}
