/**
 * A whole pipeline for tests: the real emulator over HTTP, the real client, real Redis (a unique
 * BullMQ prefix per harness), the real budget, and the real output module (src/output).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';
import { FilingsClient } from '../../src/api/index.js';
import { budgetConfigFrom, budgetPrefix, createBudget, type Budget } from '../../src/budget/index.js';
import { loadConfig, requireApiKey, type Config, type FlagOverride } from '../../src/config/load.js';
import { silentLogger } from '../../src/log.js';
import { clientFetcher } from '../../src/pipeline/part/client-fetcher.js';
import { openPipeline, type PipelineContext } from '../../src/pipeline/context.js';
import { followSnapshot } from '../../src/pipeline/queue/follow.js';
import type { JobHelpers, OutputHelpers } from '../../src/pipeline/job-helpers.js';
import { outputPorts } from '../../src/pipeline/output-adapter.js';
import type { SnapshotSpec, SnapshotView } from '../../src/pipeline/record/snapshot-states.js';
import { parseCompany } from '../../src/pipeline/record/universe.js';
import { startWorkers, type RunningWorkers } from '../../src/pipeline/worker-runner.js';
import type { Clock, DatasetName } from '../../src/types.js';
import { systemClock } from '../../src/types.js';
import { jobDefinitions } from '../../jobs/index.js';
import type { Metrics } from '../../src/metrics/metrics.js';
import { startTestEmulator, type TestEmulator } from './emulator.js';
import type { EmulatorOptions } from '../../src/emulator/index.js';

/** What `GET /_emulator/stats` counts (src/emulator/server/stats.ts), in total and per key id. */
export interface EmulatorCounter {
  requests: number;
  status_429: number;
  quota_exceeded: number;
  by_status: Record<string, number>;
}

export interface EmulatorStats {
  total: EmulatorCounter;
  by_key: Record<string, EmulatorCounter>;
}

export interface HarnessOptions {
  emulator?: Partial<EmulatorOptions>;
  /** Which test key the exporter uses. @defaultValue `active` */
  key?: keyof TestEmulator['keys'];
  /** Config overrides as `path: value`. */
  config?: Record<string, unknown>;
  /** Output ports. @defaultValue the real output module */
  output?: Pick<OutputHelpers, 'staged' | 'publish'>;
  /** One clock for the emulator, the budget, the client and the workers. @defaultValue systemClock */
  clock?: Clock;
  /** Another Redis (a cluster, Sentinels). @defaultValue the run's private redis-server */
  redisUrl?: string;
}

export interface PipelineHarness {
  emulator: TestEmulator;
  config: Config;
  ctx: PipelineContext;
  budget: Budget;
  client: FilingsClient;
  outDir: string;
  /** Env for a CLI child process using the same Redis prefix, emulator, key and output. */
  env: NodeJS.ProcessEnv;
  startWorkers(roles?: { parts?: boolean; control?: boolean }, metrics?: Metrics): Promise<RunningWorkers>;
  spec(tickers: string[], datasets: DatasetName[], id: string): SnapshotSpec;
  /** Enqueues and follows to the end. */
  runToEnd(spec: SnapshotSpec, opts?: { retry?: boolean }): Promise<SnapshotView>;
  stats(): Promise<EmulatorStats>;
  setFaults(rules: Record<string, unknown>[]): Promise<void>;
  close(): Promise<void>;
}

