/**
 * The exporter on replicated Redis: a 3-primary/3-replica Redis Cluster and a primary with two
 * replicas behind three Sentinels (src/infra/redis-topologies.ts, real redis-server processes).
 * On each, two `worker` processes and `run --wait` publish the API's exact rows, and do so again
 * when the primary holding the queue's slot is SIGKILLed a third of the way through: no worker
 * exits, and the quota spent equals the requests the API received.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StreamOperation } from '../../src/api/index.js';
import { datasetDefinition } from '../../src/datasets/index.js';
import {
  startPrivateCluster,
  startPrivateSentinelGroup,
  until,
  type PrivateCluster,
  type PrivateSentinelGroup,
} from '../../src/infra/redis-topologies.js';
import type { PrivateRedis } from '../../src/infra/redis-server.js';
import { REPLICA_ACK_TIMEOUT_MS } from '../../src/infra/replica-ack.js';
import { totals } from '../../src/pipeline/record/snapshot-states.js';
import type { DatasetName } from '../../src/types.js';
import { startPipelineHarness, type PipelineHarness } from '../helpers/pipeline.js';
import { CLI_BIN, spawnWorker, startCli, terminateAll, type SpawnedWorker } from '../helpers/processes.js';

/** How long one `run --wait` may take, failover included, before the test calls it hung. */
const RUN_LIMIT_MS = 150_000;
const TICKERS = ['WMT', 'AAPL', 'TSLA', 'NVDA', 'GOOGL', 'META'];
const DATASETS: DatasetName[] = ['facts_full', 'series_catalog'];

async function apiRows(h: PipelineHarness, dataset: DatasetName): Promise<number> {
  let n = 0;
  for (const ticker of TICKERS) {
    const res = await h.client.stream(
      datasetDefinition(dataset).operation as StreamOperation,
      { ticker } as never,
    );
    for await (const _row of res.rows) n++;
  }
  return n;
}

function lastJsonLine(stdout: string): Record<string, unknown> {
  const lines = stdout.trim().split('\n');
  return JSON.parse(lines[lines.length - 1] ?? 'null') as Record<string, unknown>;
}

interface Topology {
  url: string;
  /** Every redis-server of the topology (not the Sentinels). */
  nodes: readonly PrivateRedis[];
  /** The primary holding the queue's keys now. */
  primary(prefix: string): Promise<PrivateRedis>;
  /** What every server (and Sentinel) printed: why a failover did not come. */
  logs(): string;
  close(): Promise<void>;
}

/**
 * Two workers and `run --wait` over `h`; `midway` runs once a third of the parts are recorded.
 * Checks what every run must show: published, exact rows, both workers alive, quota = requests.
 */
async function exportAll(h: PipelineHarness, id: string, midway?: () => Promise<void>): Promise<void> {
  const env = { ...h.env, FILINGS_EXPORT_CONCURRENCY: '1' };
  const workers: SpawnedWorker[] = [0, 1].map(() =>
    spawnWorker(CLI_BIN, ['worker'], { env: { ...env, LOG_LEVEL: 'info' } }),
  );
  try {
    await Promise.all(workers.map((w) => w.ready));
    const sentBefore = (await h.stats()).total.requests;
    const usedBefore = (await h.budget.describe()).daily.used;
    const args = [
      'run',
      '--wait',
      '--tickers',
      TICKERS.join(','),
      '--datasets',
      DATASETS.join(','),
      '--snapshot-id',
      id,
    ];
    const run = startCli(CLI_BIN, args, env);
    const exited = new Promise<number | null>((resolve) => run.child.once('exit', (code) => resolve(code)));
    if (midway !== undefined) {
      const third = Math.ceil((TICKERS.length * DATASETS.length) / 3);
      await until(`${third} parts recorded`, async () => {
        const v = await h.ctx.store.view(id);
        return v !== undefined && totals(v).done >= third;
      });
      await midway();
    }
    const story = (): string => `${run.stderr()}\n${run.stdout()}\n${workers.map((w) => w.log()).join('\n')}`;
    // Bounded below the test's timeout, so a run that never ends fails with what it and the workers said.
    const code = await Promise.race([
      exited,
      new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), RUN_LIMIT_MS).unref()),
    ]);
    if (code === 'hung') {
      run.child.kill('SIGKILL');
      throw new Error(
        `run --wait did not end within ${RUN_LIMIT_MS} ms:\n${await queueStory(h, id)}\n${story()}`,
      );
    }
    expect(code, story()).toBe(0);
    // Every request the API received was reserved once against the quota, and only once.
    const sent = (await h.stats()).total.requests - sentBefore;
    expect((await h.budget.describe()).daily.used - usedBefore).toBe(sent);
    const result = lastJsonLine(run.stdout());
    expect(result).toMatchObject({ snapshot_id: id, status: 'published' });
    const rows = result.rows as Record<string, number>;
    for (const ds of DATASETS) expect(rows[ds], ds).toBe(await apiRows(h, ds));
    for (const w of workers) expect(w.child.exitCode, w.log()).toBeNull();
  } finally {
    await terminateAll(workers.map((w) => w.child));
  }
}

