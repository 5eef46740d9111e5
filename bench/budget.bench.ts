/**
 * Budget utilisation against the emulator's real per-minute limit (120/min, fixed 60 s windows),
 * over 3 whole windows, with 2 worker processes per scenario (real BullMQ, real Redis, one
 * client request per job, as the pipeline's part jobs do):
 * - alone: the exporter is the key's only user → requests per minute / limit (target >= 0.95)
 *   and 429s (target 0);
 * - shared: another client spends 30 of the same key's 120 per minute, evenly → the exporter's
 *   429s per window (target <= 1) and how much of what the other client left it used (>= 0.95);
 * - over: the exporter is configured at 150/min but the key allows 120 → 429s (target 0): the
 *   budget follows X-RateLimit-Limit down.
 * Counts come from the emulator's `/_emulator/stats`; the other client counts its own answers.
 *
 * Run: `npm run bench -- budget` (about 4 minutes). This file is also the worker process:
 * `node bin/run-ts.mjs bench/budget.bench.ts --worker <json>`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Queue, RateLimitError, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { FilingsClient } from '../src/api/index.js';
import { createBudget, resolveBudgetConfig } from '../src/budget/index.js';
import { concurrencyFor, limiterFor } from '../src/pipeline/part/worker-limits.js';
import { withBudget } from '../src/pipeline/part/part-budget.js';
import { SnapshotStore } from '../src/pipeline/record/snapshot-store.js';
import { startEmulator, type KeysFile } from '../src/emulator/index.js';
import { startPrivateRedis } from '../src/infra/redis-server.js';
import { ApiError, RateLimitedError } from '../src/errors.js';
import { silentLogger } from '../src/log.js';
import type { BenchResult } from './support/types.js';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..');
const LIMIT = 120;
const WINDOWS = 3;
const OTHER_EVERY_MS = 2000; // the other client: 30 requests per minute, evenly
const TICKERS = ['AAPL', 'NVDA', 'TSLA', 'GOOGL', 'WMT'];

interface WorkerSpec {
  redisUrl: string;
  bullPrefix: string;
  budgetPrefix: string;
  apiUrl: string;
  scenarios: { name: ScenarioName; queue: string; apiKey: string; requestsPerMinute: number }[];
  /** Redis hash the workers count their requests in: `<minute sent>:<scenario>:<status>`. */
  countKey: string;
  variant: Variant;
}

/**
 * What drives the workers. `even` (the default, what the pipeline uses) and `burst` are the
 * budget's two pacings; `limiter-only` is BullMQ's limiter alone with the documented 429 pattern
 * (`queue.rateLimit(Retry-After)` + RateLimitError), for docs/decisions.md. Set
 * FFX_BUDGET_BENCH_VARIANT to run another one.
 */
type Variant = 'even' | 'burst' | 'limiter-only';
type ScenarioName = 'alone' | 'shared' | 'over';
/** The `over` scenario's exporter believes its key allows this much; the server says LIMIT. */
const OVER_CONFIGURED = 150;
const VARIANTS: readonly Variant[] = ['even', 'burst', 'limiter-only'];

interface KeyCounter {
  requests: number;
  status_429: number;
  by_status: Record<string, number>;
}

