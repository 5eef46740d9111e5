/**
 * Replicated Redis (issue 39), on the private topologies of src/infra/redis-topologies.ts:
 * - WAIT's cost: a budget reservation on the 3+3 cluster with and without `WAIT 1` for a replica
 *   (median of RESERVATIONS each, alternated);
 * - parts per second, 1,000 companies x 2 small datasets with 2 `worker` processes, on the 3+3
 *   cluster against a single Redis in the same run (target >= 0.8x); REDIS_BENCH_COMPANIES=10000
 *   runs the size (about 8 minutes per topology on a quiet 2-core machine), with the CPU
 *   the Redis holding the queue's slot spent per part: one queue lives on one shard, so that
 *   process's one core is how far a deployment can go;
 * - the time from the SIGKILL of the slot's primary (at a third of the parts) to the first part
 *   recorded after it, on a run of at most 1,000 companies (the failover does not scale with it).
 *
 * `npm run bench -- redis` (about 5 minutes on a 2-core machine).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBudget, resolveBudgetConfig } from '../../src/budget/index.js';
import { loadConfig } from '../../src/config/load.js';
import { parseRedisUrl } from '../../src/config/redis-url.js';
import { loadStore } from '../../src/emulator/data/index.js';
import { DEMO_API_KEY } from '../../src/emulator/demo-key.js';
import { startEmulator } from '../../src/emulator/index.js';
import { openRedis } from '../../src/infra/redis-connection.js';
import { startPrivateRedis, type PrivateRedis } from '../../src/infra/redis-server.js';
import { startPrivateCluster, type PrivateCluster } from '../../src/infra/redis-topologies.js';
import { replicaAck } from '../../src/infra/replica-ack.js';
import { silentLogger } from '../../src/log.js';
import { openPipeline } from '../../src/pipeline/context.js';
import { parseCompany, totals } from '../../src/pipeline/record/index.js';
import { cpuSeconds } from '../support/process-stats.js';
import { median } from '../support/stats.js';
import type { BenchResult } from '../support/types.js';
// @ts-expect-error: a plain ES module of bin/ (no types).
import { staleReason as staleReasonUntyped } from '../../bin/entry-point.mjs';

const staleReason = staleReasonUntyped as (root: string) => string | undefined;
const ROOT = join(import.meta.dirname, '..', '..');
const BIN = join(ROOT, 'bin', 'filings-export.mjs');
/** Companies of the throughput run (REDIS_BENCH_COMPANIES; the figure is at 10,000). */
const COMPANIES = companiesFrom(process.env.REDIS_BENCH_COMPANIES ?? '1000');
/** Companies of the failover run: the time to the first part after the kill does not grow with it. */
const FAILOVER_COMPANIES = Math.min(COMPANIES, 1000);
const DATASETS = ['series_catalog', 'dims_catalog'] as const;
const RESERVATIONS = 300;

export async function run(): Promise<BenchResult[]> {
  if (staleReason(ROOT) !== undefined)
    execFileSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], { stdio: 'inherit' });
  const single = await startPrivateRedis();
  let cluster: PrivateCluster | undefined;
  try {
    cluster = await startPrivateCluster();
    const wait = await waitCost(cluster.url);
    const one = await partsPerSecond(single, COMPANIES);
    const clustered = await partsPerSecond(cluster, COMPANIES);
    const failover = await partsPerSecond(cluster, FAILOVER_COMPANIES, { kill: true });
    const ratio = clustered.perSecond / one.perSecond;
    return [
      ...wait,
      {
        group: 'redis',
        name: `parts/s on a 3+3 Redis Cluster ÷ one Redis, ${COMPANIES.toLocaleString('en-US')} companies x 2 datasets, 2 workers`,
        value: ratio,
        unit: 'ratio',
        target: '>= 0.8',
        ok: ratio >= 0.8,
        note: `${clustered.perSecond.toFixed(1)} vs ${one.perSecond.toFixed(1)} parts/s`,
      },
      {
        group: 'redis',
        name: 'CPU of the Redis holding the queue’s slot per part recorded (cluster; one Redis)',
        value: clustered.redisCpuMsPerPart,
        unit: 'ms',
        // One queue lives on one shard: its primary's core is the ceiling of one deployment.
        note: `one Redis ${one.redisCpuMsPerPart.toFixed(2)} ms; one core there carries about ${Math.round(1000 / clustered.redisCpuMsPerPart)} parts/s on the cluster, ${Math.round(1000 / one.redisCpuMsPerPart)} on one Redis`,
      },
      {
        group: 'redis',
        name: 'SIGKILL of the slot’s primary to the first part recorded after it (3+3 cluster)',
        value: failover.killToPartMs ?? NaN,
        unit: 'ms',
        note: `node timeout 2 s; ${FAILOVER_COMPANIES.toLocaleString('en-US')} companies; the snapshot ended ${failover.state}`,
      },
    ];
  } finally {
    await cluster?.close();
    await single.close();
  }
}