/** Where the snapshot's jobs and record stand: what a run that never ended was waiting for. */
async function queueStory(h: PipelineHarness, id: string): Promise<string> {
  const lines: string[] = [];
  for (const q of [h.ctx.partsQueue, h.ctx.snapshotsQueue]) {
    const counts = await q.getJobCounts().catch((e: unknown) => String(e));
    const paused = await q.isPaused().catch((e: unknown) => String(e));
    lines.push(`queue ${q.name}: paused ${String(paused)}, ${JSON.stringify(counts)}`);
    const jobs = await q.getJobs(['active', 'wait', 'delayed', 'waiting-children', 'prioritized']);
    for (const j of jobs) lines.push(`  ${j.id ?? '?'} ${await j.getState()} attempts ${j.attemptsMade}`);
  }
  const v = await h.ctx.store.view(id).catch(() => undefined);
  lines.push(`record: ${v ? `${v.state} ${JSON.stringify(totals(v))}` : 'none'}`);
  return lines.join('\n');
}

/** The servers replicating `primary` now, from its INFO replication. */
async function replicasOf(primary: PrivateRedis, nodes: readonly PrivateRedis[]): Promise<PrivateRedis[]> {
  const info = await onServer(primary, (r) => r.info('replication'));
  const ports = [...info.matchAll(/^slave\d+:ip=[^,]+,port=(\d+)/gm)].map((m) => Number(m[1]));
  return nodes.filter((n) => ports.includes(n.port));
}

async function onServer<T>(server: PrivateRedis, f: (r: Redis) => Promise<T>): Promise<T> {
  const r = new Redis({ port: server.port, host: '127.0.0.1', maxRetriesPerRequest: 0, lazyConnect: true });
  r.on('error', () => undefined);
  try {
    await r.connect();
    return await f(r);
  } finally {
    r.disconnect();
  }
}

/** The primary's replication offset, and the highest offset any of its replicas acknowledged. */
async function offsets(primary: PrivateRedis): Promise<{ primary: number; replicas: number }> {
  const info = await onServer(primary, (r) => r.info('replication'));
  const acked = [...info.matchAll(/^slave\d+:.*offset=(\d+)/gm)].map((m) => Number(m[1]));
  return { primary: Number(/^master_repl_offset:(\d+)/m.exec(info)?.[1]), replicas: Math.max(0, ...acked) };
}

/**
 * Writes the promoted replica really misses: every replica of the primary is frozen (SIGSTOP), so
 * the pipeline's writes stop reaching them and WAIT times out (reservations refunded, records
 * retried); once the primary is ahead of them by more than a WAIT timeout's worth, it is SIGKILLed
 * and the replicas resumed, and one of them, without those writes, takes over.
 */
