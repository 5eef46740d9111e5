/**
 * Private replicated Redis topologies on free loopback ports, for the tests and the bench: a
 * 3-primary/3-replica Redis Cluster and a primary with 2 replicas behind 3 Sentinels. Both keep AOF
 * on (as managed services do) and a 2 s failure detection, so a SIGKILLed primary is replaced by a
 * replica within seconds.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { startPrivateRedis, type PrivateRedis } from './redis-server.js';

const run = promisify(execFile);

/** Failure detection of both topologies: a primary silent this long is replaced. */
export const NODE_TIMEOUT_MS = 2000;

export interface PrivateCluster {
  /** `redis+cluster://` URL naming every node as a seed. */
  readonly url: string;
  readonly nodes: readonly PrivateRedis[];
  /** The node that is primary for `key`'s slot now. */
  primaryFor(key: string): Promise<PrivateRedis>;
  /** Waits until every live node says cluster_state:ok and the slot of `key` has a primary. */
  waitHealthy(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export interface PrivateSentinelGroup {
  /** `redis+sentinel://` URL naming the three Sentinels and the master. */
  readonly url: string;
  readonly masterName: string;
  readonly servers: readonly PrivateRedis[];
  readonly sentinels: readonly PrivateRedis[];
  /** The server the Sentinels name as master now. */
  primary(): Promise<PrivateRedis>;
  close(): Promise<void>;
}

/** Polls `check` until it holds; the error names what was awaited. */
export async function until(what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** One command on one node through a short-lived connection (no retries: a dead node fails). */
async function onNode<T>(port: number, f: (r: Redis) => Promise<T>, password?: string): Promise<T> {
  const r = new Redis({
    port,
    ...(password !== undefined ? { password } : {}),
    host: '127.0.0.1',
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  r.on('error', () => undefined);
  try {
    await r.connect();
    return await f(r);
  } finally {
    r.disconnect();
  }
}

async function closeAll(servers: readonly PrivateRedis[]): Promise<void> {
  await Promise.allSettled(servers.map((s) => s.close()));
}

/** Six nodes, `redis-cli --cluster create … --cluster-replicas 1`, then every replica in sync. */
export async function startPrivateCluster(): Promise<PrivateCluster> {
  const nodeArgs = ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf'];
  nodeArgs.push('--cluster-node-timeout', String(NODE_TIMEOUT_MS), '--appendonly', 'yes');
  // A replica that was frozen a while (the lost-writes test) may still take over: which writes it
  // lacks is what that test is about.
  nodeArgs.push('--cluster-replica-validity-factor', '0');
  const nodes = await Promise.all(
    Array.from({ length: 6 }, () => startPrivateRedis({ extraArgs: nodeArgs })),
  );
  const addresses = nodes.map((n) => `127.0.0.1:${n.port}`);
  const alive = (n: PrivateRedis): Promise<boolean> =>
    onNode(n.port, async (r) => (await r.ping()) === 'PONG');
  try {
    await run('redis-cli', ['--cluster', 'create', ...addresses, '--cluster-replicas', '1', '--cluster-yes']);
    const cluster: PrivateCluster = {
      url: `redis+cluster://${addresses.join(',')}`,
      nodes,
      async primaryFor(key) {
        for (const n of nodes) {
          if (!(await alive(n).catch(() => false))) continue;
          const port = await onNode(n.port, async (r) => slotOwner(r, key));
          const owner = nodes.find((m) => m.port === port);
          if (owner !== undefined) return owner;
        }
        throw new Error(`no live node of the cluster names a primary for ${key}`);
      },
      async waitHealthy(timeoutMs = 60_000) {
        await until(
          'cluster_state:ok on every live node with replicas in sync',
          async () => {
            for (const n of nodes) {
              if (!(await alive(n).catch(() => false))) continue;
              const info = await onNode(n.port, (r) => r.cluster('INFO'));
              if (!String(info).includes('cluster_state:ok')) return false;
              const repl = await onNode(n.port, (r) => r.info('replication'));
              if (repl.includes('role:slave') && !repl.includes('master_link_status:up')) return false;
            }
            return true;
          },
          timeoutMs,
        );
      },
      close: () => closeAll(nodes),
    };
    await cluster.waitHealthy();
    return cluster;
  } catch (err: unknown) {
    await closeAll(nodes);
    throw err;
  }
}

/** The port of the primary serving `key`'s slot, from CLUSTER SLOTS. */
async function slotOwner(r: Redis, key: string): Promise<number> {
  const slot = Number(await r.cluster('KEYSLOT', key));
  const ranges = await r.cluster('SLOTS');
  const range = ranges.find(([from, to]) => slot >= from && slot <= to);
  const port = range?.[2]?.[1];
  if (port === undefined) throw new Error(`slot ${slot} has no primary`);
  return port;
}

/**
 * A primary, two replicas of it and three Sentinels watching it under `masterName`; with
 * `sentinelPassword` the Sentinels require it (`requirepass`) and use it with each other.
 */
export async function startPrivateSentinelGroup(
  masterName = 'fxprimary',
  opts: { sentinelPassword?: string } = {},
): Promise<PrivateSentinelGroup> {
  const pw = opts.sentinelPassword;
  const primary = await startPrivateRedis({ extraArgs: ['--appendonly', 'yes'] });
  const servers: PrivateRedis[] = [primary];
  const sentinels: PrivateRedis[] = [];
  try {
    const replicaArgs = ['--appendonly', 'yes', '--replicaof', '127.0.0.1', String(primary.port)];
    servers.push(...(await Promise.all([0, 1].map(() => startPrivateRedis({ extraArgs: replicaArgs })))));
    await until('both replicas in sync', async () =>
      (await onNode(primary.port, (r) => r.info('replication'))).includes('connected_slaves:2'),
    );
    const conf = [
      `sentinel monitor ${masterName} 127.0.0.1 ${primary.port} 2`,
      `sentinel down-after-milliseconds ${masterName} ${NODE_TIMEOUT_MS}`,
      `sentinel failover-timeout ${masterName} 10000`,
      `sentinel parallel-syncs ${masterName} 1`,
      ...(pw !== undefined ? [`requirepass ${pw}`, `sentinel sentinel-pass ${pw}`] : []),
      '',
    ].join('\n');
    const started = await Promise.all(
      [0, 1, 2].map(() =>
        startPrivateRedis({ configText: conf, extraArgs: ['--sentinel'], readyText: 'Sentinel ID is' }),
      ),
    );
    sentinels.push(...started);
    const group: PrivateSentinelGroup = {
      url: `redis+sentinel://${sentinels.map((s) => `127.0.0.1:${s.port}`).join(',')}/${masterName}${pw !== undefined ? `?sentinel_password=${encodeURIComponent(pw)}` : ''}`,
      masterName,
      servers,
      sentinels,
      async primary() {
        for (const s of sentinels) {
          const addr = await onNode(
            s.port,
            (r) => r.call('SENTINEL', 'get-master-addr-by-name', masterName),
            pw,
          ).catch(() => null);
          const port = Array.isArray(addr) ? Number(addr[1]) : NaN;
          const server = servers.find((m) => m.port === port);
          if (server !== undefined) return server;
        }
        throw new Error(`no Sentinel names a master for ${masterName}`);
      },
      close: () => closeAll([...sentinels, ...servers]),
    };
    // Each Sentinel must know the replicas and the other Sentinels before it can fail over.
    await until('every Sentinel sees 2 replicas and 2 other Sentinels', async () => {
      for (const s of sentinels) {
        const m = (await onNode(s.port, (r) => r.call('SENTINEL', 'MASTER', masterName), pw)) as string[];
        const field = (k: string): number => Number(m[m.indexOf(k) + 1]);
        if (field('num-slaves') < 2 || field('num-other-sentinels') < 2) return false;
      }
      return true;
    });
    return group;
  } catch (err: unknown) {
    await closeAll([...sentinels, ...servers]);
    throw err;
  }
}