export async function run(): Promise<BenchResult[]> {
  const variant = (process.env.FFX_BUDGET_BENCH_VARIANT ?? 'even') as Variant;
  if (!VARIANTS.includes(variant))
    throw new Error(`FFX_BUDGET_BENCH_VARIANT must be one of ${VARIANTS.join(', ')}`);
  const tagName = (name: string): string => (variant === 'even' ? name : `${name} [${variant}]`);
  const ownRedis = process.env.REDIS_URL ? undefined : await startPrivateRedis();
  const redisUrl = process.env.REDIS_URL ?? ownRedis!.url;
  const tag = `bench-budget-${process.pid}`;
  const names: ScenarioName[] = ['alone', 'shared', 'over'];
  const keys = { alone: newKey('alone'), shared: newKey('shared'), over: newKey('over') };
  const keysFile: KeysFile = {
    accounts: names.map((name) => ({
      id: `acct_${name}`,
      status: 'active' as const,
      quota: { daily: null, monthly: null },
      keys: [
        {
          id: `key_${name}`,
          sha256: createHash('sha256').update(keys[name]).digest('hex'),
          status: 'active' as const,
          expires_at: null,
          entitlements: [],
          rate_limit_per_minute: LIMIT,
          quota: { daily: null, monthly: null },
        },
      ],
    })),
  };
  const emulator = await startEmulator({
    port: 0,
    keys: keysFile,
    rateLimitPerMinute: LIMIT,
    logger: silentLogger(),
  });
  const connection = { url: redisUrl, maxRetriesPerRequest: null };
  const queues = {
    alone: new Queue(`${tag}-alone`, { connection, prefix: tag }),
    shared: new Queue(`${tag}-shared`, { connection, prefix: tag }),
    over: new Queue(`${tag}-over`, { connection, prefix: tag }),
  };
  const children: ChildProcess[] = [];
  let stopOther = (): void => {};
  try {
    // Enough jobs that the queues never run dry during the measured windows.
    const jobs = (WINDOWS + 3) * LIMIT;
    for (const q of Object.values(queues)) {
      await q.addBulk(
        Array.from({ length: jobs }, (_, i) => ({
          name: 'part',
          data: { ticker: TICKERS[i % TICKERS.length] },
          opts: { removeOnComplete: true, removeOnFail: true, attempts: 3 },
        })),
      );
    }
    const spec: WorkerSpec = {
      redisUrl,
      bullPrefix: tag,
      budgetPrefix: `${tag}:budget`,
      apiUrl: emulator.url,
      scenarios: [
        { name: 'alone', queue: queues.alone.name, apiKey: keys.alone, requestsPerMinute: LIMIT },
        { name: 'shared', queue: queues.shared.name, apiKey: keys.shared, requestsPerMinute: LIMIT },
        { name: 'over', queue: queues.over.name, apiKey: keys.over, requestsPerMinute: OVER_CONFIGURED },
      ],
      countKey: `${tag}:sent`,
      variant,
    };
    for (let i = 0; i < 2; i++) children.push(startWorkerProcess(spec));

    // The other client, on the shared key: records each answer by the emulator minute it was sent
    // in (skipping the few ms around a minute's end, where that would be ambiguous).
    const other = new Map<number, { ok: number; limited: number }>();
    const timer = setInterval(() => {
      const sentAt = Date.now();
      const intoMinute = sentAt % 60_000;
      if (intoMinute < 50 || intoMinute > 59_950) return;
      void fetch(`${emulator.url}/api/b2b/issuer/reference`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': keys.shared },
        body: JSON.stringify({ ticker: 'AAPL' }),
      }).then(async (res) => {
        await res.arrayBuffer();
        const minute = Math.floor(sentAt / 60_000);
        const c = other.get(minute) ?? { ok: 0, limited: 0 };
        if (res.status === 200) c.ok++;
        else if (res.status === 429) c.limited++;
        other.set(minute, c);
      });
    }, OTHER_EVERY_MS);
    stopOther = () => clearInterval(timer);

    // Measure whole emulator windows (whole minutes). Every request is counted by the minute it
    // was sent in (workers and the other client alike), which is exact whatever the pacing; the
    // emulator's own totals over the same span are the cross-check.
    const snaps: Record<string, KeyCounter>[] = [];
    const firstMinute = Math.floor(Date.now() / 60_000) + 1;
    for (let w = 0; w <= WINDOWS; w++) {
      await sleep((firstMinute + w) * 60_000 + 300 - Date.now());
      snaps.push(await stats(emulator.url));
      process.stderr.write(`bench budget: window ${w}/${WINDOWS}\n`);
    }
    stopOther();
    await sleep(1000); // answers still on their way
    const counts = await readCounts(redisUrl, spec.countKey);
    const sent = (minute: number, scenario: string, status: number): number =>
      Number(counts[`${minute}:${scenario}:${status}`] ?? 0);
    const emulatorOk = (key: string): number =>
      (snaps[WINDOWS]![key]?.by_status['200'] ?? 0) - (snaps[0]![key]?.by_status['200'] ?? 0);

    let aloneOk = 0;
    let alone429 = 0;
    let overOk = 0;
    let over429 = 0;
    let sharedExporterOk = 0;
    let otherOk = 0;
    let max429PerWindow = 0;
    const perWindow: string[] = [];
    for (let w = 0; w < WINDOWS; w++) {
      const minute = firstMinute + w;
      aloneOk += sent(minute, 'alone', 200);
      alone429 += sent(minute, 'alone', 429);
      overOk += sent(minute, 'over', 200);
      over429 += sent(minute, 'over', 429);
      const o = other.get(minute) ?? { ok: 0, limited: 0 };
      const exporterOk = sent(minute, 'shared', 200);
      const exporter429 = sent(minute, 'shared', 429);
      sharedExporterOk += exporterOk;
      otherOk += o.ok;
      max429PerWindow = Math.max(max429PerWindow, exporter429);
      perWindow.push(`${exporterOk}+${o.ok} ok, ${exporter429}+${o.limited} 429`);
    }
    const utilisation = aloneOk / (WINDOWS * LIMIT);
    const leftUsed = sharedExporterOk / (WINDOWS * LIMIT - otherOk);
    return [
      {
        group: 'budget',
        name: tagName(`utilisation, exporter alone (2 worker processes, ${LIMIT}/min, ${WINDOWS} windows)`),
        value: utilisation,
        unit: 'ratio',
        target: '>= 0.95',
        ok: utilisation >= 0.95,
        note: `${aloneOk} requests in ${WINDOWS} min (emulator: ${emulatorOk('key_alone')})`,
      },
      {
        group: 'budget',
        name: tagName('429s, exporter alone'),
        value: alone429,
        unit: 'count',
        target: '= 0',
        ok: alone429 === 0,
      },
      {
        group: 'budget',
        name: tagName(`429s, exporter configured at ${OVER_CONFIGURED}/min on a ${LIMIT}/min key`),
        value: over429,
        unit: 'count',
        target: '= 0',
        ok: over429 === 0,
        note: `${overOk} requests in ${WINDOWS} min (utilisation ${(overOk / (WINDOWS * LIMIT)).toFixed(3)})`,
      },
      {
        group: 'budget',
        name: tagName('exporter 429s per window, key shared with another client'),
        value: max429PerWindow,
        unit: 'count',
        target: '<= 1',
        ok: max429PerWindow <= 1,
        note: `per window, exporter+other: ${perWindow.join('; ')}`,
      },
      {
        group: 'budget',
        name: tagName('share of what the other client left that the exporter used'),
        value: leftUsed,
        unit: 'ratio',
        target: '>= 0.95',
        ok: leftUsed >= 0.95,
        note: `${sharedExporterOk} of ${WINDOWS * LIMIT - otherOk} (emulator, both clients: ${emulatorOk('key_shared')})`,
      },
    ];
  } finally {
    stopOther();
    await Promise.all(children.map(stopProcess));
    for (const q of Object.values(queues)) {
      await q.obliterate({ force: true }).catch(() => undefined);
      await q.close();
    }
    const r = new Redis(redisUrl);
    const left = await r.keys(`${tag}:*`);
    if (left.length) await r.del(...left);
    await r.quit();
    await emulator.close();
    await ownRedis?.close();
  }
}

