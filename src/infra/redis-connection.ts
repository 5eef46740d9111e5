/**
 * The one place the product opens Redis: a single server, a Redis Cluster (ioredis `Cluster`) or a
 * primary behind Sentinel, from the parsed `redis.url` (src/config/redis-url.ts). Every command,
 * worker, the scheduler, the dashboard and `status` connect here; BullMQ duplicates this
 * connection for its blocking ones. The start-up checks live here too: nodes that cannot be
 * reached, a master name no Sentinel knows, and an eviction policy that would drop jobs.
 */
import { createConnection } from 'node:net';
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import { redactUrl, type RedisNode, type RedisTarget } from '../config/redis-url.js';
import { InfraError, coerceError } from '../errors.js';
import type { Logger } from '../log.js';

/** Options every connection gets: BullMQ's requirement (commands wait for a reconnect). */
const BASE: RedisOptions = { maxRetriesPerRequest: null, lazyConnect: true };

/** How long a reconnect waits after a failure once started (a failover takes seconds). */
const RECONNECT_MS = (times: number): number => Math.min(100 * times, 2000);

/** How long a cluster command keeps retrying through a failover before it fails. */
const FAILOVER_RIDE_MS = 60_000;

export interface RedisConnectionOptions {
  url: string;
  target: RedisTarget;
  logger: Logger;
}

/** What went wrong while connecting, per node, for the one-line message. */
interface ConnectTrouble {
  first?: Error;
  nodes: Map<string, string>;
}

/**
 * Connects and runs the start-up checks; a failure is one InfraError line naming the (redacted)
 * URL and the node or setting. The client is typed `Redis`: ioredis's `Cluster` carries the same
 * commands, and the few per-node calls go through `dataNodes`.
 */
export async function openRedis(opts: RedisConnectionOptions): Promise<Redis> {
  const trouble: ConnectTrouble = { nodes: new Map() };
  let started = false;
  const client = createClient(opts.target, () => started);
  const where = describeTarget(opts);
  client.on('error', (err: Error) => {
    if (!started) trouble.first ??= err;
    else opts.logger.warn({ err: err.message, redis: redactUrl(opts.url) }, 'Redis connection error');
  });
  client.on('node error', (err: Error, address: string) => trouble.nodes.set(address, err.message));
  client.on('sentinelError', (err: Error) => recordSentinelError(trouble, err));
  try {
    await client.connect();
  } catch (err: unknown) {
    client.disconnect();
    throw new InfraError(
      'REDIS_UNAVAILABLE',
      `cannot connect to ${where}: ${await connectReason(opts.target, trouble, err)} (set REDIS_URL or redis.url)`,
    );
  }
  started = true;
  try {
    await checkEvictionPolicy(client as Redis, where);
  } catch (err: unknown) {
    client.disconnect();
    throw err;
  }
  return client as Redis;
}

/** How often a cluster client re-reads the slots (one CLUSTER SLOTS): an idle one's failover delay. */
export const SLOTS_REFRESH_MS = 5000;

function createClient(target: RedisTarget, started: () => boolean): Redis | Cluster {
  // Before the first connection a failure ends the attempt (one clear line); after it, the client
  // reconnects for ever, as a failover needs.
  const retry = (times: number): number | null => (started() ? RECONNECT_MS(times) : null);
  switch (target.kind) {
    case 'single':
      return new Redis(target.url, BASE);
    case 'cluster': {
      const auth = { username: target.username, password: target.password };
      const options: ClusterOptions = {
        lazyConnect: true,
        clusterRetryStrategy: retry,
        // A failover (the primary silent for the node timeout, then an election) answers CLUSTERDOWN,
        // MOVED or a closed connection for seconds; ioredis's default gives up after 16 tries 100 ms
        // apart. Ride through a minute of it instead: commands wait, as BullMQ's do on one server.
        maxRedirections: FAILOVER_RIDE_MS / 300,
        retryDelayOnClusterDown: 300,
        retryDelayOnFailover: 300,
        retryDelayOnTryAgain: 300,
        // A client that sends nothing learns of a failover only from a refresh: ioredis's default
        // (none) leaves an idle one pointed at a dead primary until a command fails. (An idle BullMQ
        // worker can still wedge in that window: src/pipeline/fetch-watchdog.ts replaces it.)
        slotsRefreshInterval: SLOTS_REFRESH_MS,
        redisOptions: { ...auth, maxRetriesPerRequest: null, ...(target.tls ? { tls: {} } : {}) },
        // Managed clusters with TLS (ElastiCache) announce IPs their certificates do not name:
        // connect by the announced name as ioredis's README advises.
        ...(target.tls ? { dnsLookup: (address, callback) => callback(null, address) } : {}),
      };
      return new Cluster(target.nodes, options);
    }
    case 'sentinel':
      return new Redis({
        ...BASE,
        sentinels: target.sentinels,
        name: target.masterName,
        username: target.username,
        password: target.password,
        ...(target.sentinelPassword !== undefined ? { sentinelPassword: target.sentinelPassword } : {}),
        sentinelRetryStrategy: retry,
        ...(target.tls ? { tls: {}, enableTLSForSentinelMode: true } : {}),
      });
    default: {
      const never: never = target;
      throw new Error(`unknown Redis target ${JSON.stringify(never)}`);
    }
  }
}

