/**
 * The pipeline's Redis-side resources, built once from the config: one ioredis connection, the two
 * queues, the flow producer and the snapshot store. Every command (run, worker, status, schedule)
 * opens one and closes it in `finally`.
 */
import { FlowProducer, Queue, type KeepJobs } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Config } from '../config/load.js';
import type { Logger } from '../log.js';
import { systemClock, type Clock } from '../types.js';
import {
  enqueueSnapshot,
  queueNames,
  type EnqueueOutcome,
  type FlowSettings,
  type QueueNames,
} from './queue/index.js';
import {
  connectRedis,
  recordsOn,
  type OutageGuard,
  type ReplicaAck,
  type SnapshotSpec,
  type SnapshotStore,
} from './record/index.js';

export { redactUrl } from './record/index.js';

export interface PipelineContext {
  config: Config;
  logger: Logger;
  /** Shared non-blocking connection (BullMQ workers open their own blocking ones from it). */
  redis: Redis;
  names: QueueNames;
  partsQueue: Queue;
  snapshotsQueue: Queue;
  flows: FlowProducer;
  store: SnapshotStore;
  /** API outages, shared by every worker of the queue. */
  outage: OutageGuard;
  /** WAIT for a replica after the writes that must survive a failover (records, reservations). */
  replicas: ReplicaAck;
  flowSettings: FlowSettings;
  enqueue(spec: SnapshotSpec, opts?: { retry?: boolean }): Promise<EnqueueOutcome>;
  close(): Promise<void>;
}

export function keepJobs(k: { age_seconds: number; count: number }): KeepJobs {
  return { age: k.age_seconds, count: k.count };
}

export interface OpenPipelineOptions {
  /** Timestamps of snapshot records and quota waits. @defaultValue systemClock */
  clock?: Clock;
}

export async function openPipeline(
  config: Config,
  logger: Logger,
  opts: OpenPipelineOptions = {},
): Promise<PipelineContext> {
  const clock = opts.clock ?? systemClock;
  const redis = await connectRedis(config, logger);
  const names = queueNames(config.queue.name);
  const queueOpts = {
    connection: redis,
    prefix: config.redis.prefix,
    // Bounded events stream: BullMQ stores maxLen in the queue's meta, so workers trim with it too.
    streams: { events: { maxLen: config.retention.events_max_len } },
  };
  const partsQueue = new Queue(names.parts, queueOpts);
  const snapshotsQueue = new Queue(names.snapshots, queueOpts);
  const flows = new FlowProducer({ connection: redis, prefix: config.redis.prefix });
  const { store, outage, replicas } = recordsOn(redis, config, clock);
  const flowSettings: FlowSettings = {
    queues: names,
    attempts: config.retry.attempts,
    controlBackoffMs: config.retry.base_delay_ms,
    keepCompleted: keepJobs(config.retention.completed_jobs),
    keepFailed: keepJobs(config.retention.failed_jobs),
  };
  const ctx: PipelineContext = {
    config,
    logger,
    redis,
    names,
    partsQueue,
    snapshotsQueue,
    flows,
    store,
    outage,
    replicas,
    flowSettings,
    async enqueue(spec, opts) {
      // An outage that outlasted the limit failed its parts; a new enqueue (--retry, the next
      // night) probes the API afresh.
      if (await outage.clearIfExpired()) logger.info('previous API outage expired; probing afresh');
      return enqueueSnapshot(
        { store, flows, partsQueue, snapshotsQueue, settings: flowSettings, logger },
        spec,
        opts,
      );
    },
    async close() {
      await Promise.allSettled([partsQueue.close(), snapshotsQueue.close(), flows.close()]);
      await redis.quit().catch(() => redis.disconnect());
    },
  };
  return ctx;
}
