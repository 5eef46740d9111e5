/**
 * The pipeline's records in Redis without its queues: the connection, the snapshot store and the
 * outage guard, built from the config. `openPipeline` adds the queues and the flow producer on top;
 * `status` opens only this, so it never loads BullMQ (about a third of its start on a busy machine).
 */
import type { Redis } from 'ioredis';
import type { Config } from '../../config/load.js';
import { openRedis } from '../../infra/redis-connection.js';
import { replicaAck, type ReplicaAck } from '../../infra/replica-ack.js';
import type { Logger } from '../../log.js';
import { systemClock, type Clock } from '../../types.js';
import { OutageGuard } from './outage.js';
import { SnapshotStore } from './snapshot-store.js';

/** What `status` reads: the snapshot records, the outage state, and the key's budget via `redis`. */
export interface PipelineRecords {
  config: Config;
  /** Shared non-blocking connection. */
  redis: Redis;
  store: SnapshotStore;
  /** API outages, shared by every worker of the queue. */
  outage: OutageGuard;
  /** WAIT for a replica after the writes that must survive a failover (records, reservations). */
  replicas: ReplicaAck;
}

/**
 * Connects to `redis.url` (one server, a cluster or Sentinel) with its start-up checks; a failure
 * is one InfraError line naming the (redacted) URL and the node or setting.
 */
export async function connectRedis(config: Config, logger: Logger): Promise<Redis> {
  const redis = await openRedis({ url: config.redis.url, target: config.redis.target, logger });
  if (config.redis.prefixNote !== null) logger.info(config.redis.prefixNote);
  return redis;
}

/** The snapshot store and outage guard of the config's queue on `redis`. */
export function recordsOn(
  redis: Redis,
  config: Config,
  clock: Clock = systemClock,
): Omit<PipelineRecords, 'config' | 'redis'> {
  const replicas = replicaAck(redis);
  const store = new SnapshotStore(redis, {
    prefix: config.redis.prefix,
    queueBase: config.queue.name,
    recordTtlSeconds: config.retention.snapshot_record_days * 86_400,
    now: () => clock.now(),
    confirmWrite: (key) => replicas.confirm(key),
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
  return { store, outage, replicas };
}

/** Opens the records alone (for `status`); close() quits the connection. */
export async function openRecords(
  config: Config,
  logger: Logger,
): Promise<PipelineRecords & { close(): Promise<void> }> {
  const redis = await connectRedis(config, logger);
  return {
    config,
    redis,
    ...recordsOn(redis, config),
    async close() {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}

/** A Redis URL of any form without its password, for messages. */
export { redactUrl } from '../../config/redis-url.js';
export type { ReplicaAck } from '../../infra/replica-ack.js';