function describeTarget(opts: RedisConnectionOptions): string {
  const url = redactUrl(opts.url);
  switch (opts.target.kind) {
    case 'single':
      return `Redis at ${url}`;
    case 'cluster':
      return `the Redis Cluster at ${url}`;
    case 'sentinel':
      return `Redis master "${opts.target.masterName}" through the Sentinels at ${url}`;
    default: {
      const never: never = opts.target;
      return String(never);
    }
  }
}

const SENTINEL_UNREACHABLE = /^failed to connect to sentinel (\S+) because (.*)$/;
const UNKNOWN_MASTER = 'unknown master';
const SENTINEL_UNKNOWN = /^connected to sentinel (\S+) successfully, but got an invalid reply/;

function recordSentinelError(trouble: ConnectTrouble, err: Error): void {
  const down = SENTINEL_UNREACHABLE.exec(err.message);
  const why = down?.[2] ?? 'unreachable';
  if (down?.[1] !== undefined) trouble.nodes.set(down[1], /No such master/i.test(why) ? UNKNOWN_MASTER : why);
  const unknown = SENTINEL_UNKNOWN.exec(err.message);
  if (unknown?.[1] !== undefined) trouble.nodes.set(unknown[1], UNKNOWN_MASTER);
}

/** The reason of a failed connect in words: which nodes failed and how. */
async function connectReason(target: RedisTarget, trouble: ConnectTrouble, err: unknown): Promise<string> {
  const fallback = trouble.first?.message ?? coerceError(err).message;
  if (target.kind === 'single') return fallback;
  const seeds = target.kind === 'cluster' ? target.nodes : target.sentinels;
  const what = target.kind === 'cluster' ? 'seed node' : 'Sentinel';
  const failed = await Promise.all(
    seeds.map(async (n) => {
      const why = trouble.nodes.get(addressOf(n));
      // ioredis reports a refused seed as "Connection is closed."; a bare connect says why.
      return [addressOf(n), why === undefined || why === UNKNOWN_MASTER ? why : await probe(n, why)] as const;
    }),
  );
  if (target.kind === 'sentinel' && failed.every(([, why]) => why === UNKNOWN_MASTER))
    return `no Sentinel monitors a master named "${target.masterName}" (check the name after the last "/" of the URL; SENTINEL MASTERS lists them)`;
  const named = failed.filter(([, why]) => why !== undefined).map(([a, why]) => `${a} (${why})`);
  if (named.length === 0) return fallback;
  const all = named.length === seeds.length ? 'no' : `${seeds.length - named.length} of ${seeds.length}`;
  return `${all} ${what}${all === 'no' ? '' : 's'} answered: ${named.join(', ')}`;
}

/** Why a TCP connection to `n` fails (ECONNREFUSED, a timeout), or `otherwise` when it does not. */
async function probe(n: RedisNode, otherwise: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: n.host, port: n.port, timeout: 2000 });
    const done = (why: string): void => {
      socket.destroy();
      resolve(why);
    };
    socket.once('connect', () => done(otherwise));
    socket.once('timeout', () => done('no answer within 2 s'));
    socket.once('error', (e: NodeJS.ErrnoException) => done(`connect ${e.code ?? e.message}`));
  });
}

function addressOf(n: RedisNode): string {
  return `${n.host}:${n.port}`;
}

/**
 * The nodes that hold data: the server, the master Sentinel named, or every cluster primary.
 * Per-node commands (INFO, CLIENT LIST, WAIT's view) go to these.
 */
export function dataNodes(redis: Redis): Redis[] {
  const cluster = redis as unknown as Partial<Cluster>;
  if (cluster.isCluster === true && typeof cluster.nodes === 'function') return cluster.nodes('master');
  return [redis];
}

/**
 * BullMQ's jobs and our records have no TTL while they matter: a node that evicts keys under
 * memory pressure loses jobs silently. INFO, not CONFIG GET: managed services block CONFIG.
 */
async function checkEvictionPolicy(redis: Redis, where: string): Promise<void> {
  for (const node of dataNodes(redis)) {
    const info = await node.info('memory');
    const policy = /^maxmemory_policy:(\S+)/m.exec(info)?.[1];
    if (policy === undefined || policy === 'noeviction') continue;
    const name = `${node.options.host ?? '?'}:${String(node.options.port ?? '?')}`;
    throw new InfraError(
      'REDIS_UNAVAILABLE',
      `${where}: node ${name} has maxmemory-policy ${policy}, which evicts queued jobs under memory pressure; set maxmemory-policy noeviction (a parameter group on ElastiCache, the instance's configuration on Memorystore)`,
    );
  }
}
