/**
 * Whether any worker consumes a queue, read from Redis's CLIENT LIST the way BullMQ's
 * Queue#getWorkers does, without loading BullMQ (`status` never does), and the one line `run --wait`
 * and `status` print when a running snapshot has no worker on its parts queue.
 *
 * What this detects is a connection: a worker process that is frozen (SIGSTOP, a blocked event
 * loop) keeps its connection and counts as connected; BullMQ hands its parts to another worker
 * once their locks expire (worker.lock_duration_ms).
 */
import type { Redis } from 'ioredis';
import type { Config } from '../../config/load.js';
import { dataNodes } from '../../infra/redis-connection.js';
import type { SnapshotView } from './snapshot-states.js';
import { isActive, totals } from './snapshot-states.js';

/**
 * BullMQ names each worker's blocking connection `<prefix>:<base64 of the queue name>`, followed by
 * `:w:<worker name>` when the worker has a name (bullmq's QueueGetters#getWorkers).
 */
function workerClientName(prefix: string, queueName: string): string {
  return `${prefix}:${Buffer.from(queueName).toString('base64')}`;
}

/**
 * How many BullMQ workers are connected to `queueName` now, over every process and machine. On a
 * cluster each worker blocks on the primary holding the queue's slot and may touch others: the
 * busiest primary's count is the answer.
 */
export async function connectedWorkers(redis: Redis, prefix: string, queueName: string): Promise<number> {
  const counts = await Promise.all(
    dataNodes(redis).map(async (node) => countNamed(String(await node.client('LIST')), prefix, queueName)),
  );
  return Math.max(0, ...counts);
}

function countNamed(list: string, prefix: string, queueName: string): number {
  const name = workerClientName(prefix, queueName);
  let n = 0;
  for (const line of list.split(/\r?\n/)) {
    const client = / name=(\S*)/.exec(` ${line}`)?.[1];
    if (client !== undefined && (client === name || client.startsWith(`${name}:w:`))) n++;
  }
  return n;
}

export interface NoWorkerInput {
  record: Pick<SnapshotView, 'state' | 'updatedAtMs' | 'progress'>;
  /** Workers connected to the parts queue now (connectedWorkers). */
  workers: number;
  nowMs: number;
  /** queue.no_worker_after_ms: how long nothing may move, with no worker, before it is said. */
  afterMs: number;
  /** The parts queue's full name, as Redis knows it (`<prefix>:<queue>-parts`). */
  queue: string;
}

/**
 * The line saying no worker consumes the parts queue, or null: only for a queued or running
 * snapshot with parts left, no worker connected, and no part ended for `afterMs` (a worker starting
 * beside `run` is not reported).
 */
export function noWorkerLine(i: NoWorkerInput): string | null {
  const { record } = i;
  if (!isActive(record.state)) return null;
  if (i.workers > 0 || totals(record).pending === 0) return null;
  const quietMs = i.nowMs - record.updatedAtMs;
  if (quietMs < i.afterMs) return null;
  return (
    `no worker is consuming the parts queue ${i.queue} (none connected; no part ended for ` +
    `${Math.round(quietMs / 1000)} s): start one with \`filings-export worker\` (same Redis and config), ` +
    `or run the snapshot with --local`
  );
}

/** The BullMQ queue of a queue base's parts (`<base>-parts`); the queue folder names the others. */
export function partsQueueName(base: string): string {
  return `${base}-parts`;
}

/**
 * The no-worker line of a snapshot's record, read now (`status`, `run --wait`, the page). CLIENT
 * LIST (a line per client of the whole Redis) is read only when the line would be said without a
 * worker: a snapshot that is moving costs no more than before.
 */
export async function noWorkerStatus(
  ctx: { redis: Redis; config: Pick<Config, 'redis' | 'queue'> },
  record: NoWorkerInput['record'],
  nowMs: number,
): Promise<string | null> {
  const queue = partsQueueName(ctx.config.queue.name);
  const input = { record, workers: 0, nowMs, afterMs: ctx.config.queue.no_worker_after_ms, queue };
  if (noWorkerLine(input) === null) return null;
  const workers = await connectedWorkers(ctx.redis, ctx.config.redis.prefix, queue);
  return noWorkerLine({ ...input, workers });
}
