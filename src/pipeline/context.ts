/**
 * The pipeline's Redis-side resources, built once from the config: one ioredis connection, the two
 * queues, the flow producer and the snapshot store. Every command (run, worker, status, schedule)
 * opens one and closes it in `finally`.
 */
import { FlowProducer, Queue, type KeepJobs } from 'bullmq';
import { Redis } from 'ioredis';
import { toBudgetConfig, type BudgetConfig } from '../budget/index.js';
import type { Config } from '../config/load.js';
import { InfraError, coerceError } from '../errors.js';
import type { Logger } from '../log.js';
import { systemClock, type Clock } from '../types.js';
import {
  enqueueSnapshot,
  queueNames,
  type EnqueueOutcome,
  type FlowSettings,
  type QueueNames,
} from './queue/index.js';
import { OutageGuard } from './part/index.js';
import { SnapshotStore, type SnapshotSpec } from './record/index.js';

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
  flowSettings: FlowSettings;
  enqueue(spec: SnapshotSpec, opts?: { retry?: boolean }): Promise<EnqueueOutcome>;
  close(): Promise<void>;
}

export function keepJobs(k: { age_seconds: number; count: number }): KeepJobs {
  return { age: k.age_seconds, count: k.count };
}

/** The budget section of the config in the budget module's terms (validated once, at load). */
export function budgetConfigFrom(config: Config): BudgetConfig {
  return toBudgetConfig(config.budget);
}

/**
 * Redis key prefix of the budget. Per Redis prefix, not per queue: every exporter using the same
 * key against the same Redis shares one budget (the key's fingerprint is part of each budget key).
 */
export function budgetPrefix(config: Config): string {
  return `${config.redis.prefix}:budget`;
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
  const redis = new Redis(config.redis.url, {
    maxRetriesPerRequest: null, // BullMQ requirement: commands wait for a reconnect instead of failing
    lazyConnect: true,
  });
  // Without a listener ioredis prints "Unhandled error event" with a stack trace for every failed
  // connection attempt; the first one is reported below as one line, later ones are logged.
  let firstError: Error | undefined;
  const onError = (err: Error): void => {
    if (firstError === undefined) firstError = err;
    else logger.warn({ err: err.message, redis: redactUrl(config.redis.url) }, 'Redis connection error');
  };
  redis.on('error', onError);
  try {
    await redis.connect();
  } catch (err: unknown) {
    redis.disconnect();
    const reason = firstError?.message ?? coerceError(err).message;
    throw new InfraError(
      'REDIS_UNAVAILABLE',
      `cannot connect to Redis at ${redactUrl(config.redis.url)}: ${reason} (set REDIS_URL or redis.url)`,
    );
  }
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
  const store = new SnapshotStore(redis, {
    prefix: config.redis.prefix,
    queueBase: config.queue.name,
    recordTtlSeconds: config.retention.snapshot_record_days * 86_400,
    now: () => clock.now(),
  });
  const outage = new OutageGuard(
    redis,
    `${config.redis.prefix}:${config.queue.name}:outage`,
    {
      failuresToHold: config.retry.outage_after_failures,
      probeBaseMs: config.retry.outage_probe_base_ms,
      probeMaxMs: config.retry.outage_probe_max_ms,
      maxOutageMs: config.retry.outage_max_ms,
    },
    clock,
  );
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

/** A Redis URL without its password, for messages. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = 'redacted';
    return u.toString();
  } catch {
    return '<invalid url>';
  }
}