export async function startPipelineHarness(opts: HarnessOptions = {}): Promise<PipelineHarness> {
  const clock = opts.clock ?? systemClock;
  const emulator = await startTestEmulator({ ...(opts.clock ? { clock } : {}), ...opts.emulator });
  const outDir = await mkdtemp(join(tmpdir(), 'fx-pipeline-out-'));
  const prefix = `t${randomBytes(5).toString('hex')}`;
  const redisUrl = opts.redisUrl ?? inject('redisUrl');
  const overrides: Record<string, unknown> = {
    'api.url': emulator.url,
    'redis.url': redisUrl,
    'redis.prefix': prefix,
    'output.dir': outDir,
    'output.formats': ['ndjson'],
    'budget.requests_per_minute': 1000,
    'retry.attempts': 3,
    'retry.base_delay_ms': 50,
    'retry.max_delay_ms': 200,
    'worker.concurrency': 8,
    'worker.shutdown_timeout_ms': 5000,
    'log.level': 'silent',
    ...opts.config,
  };
  const flags: FlagOverride[] = Object.entries(overrides).map(([path, value]) => ({
    path,
    value,
    flag: `test ${path}`,
  }));
  const apiKey = emulator.keys[opts.key ?? 'active'];
  const config = loadConfig({ env: { FILINGS_API_KEY: apiKey }, flags });
  const logger = silentLogger();
  const ctx = await openPipeline(config, logger, { clock });
  const budget = createBudget({
    redis: ctx.redis,
    config: budgetConfigFrom(config),
    apiKey: requireApiKey(config).reveal(),
    clock,
    logger,
    prefix: budgetPrefix(config),
  });
  const client = new FilingsClient({ baseUrl: emulator.url, apiKey, connections: 8, clock });
  const running: RunningWorkers[] = [];

  const env: NodeJS.ProcessEnv = {
    ...process.env,
    FILINGS_API_URL: emulator.url,
    FILINGS_API_KEY: apiKey,
    REDIS_URL: redisUrl,
    FILINGS_EXPORT_PREFIX: prefix,
    FILINGS_EXPORT_OUT: outDir,
    LOG_LEVEL: 'warn',
  };

  return {
    emulator,
    config,
    ctx,
    budget,
    client,
    outDir,
    env,
    async startWorkers(roles, metrics) {
      const w = await startWorkers({
        ctx,
        definitions: jobDefinitions,
        fetcher: clientFetcher(client),
        output:
          opts.output ??
          (await outputPorts(
            config.output.row_group_rows !== null ? { rowGroupRows: config.output.row_group_rows } : {},
          )),
        budget,
        clock,
        ...(roles ? { roles } : {}),
        ...(metrics ? { metrics } : {}),
      });
      running.push(w);
      return w;
    },
    spec(tickers, datasets, id) {
      return {
        id,
        date: '2026-11-21',
        trigger: 'manual',
        companies: tickers.map((t, i) => parseCompany(t, `tickers[${i}]`)),
        datasets,
        formats: config.output.formats,
        outDir,
      };
    },
    async runToEnd(spec, o) {
      await ctx.enqueue(spec, o);
      return followSnapshot(ctx.store, spec.id, { pollMs: 100 });
    },
    async stats() {
      const res = await fetch(`${emulator.url}/_emulator/stats`);
      return (await res.json()) as EmulatorStats;
    },
    async setFaults(rules) {
      await fetch(`${emulator.url}/_emulator/faults`, { method: 'DELETE' });
      if (rules.length === 0) return;
      const res = await fetch(`${emulator.url}/_emulator/faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ rules }),
      });
      if (res.status >= 300) throw new Error(`faults: ${res.status} ${await res.text()}`);
    },
    async close() {
      await Promise.all(running.map((w) => w.close(2000)));
      await client.close();
      await budget.close();
      // Leave nothing in the shared Redis: drop every key of this harness's prefix.
      await ctx.partsQueue.obliterate({ force: true }).catch(() => undefined);
      await ctx.snapshotsQueue.obliterate({ force: true }).catch(() => undefined);
      const keys = await ctx.redis.keys(`${config.redis.prefix}:*`);
      if (keys.length > 0) await ctx.redis.del(...keys);
      await ctx.close();
      await emulator.close();
      await rm(outDir, { recursive: true, force: true });
    },
  };
}

/**
 * The helpers of a test that runs one job by hand: those it gives, a silent logger, the system
 * clock and a signal never aborted; any other port throws when the job touches it, naming it.
 */
export function testJobHelpers(given: Partial<JobHelpers>): JobHelpers {
  const unused = <T>(name: keyof JobHelpers): T => {
    const refuse = (): never => {
      throw new Error(`helpers.${name} was not given to this test`);
    };
    return new Proxy(() => undefined, { get: refuse, apply: refuse }) as T;
  };
  return {
    config: unused('config'),
    fetcher: unused('fetcher'),
    budget: unused('budget'),
    staged: unused('staged'),
    publish: unused('publish'),
    record: unused('record'),
    logger: silentLogger(),
    clock: systemClock,
    closing: new AbortController().signal,
    add: unused('add'),
    enqueue: unused('enqueue'),
    stopSnapshot: unused('stopSnapshot'),
    rateLimiter: unused('rateLimiter'),
    outage: unused('outage'),
    hurry: unused('hurry'),
    ...given,
  };
}