/** Median ms of a reservation with WAIT for a replica and without, on the cluster at `url`. */
async function waitCost(url: string): Promise<BenchResult[]> {
  const target = parseRedisUrl(url);
  if (typeof target === 'string') throw new Error(target);
  const redis = await openRedis({ url, target, logger: silentLogger() });
  try {
    const ack = replicaAck(redis);
    const config = resolveBudgetConfig({ pacing: 'burst', requestsPerMinute: 1_000_000 });
    const common = { redis, config, keyFingerprint: '0123456789abcdef', prefix: '{fx}:bench' };
    const plain = createBudget(common);
    const waiting = createBudget({ ...common, confirmWrite: (k) => ack.confirm(k) });
    const times = { plain: [] as number[], waiting: [] as number[] };
    for (let i = 0; i < RESERVATIONS; i++) {
      for (const [name, budget] of [
        ['plain', plain],
        ['waiting', waiting],
      ] as const) {
        const t0 = performance.now();
        const outcome = await budget.acquire('facts/full');
        times[name].push(performance.now() - t0);
        if (outcome.kind === 'granted') await budget.release(outcome.permit);
      }
    }
    const [a, b] = [median(times.plain), median(times.waiting)];
    return [
      {
        group: 'redis',
        name: 'a budget reservation with WAIT for a replica (3+3 cluster, loopback)',
        value: b,
        unit: 'ms',
        note: `median of ${RESERVATIONS}; without WAIT ${a.toFixed(3)} ms (+${(b - a).toFixed(3)} ms)`,
      },
    ];
  } finally {
    redis.disconnect();
  }
}

interface PartsRun {
  perSecond: number;
  /** CPU ms of the Redis process holding the queue's slot, per part, until every part was recorded. */
  redisCpuMsPerPart: number;
  killToPartMs: number | undefined;
  state: string;
}

/** One snapshot of `count` companies on `server` with 2 workers; with `kill`, its slot's primary dies at a third. */
async function partsPerSecond(
  server: PrivateRedis | PrivateCluster,
  count: number,
  { kill = false } = {},
): Promise<PartsRun> {
  const redisUrl = server.url;
  const outDir = await mkdtemp(join(tmpdir(), 'fx-bench-redis-'));
  const store = await loadStore({ validate: false });
  const bundled = store.companies().length;
  await store.close();
  const big = await loadStore({ validate: false, synthetic: Math.max(0, count - bundled) });
  const emulator = await startEmulator({ port: 0, store: big, rateLimitPerMinute: null });
  const configFile = join(outDir, 'bench-config.yaml');
  const yaml = ['budget:', '  requests_per_minute: 100000', 'worker:', '  concurrency: 16'];
  yaml.push('output:', '  formats: [parquet]', `datasets: [${DATASETS.join(', ')}]`);
  await writeFile(configFile, yaml.join('\n'));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    FILINGS_EXPORT_ENTRY: 'build',
    FILINGS_EXPORT_CONFIG: configFile,
    FILINGS_API_URL: emulator.url,
    FILINGS_API_KEY: DEMO_API_KEY,
    REDIS_URL: redisUrl,
    FILINGS_EXPORT_PREFIX: `rb${randomBytes(4).toString('hex')}`,
    FILINGS_EXPORT_OUT: join(outDir, 'out'),
  };
  const config = loadConfig({ env, configPath: configFile });
  const ctx = await openPipeline(config, silentLogger());
  const slotKey = `${config.redis.prefix}:x`;
  const holder = 'primaryFor' in server ? await server.primaryFor(slotKey) : server;
  const workers: ChildProcess[] = [];
  try {
    for (let i = 0; i < 2; i++) workers.push(await startWorker(env));
    const id = `bench-redis-${kill ? 'failover' : 'plain'}`;
    const companies = big.companies().map((c) => parseCompany(c.ticker ?? c.cik, 'bench'));
    const parts = companies.length * DATASETS.length;
    const spec = { id, date: '2026-11-28', trigger: 'manual' as const, companies };
    const t0 = performance.now();
    const cpu0 = await cpuSeconds(holder.pid ?? 0);
    let cpuMs = NaN;
    await ctx.enqueue({ ...spec, datasets: [...DATASETS], formats: ['parquet'], outDir: config.output.dir });
    let fetchedAt: number | undefined;
    let killedAt: number | undefined;
    let doneAtKill = 0;
    let killToPartMs: number | undefined;
    let state = 'enqueuing';
    for (;;) {
      await new Promise((r) => setTimeout(r, 50));
      const rec = await ctx.store.view(id);
      state = rec?.state ?? 'missing';
      const done = rec ? parts - totals(rec).pending : 0;
      if (kill && killedAt === undefined && done >= parts / 3) {
        // No failover has happened yet: the slot's holder found at the start is still its primary.
        process.kill(holder.pid ?? 0, 'SIGKILL');
        killedAt = performance.now();
        doneAtKill = done;
      }
      if (killedAt !== undefined && killToPartMs === undefined && done > doneAtKill)
        killToPartMs = performance.now() - killedAt;
      if (rec && fetchedAt === undefined && totals(rec).pending === 0) {
        fetchedAt = performance.now();
        if (killedAt === undefined) cpuMs = ((await cpuSeconds(holder.pid ?? 0)) - cpu0) * 1000;
      }
      if (state === 'published' || state === 'failed' || state === 'stopped' || state === 'missing') break;
    }
    const perSecond = parts / (((fetchedAt ?? performance.now()) - t0) / 1000);
    return { perSecond, redisCpuMsPerPart: cpuMs / parts, killToPartMs, state };
  } finally {
    await Promise.all(workers.map(stopWorker));
    await ctx.close();
    await emulator.close();
    await big.close();
    await rm(outDir, { recursive: true, force: true });
  }
}

async function startWorker(env: NodeJS.ProcessEnv): Promise<ChildProcess> {
  const child = spawn(process.execPath, [BIN, 'worker'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  await new Promise<void>((resolve, reject) => {
    child.stderr?.on('data', (b: Buffer) => {
      log = (log + b.toString()).slice(-20_000);
      if (log.includes('worker ready')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`worker exited (${code}): ${log}`)));
  });
  return child;
}

async function stopWorker(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

function companiesFrom(s: string): number {
  const n = Number(s.trim());
  if (!Number.isInteger(n) || n < 10)
    throw new Error(`REDIS_BENCH_COMPANIES: ${s} is not a whole number >= 10`);
  return n;
}
