/**
 * Everything a command needs to export: the pipeline context (Redis, queues, store), the budget
 * for the configured key, and (on demand) workers wired to the client and the output.
 */
import { FilingsClient } from '../api/index.js';
import { budgetConfigFrom, budgetPrefix, createBudget, type Budget } from '../budget/index.js';
import type { Config } from '../config/load.js';
import type { Secret } from '../config/secret.js';
import type { Logger } from '../log.js';
import type { JobDefinitions } from './job-definitions.js';
import type { Metrics } from '../metrics/metrics.js';
import { systemClock, type Clock } from '../types.js';
import { clientFetcher } from './part/index.js';
import { openPipeline, type PipelineContext } from './context.js';
import { openStorage, s3Settings } from '../output/storage/index.js';
import { outputPorts } from './output-adapter.js';
import { startWorkers, type RunningWorkers } from './worker-runner.js';
import { capYoungGeneration, youngGenerationSetAtStart, type YoungGenerationCap } from '../runtime/index.js';

export interface Exporter {
  ctx: PipelineContext;
  budget: Budget;
  /** Starts workers in this process (`worker`, `run --local`, `demo`). */
  startWorkers(
    roles?: { parts?: boolean; control?: boolean },
    opts?: { metrics?: Metrics },
  ): Promise<RunningWorkers>;
  /** Closes workers started here, the client, the budget and Redis. */
  close(deadlineMs?: number): Promise<void>;
}

export interface OpenExporterOptions {
  config: Config;
  logger: Logger;
  apiKey: Secret;
  /** Every job type's definition (jobs/index.ts), injected by the composition root (the program entry). */
  definitions: JobDefinitions;
  /** @defaultValue systemClock */
  clock?: Clock;
}

/** Whether the parts and the control role both run in this process (the default of startWorkers). */
export function sharesProcess(roles: { parts?: boolean; control?: boolean } | undefined): boolean {
  return (roles?.parts ?? true) && (roles?.control ?? true);
}

export async function openExporter(opts: OpenExporterOptions): Promise<Exporter> {
  const { config, logger } = opts;
  const clock = opts.clock ?? systemClock;
  const ctx = await openPipeline(config, logger, { clock });
  const budget = createBudget({
    redis: ctx.redis,
    config: budgetConfigFrom(config),
    apiKey: opts.apiKey.reveal(),
    clock,
    logger: logger.child({ component: 'budget' }),
    prefix: budgetPrefix(config),
    confirmWrite: (key) => ctx.replicas.confirm(key),
  });
  const started: RunningWorkers[] = [];
  let client: FilingsClient | undefined;
  let youngCap: YoungGenerationCap | undefined;
  return {
    ctx,
    budget,
    async startWorkers(roles, o = {}) {
      client ??= new FilingsClient({
        baseUrl: config.api.url,
        apiKey: opts.apiKey.reveal(),
        connections: Math.max(1, config.worker.concurrency),
        headersTimeoutMs: config.api.headers_timeout_ms,
        bodyTimeoutMs: config.api.body_timeout_ms,
        clock,
      });
      // Both roles here: V8's young generation stays at 16 MiB (Node 24 grows it to 64 MiB and more),
      // unless the operator sized it at start (NODE_OPTIONS or node's flags).
      if (sharesProcess(roles) && !youngGenerationSetAtStart(process.execArgv, process.env.NODE_OPTIONS)) {
        youngCap ??= capYoungGeneration();
      }
      const running = await startWorkers({
        ctx,
        definitions: opts.definitions,
        fetcher: clientFetcher(client),
        output: await outputPorts({
          ...(config.output.publish_memory_mb !== null
            ? { publishMemoryMb: config.output.publish_memory_mb }
            : {}),
          ...(config.output.publish_threads !== null
            ? { publishThreads: config.output.publish_threads }
            : {}),
          ...(config.output.row_group_rows !== null ? { rowGroupRows: config.output.row_group_rows } : {}),
          publishConversions: config.output.publish_conversions,
          openStorage: (root) => openStorage(root, { settings: s3Settings(config.output) }),
          ...(config.worker.tmp_dir !== null ? { tmpDir: config.worker.tmp_dir } : {}),
          // Both roles in one process (`run --local`, a `worker` without --only): DuckDB's
          // conversions share the memory of the parts being staged, so freed memory goes back at once.
          ...(sharesProcess(roles) ? { releaseFreedMemory: true } : {}),
        }),
        budget,
        clock,
        ...(roles ? { roles } : {}),
        ...(o.metrics ? { metrics: o.metrics } : {}),
      });
      started.push(running);
      return running;
    },
    async close(deadlineMs) {
      await Promise.all(started.map((w) => w.close(deadlineMs)));
      youngCap?.close();
      await client?.close();
      await budget.close();
      await ctx.close();
    },
  };
}
