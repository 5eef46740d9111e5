/** What the part processor needs (the export-part definition builds it from the runner's offer). */
import type { Job } from 'bullmq';
import type { Budget } from '../../src/budget/index.js';
import type { Logger } from '../../src/log.js';
import type { Metrics } from '../../src/metrics/metrics.js';
import type {
  EarlyConversion,
  OutageGuard,
  PartFetcher,
  PartHurrier,
  RateLimiterLike,
  ReusePorts,
  SnapshotStore,
  StagedPartPorts,
} from '../../src/pipeline/index.js';
import type { Clock, PartPointer } from '../../src/types.js';

export interface ExportPartDeps {
  fetcher: PartFetcher;
  staged: StagedPartPorts;
  /** Carries unchanged parts over from the previous snapshot (incremental nights). @defaultValue none: every part is fetched */
  reuse?: ReusePorts;
  /**
   * Moves parts to the front of the parts queue: a changed company's other parts, once its catalog
   * part is done (incremental nights). @defaultValue none: they run in their turn, after every catalog
   */
  hurry?: PartHurrier;
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
   * Announces pieces of big parts to convert while they are staged (output.convert_while_staging).
   * @defaultValue none: parts are converted when the snapshot is published
   */
  earlyConversion?: EarlyConversion;
}

export type ExportPartProcessor = (job: Job, token?: string, signal?: AbortSignal) => Promise<PartPointer>;
