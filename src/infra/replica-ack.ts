/**
 * `WAIT 1 timeout` after a write that must survive a failover (a budget reservation, a part's
 * record): replication is asynchronous, so a primary killed right after acknowledging a write can
 * hand its slot to a replica that never saw it. Where the data node has no replica at all (a
 * single Redis), nothing is waited for and nothing is sent: the check costs one INFO per process.
 */
import type { Cluster, Redis } from 'ioredis';
import { coerceError } from '../errors.js';
import type { Logger } from '../log.js';
import { dataNodes } from './redis-connection.js';

/** How long a write waits for a replica before the caller treats it as not yet safe. */
export const REPLICA_ACK_TIMEOUT_MS = 1000;

export interface ReplicaAck {
  /**
   * True once a replica of the node holding `key` has every write this connection made so far, or
   * when that node has no connected replica (no failover can lose it to one); false when
   * replicas exist and none acknowledged within the timeout.
   */
  confirm(key: string): Promise<boolean>;
}

/** Confirms at once: for readers (`status`) and for tests of one server. */
export const NO_REPLICA_ACK: ReplicaAck = { confirm: () => Promise.resolve(true) };

export interface ReplicaAckOptions {
  /** @defaultValue REPLICA_ACK_TIMEOUT_MS */
  timeoutMs?: number;
  logger?: Logger;
  /** @defaultValue Date.now */
  now?: () => number;
}

/** Connected replicas in an `INFO replication` answer. */
function connectedReplicas(info: string): number {
  return Number(/^connected_slaves:(\d+)/m.exec(info)?.[1] ?? 0);
}

/**
 * WAIT acknowledges the writes of the connection it is sent on. On a cluster a keyless command goes
 * to any node, so it rides a pipeline behind a command on `key`: ioredis sends the pipeline to the
 * slot's primary over the connection that carried the write.
 */
async function onKeyNode<T>(
  redis: Redis,
  key: string,
  send: (p: ReturnType<Redis['pipeline']>) => void,
): Promise<T> {
  const pipeline = redis.pipeline().exists(key);
  send(pipeline);
  const answers = (await pipeline.exec()) ?? [];
  const [err, value] = answers[1] ?? [new Error('no answer'), undefined];
  if (err) throw err;
  return value as T;
}

/** How long a primary found without replicas is written to without WAIT before it is asked again. */
const NO_REPLICA_RECHECK_MS = 10_000;

export function replicaAck(redis: Redis | Cluster, opts: ReplicaAckOptions = {}): ReplicaAck {
  const client = redis as Redis;
  const timeoutMs = opts.timeoutMs ?? REPLICA_ACK_TIMEOUT_MS;
  const now = opts.now ?? Date.now;
  let replicated: Promise<boolean> | undefined;
  let skipUntil = 0;
  const anyReplica = async (): Promise<boolean> => {
    const infos = await Promise.all(dataNodes(client).map((n) => n.info('replication')));
    return infos.some((i) => connectedReplicas(i) > 0);
  };
  const waitForOne = async (key: string): Promise<boolean> => {
    const acks = await onKeyNode<number>(client, key, (p) => p.wait(1, timeoutMs));
    if (acks >= 1) return true;
    // No ack: a replica is behind, or the node has none left to fail over to (a primary promoted
    // in a failover, its old one dead): then nothing waits for a while.
    const left = connectedReplicas(await onKeyNode<string>(client, key, (p) => p.info('replication')));
    if (left === 0) {
      skipUntil = now() + NO_REPLICA_RECHECK_MS;
      return true;
    }
    opts.logger?.warn(
      { key, replicas: left, timeoutMs },
      `no replica acknowledged a write within ${timeoutMs} ms; treating it as not yet safe`,
    );
    return false;
  };
  return {
    async confirm(key) {
      replicated ??= anyReplica().catch((err: unknown) => {
        replicated = undefined;
        throw coerceError(err);
      });
      if (!(await replicated) || now() < skipUntil) return true;
      // A pipeline sent to a primary that just died may wait for it for ever: not confirmed.
      return withDeadline(waitForOne(key), 2 * timeoutMs + 1000, false);
    },
  };
}

function withDeadline<T>(work: Promise<T>, ms: number, otherwise: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(otherwise), ms);
  });
  return Promise.race([work.catch(() => otherwise), late]).finally(() => clearTimeout(timer));
}