async function loseWrites(topology: Topology, prefix: string): Promise<PrivateRedis> {
  const victim = await topology.primary(prefix);
  const replicas = await replicasOf(victim, topology.nodes);
  expect(replicas.length).toBeGreaterThan(0);
  for (const r of replicas) process.kill(r.pid ?? 0, 'SIGSTOP');
  try {
    const frozenAt = await offsets(victim);
    await until(
      'writes the frozen replicas lack',
      async () => (await offsets(victim)).primary > frozenAt.primary,
    );
    // Past a WAIT's timeout: some reservation or record was refused while the replicas were frozen.
    await new Promise((r) => setTimeout(r, 2 * REPLICA_ACK_TIMEOUT_MS));
    const before = await offsets(victim);
    expect(before.primary).toBeGreaterThan(before.replicas);
    process.kill(victim.pid ?? 0, 'SIGKILL');
  } finally {
    for (const r of replicas) process.kill(r.pid ?? 0, 'SIGCONT');
  }
  return victim;
}

/**
 * Waits for a replica to take over from `victim`, so a failover that never comes fails here, with
 * what the servers said, instead of as a run that waits out the test's timeout.
 */
async function promoted(topology: Topology, prefix: string, victim: PrivateRedis): Promise<void> {
  try {
    await until(
      `a replica promoted in place of the primary on port ${victim.port}`,
      async () => (await topology.primary(prefix)).port !== victim.port,
      90_000,
    );
  } catch (err: unknown) {
    throw new Error(`${(err as Error).message}\n${topology.logs()}`);
  }
}

/** A topology and a harness on it for the enclosing describe, started before its tests. */
function useTopology(start: () => Promise<Topology>): { topology: Topology; h: PipelineHarness } {
  const live = {} as { topology: Topology; h: PipelineHarness };
  beforeAll(async () => {
    live.topology = await start();
    live.h = await startPipelineHarness({ redisUrl: live.topology.url, emulator: { latencyMs: 200 } });
  }, 120_000);
  afterAll(async () => {
    await live.h?.close();
    await live.topology?.close();
  }, 60_000);
  return live;
}

function topologySuite(name: string, slug: string, start: () => Promise<Topology>): void {
  describe(`on ${name}`, () => {
    const live = useTopology(start);

    it('two workers and run --wait publish the API’s exact rows', async () => {
      await exportAll(live.h, `${slug}-plain`);
    }, 180_000);

    it('the primary holding the slot SIGKILLed a third of the way through: nothing lost, nothing twice', async () => {
      const { h, topology } = live;
      let victim: PrivateRedis | undefined;
      await exportAll(h, `${slug}-failover`, async () => {
        victim = await topology.primary(h.config.redis.prefix);
        process.kill(victim.pid ?? 0, 'SIGKILL');
        await promoted(topology, h.config.redis.prefix, victim);
      });
      // A replica took over: the run above rode through a real failover.
      expect((await topology.primary(h.config.redis.prefix)).port).not.toBe(victim?.port);
    }, 240_000);
  });

  // A topology of its own: the failover above leaves the slot's new primary without a replica.
  describe(`on ${name}, writes lost`, () => {
    const live = useTopology(start);

    it('replicas frozen, then the primary SIGKILLed: the promoted replica misses writes, and still nothing is lost or counted twice', async () => {
      const { h, topology } = live;
      let victim: PrivateRedis | undefined;
      await exportAll(h, `${slug}-lost-writes`, async () => {
        victim = await loseWrites(topology, h.config.redis.prefix);
        await promoted(topology, h.config.redis.prefix, victim);
      });
      expect((await topology.primary(h.config.redis.prefix)).port).not.toBe(victim?.port);
    }, 300_000);
  });
}

/** Each server's log under its port, the last lines only (the failover's story). */
function serverLogs(servers: readonly PrivateRedis[]): string {
  return servers.map((s) => `--- port ${s.port}:\n${s.log().split('\n').slice(-40).join('\n')}`).join('\n');
}

topologySuite('a Redis Cluster', 'cluster', async () => {
  const c: PrivateCluster = await startPrivateCluster();
  return {
    url: c.url,
    nodes: c.nodes,
    primary: (prefix) => c.primaryFor(`${prefix}:x`),
    logs: () => serverLogs(c.nodes),
    close: () => c.close(),
  };
});

topologySuite('Sentinel', 'sentinel', async () => {
  const s: PrivateSentinelGroup = await startPrivateSentinelGroup();
  return {
    url: s.url,
    nodes: s.servers,
    primary: () => s.primary(),
    logs: () => serverLogs([...s.sentinels, ...s.servers]),
    close: () => s.close(),
  };
});
