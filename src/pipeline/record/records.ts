/**
 * The pipeline's records in Redis without its queues: the connection, the snapshot store and the
 * outage guard, built from the config. `openPipeline` adds the queues and the flow producer on top;
 * `status` opens only this, so it never loads BullMQ (about a third of its start on a busy machine).
 */
import { Redis } from 'ioredis';
import type { Config } from '../../config/load.js';
import { InfraError, coerceError } from '../../errors.js';
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
}

/** Connects to `redis.url`; a failure is one InfraError line naming the (redacted) URL. */
export async function connectRedis(config: Config, logger: Logger): Promise<Redis> {
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
  return redis;
}

/** The snapshot store and outage guard of the config's queue on `redis`. */
export function recordsOn(
  redis: Redis,
  config: Config,
  clock: Clock = systemClock,
): Omit<PipelineRecords, 'config' | 'redis'> {
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
  return { store, outage };
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