function newKey(name: string): string {
  return `ffx_live_b2b_bench_${name}_${randomBytes(12).toString('hex')}`;
}

async function readCounts(redisUrl: string, key: string): Promise<Record<string, string>> {
  const r = new Redis(redisUrl);
  try {
    return await r.hgetall(key);
  } finally {
    await r.quit();
  }
}

async function stats(url: string): Promise<Record<string, KeyCounter>> {
  const body = (await (await fetch(`${url}/_emulator/stats`)).json()) as {
    by_key: Record<string, KeyCounter>;
  };
  return body.by_key;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, Math.max(0, ms)));
}

function startWorkerProcess(spec: WorkerSpec): ChildProcess {
  const child = spawn(
    process.execPath,
    [join(repo, 'bin/run-ts.mjs'), fileURLToPath(import.meta.url), '--worker', JSON.stringify(spec)],
    {
      cwd: repo,
      stdio: ['ignore', 'inherit', 'inherit'],
    },
  );
  return child;
}

async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  await new Promise<void>((resolveExit) => {
    const force = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.once('exit', () => {
      clearTimeout(force);
      resolveExit();
    });
    child.kill('SIGTERM');
  });
}

/** The worker process: one BullMQ Worker per scenario, each request inside the shared budget. */
async function workerMain(spec: WorkerSpec): Promise<void> {
  const connection = { url: spec.redisUrl, maxRetriesPerRequest: null };
  const closers: (() => Promise<void>)[] = [];
  const counter = new Redis(spec.redisUrl);
  /** One API request, counted by the minute it was sent in and its status. */
  const counted = async <T extends { status: number }>(
    scenario: string,
    call: () => Promise<T>,
  ): Promise<T> => {
    const minute = Math.floor(Date.now() / 60_000);
    let status = 0;
    try {
      const res = await call();
      status = res.status;
      return res;
    } catch (err) {
      status = err instanceof ApiError ? (err.status ?? 0) : 0;
      throw err;
    } finally {
      await counter.hincrby(spec.countKey, `${minute}:${scenario}:${status}`, 1);
    }
  };
  for (const s of spec.scenarios) {
    const config = resolveBudgetConfig({
      requestsPerMinute: s.requestsPerMinute,
      pacing: spec.variant === 'burst' ? 'burst' : 'even',
    });
    const queue = new Queue(s.queue, { connection, prefix: spec.bullPrefix });
    const budget = createBudget({
      redis: spec.redisUrl,
      apiKey: s.apiKey,
      config,
      prefix: spec.budgetPrefix,
    });
    const client = new FilingsClient({ baseUrl: spec.apiUrl, apiKey: s.apiKey });
    const storeRedis = new Redis(spec.redisUrl);
    const store = new SnapshotStore(storeRedis, {
      prefix: spec.budgetPrefix,
      queueBase: s.queue,
      recordTtlSeconds: 3600,
    });
    const withGate = async (job: Job<{ ticker: string }>, token?: string): Promise<number> =>
      withBudget(
        budget,
        {
          job,
          token,
          rateLimiter: queue,
          operation: 'issuer/reference',
          snapshotId: 'bench',
          part: `issuer_reference/${job.data.ticker}`,
          store,
        },
        async (permit) => {
          const res = await counted(s.name, () => client.issuerReference({ ticker: job.data.ticker }));
          await permit.observe(res.rateLimit);
          return res.status;
        },
      );
    const limiterOnly = async (job: Job<{ ticker: string }>): Promise<number> => {
      try {
        return (await counted(s.name, () => client.issuerReference({ ticker: job.data.ticker }))).status;
      } catch (err) {
        if (!(err instanceof RateLimitedError)) throw err;
        await queue.rateLimit(err.retryAfterMs);
        throw new RateLimitError();
      }
    };
    const worker = new Worker(s.queue, spec.variant === 'limiter-only' ? limiterOnly : withGate, {
      connection,
      prefix: spec.bullPrefix,
      limiter: limiterFor(config),
      // BullMQ's limiter only bites when enough jobs can start at once.
      concurrency:
        spec.variant === 'limiter-only' ? 4 : concurrencyFor({ config, jobDurationMs: 200, workers: 2 }),
    });
    closers.push(async () => {
      await worker.close();
      await queue.close();
      await budget.close();
      await storeRedis.quit();
      await client.close();
    });
  }
  const stop = async (): Promise<void> => {
    await Promise.all(closers.map((c) => c()));
    await counter.quit();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
}

const workerFlag = process.argv.indexOf('--worker');
if (workerFlag > 0 && process.argv[1] === fileURLToPath(import.meta.url)) {
  await workerMain(JSON.parse(process.argv[workerFlag + 1]!) as WorkerSpec);
}
