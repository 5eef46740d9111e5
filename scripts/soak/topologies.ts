/**
 * The Redis a soak trial runs on: the single redis-server with AOF (restartable on its port and
 * data, for the restart fault), or a private 3+3 Redis Cluster or primary + 2 replicas + 3
 * Sentinels (src/infra/redis-topologies.ts, for the failover faults). Each gives the URL and the
 * prefix the workers and the store use, and stops every server it started on close().
 */
import { spawnSync } from 'node:child_process';
import { prefixFor, type RedisTopology } from '../../src/config/redis-url.js';
import { freePort } from '../../src/infra/redis-server.js';
import { startPrivateCluster, startPrivateSentinelGroup, until } from '../../src/infra/redis-topologies.js';
import { managed } from './processes.js';

/** The topologies a fault can ask for (the product's own): `single` is the default. */
export type SoakTopology = RedisTopology;

/** How long a failover may take: the 2 s failure detection, the election, the slower machines. */
const PROMOTION_TIMEOUT_MS = 60_000;

export interface SoakRedis {
  readonly topology: SoakTopology;
  /** REDIS_URL for the workers, `run` and the store. */
  readonly url: string;
  /** The key prefix: on a cluster it carries a hash tag, as the product derives it. */
  readonly prefix: string;
  /** SIGTERMs the server and starts it again on its port and data (AOF) `pauseMs` later. */
  restart(pauseMs: number): Promise<void>;
  /**
   * SIGKILLs the primary holding the queue's slot and waits until a replica is promoted in its
   * place; resolves with one line naming both.
   */
  failover(): Promise<string>;
  close(): Promise<void>;
}

/** Starts `topology` for a trial; `base` is the prefix before any hash tag. */
export async function startSoakRedis(
  topology: SoakTopology,
  base: string,
  dirs: { dir: string; logDir: string },
): Promise<SoakRedis> {
  // The prefix the product would use on this topology: a cluster's gets a hash tag.
  const chosen = prefixFor(topology, base, false);
  if (typeof chosen === 'string') throw new Error(chosen);
  switch (topology) {
    case 'single':
      return startSingle(chosen.prefix, dirs);
    case 'cluster':
      return startCluster(chosen.prefix);
    case 'sentinel':
      return startSentinel(chosen.prefix);
    default: {
      const never: never = topology;
      throw new Error(`unknown soak topology ${String(never)}`);
    }
  }
}

function notHere(topology: SoakTopology, what: string): () => Promise<never> {
  return () => Promise.reject(new Error(`${what} is not a fault of the ${topology} topology`));
}

async function startSingle(prefix: string, dirs: { dir: string; logDir: string }): Promise<SoakRedis> {
  const port = await freePort();
  const server = managed(
    'redis',
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--dir', dirs.dir, '--appendonly', 'yes', '--save', ''],
    {
      env: process.env,
      cwd: dirs.dir,
      logDir: dirs.logDir,
      ready: async () =>
        spawnSync('redis-cli', ['-p', String(port), 'ping'])
          .stdout?.toString()
          .trim() === 'PONG',
    },
  );
  await server.start().catch(async (err: unknown) => {
    // Started but never ready: stop it before the trial reports why.
    await server.stop('SIGKILL');
    throw err;
  });
  return {
    topology: 'single',
    url: `redis://127.0.0.1:${port}`,
    prefix,
    async restart(pauseMs) {
      await server.stop('SIGTERM');
      await new Promise((r) => setTimeout(r, pauseMs));
      await server.start();
    },
    failover: notHere('single', 'a failover (no replica to promote)'),
    close: () => server.stop('SIGTERM', 5000),
  };
}

/** A primary SIGKILLed, then `primaryNow` polled until it names another server. */
async function killAndAwaitPromotion(
  victim: { port: number; pid: number | undefined },
  primaryNow: () => Promise<{ port: number }>,
): Promise<string> {
  const killedAt = Date.now();
  process.kill(victim.pid ?? 0, 'SIGKILL');
  let promoted = victim.port;
  await until(
    `a replica promoted in place of 127.0.0.1:${victim.port}`,
    async () => {
      promoted = (await primaryNow()).port;
      return promoted !== victim.port;
    },
    PROMOTION_TIMEOUT_MS,
  );
  const s = ((Date.now() - killedAt) / 1000).toFixed(1);
  return `primary 127.0.0.1:${victim.port} SIGKILLed, 127.0.0.1:${promoted} promoted ${s} s later`;
}

async function startCluster(prefix: string): Promise<SoakRedis> {
  const cluster = await startPrivateCluster();
  // Every key of the queue hashes by the prefix's tag: any key under it names the slot.
  const slotKey = `${prefix}:x`;
  return {
    topology: 'cluster',
    url: cluster.url,
    prefix,
    restart: notHere('cluster', 'a restart'),
    failover: async () =>
      killAndAwaitPromotion(await cluster.primaryFor(slotKey), () => cluster.primaryFor(slotKey)),
    close: () => cluster.close(),
  };
}

async function startSentinel(prefix: string): Promise<SoakRedis> {
  const group = await startPrivateSentinelGroup();
  return {
    topology: 'sentinel',
    url: group.url,
    prefix,
    restart: notHere('sentinel', 'a restart'),
    failover: async () => killAndAwaitPromotion(await group.primary(), () => group.primary()),
    close: () => group.close(),
  };
}
