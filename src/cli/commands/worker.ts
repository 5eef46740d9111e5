/**
 * `filings-export worker`: runs the pipeline's workers until SIGTERM/SIGINT, then shuts down
 * gracefully: stops taking jobs, lets running parts finish for worker.shutdown_timeout_ms, aborts
 * the rest (they are retried by another worker). A second signal exits at once.
 */
import { InvalidArgumentError, type Command } from 'commander';
import type { FlagOverride } from '../../config/load.js';
import type { CliApp } from '../app.js';
import type { CommonCliOptions } from '../command-support.js';
import { configOption, integer, positiveInt } from '../option-parsers.js';

export interface WorkerCliOptions extends CommonCliOptions {
  concurrency?: number;
  metricsPort?: number;
  /** Run only one kind of worker. */
  only?: 'parts' | 'control';
}

export function register(program: Command, app: CliApp): void {
  const cmd = program
    .command('worker')
    .description('Run export workers until SIGTERM/SIGINT (any number of processes and machines)');
  configOption(cmd)
    .option('--concurrency <n>', 'part jobs in flight in this process', positiveInt('--concurrency'))
    .option(
      '--metrics-port <n>',
      'serve Prometheus /metrics, /healthz and /readyz on this port (default: worker.metrics_port)',
      integer('--metrics-port', 0, 65535),
    )
    .option('--only <kind>', 'run only the "parts" or the "control" worker', (v: string) => {
      if (v !== 'parts' && v !== 'control')
        throw new InvalidArgumentError('--only must be "parts" or "control"');
      return v;
    })
    .action(async (o: WorkerCliOptions) => run(o, app));
}

export async function run(o: WorkerCliOptions, app: CliApp): Promise<void> {
  const [
    { requireApiKey },
    { onShutdownSignal, setup, shutdownBoundMs },
    { openExporter, redactUrl, serveMetrics },
    { budgetConfigFrom, effectiveRate },
  ] = await Promise.all([
    import('../../config/load.js'),
    import('../command-support.js'),
    import('../../pipeline/index.js'),
    import('../../budget/index.js'),
  ]);
  const flags: FlagOverride[] = [
    { path: 'worker.concurrency', value: o.concurrency, flag: '--concurrency' },
    { path: 'worker.metrics_port', value: o.metricsPort, flag: '--metrics-port' },
  ];
  const { config, logger } = setup(o, flags);
  const apiKey = requireApiKey(config);
  const exporter = await openExporter({ config, logger, apiKey, definitions: await app.loadJobs() });
  let served: Awaited<ReturnType<typeof serveMetrics>> | undefined;
  try {
    const roles = o.only ? { parts: o.only === 'parts', control: o.only === 'control' } : undefined;
    if (config.worker.metrics_port !== null) {
      served = await serveMetrics(exporter, {
        port: config.worker.metrics_port,
        host: config.worker.metrics_host,
      });
      logger.info({ url: `${served.server.url}/metrics` }, 'metrics served');
    }
    await exporter.startWorkers(roles, served ? { metrics: served.metrics } : {});
    logger.info(
      {
        queues:
          o.only === 'parts'
            ? [exporter.ctx.names.parts]
            : o.only === 'control'
              ? [exporter.ctx.names.snapshots]
              : [exporter.ctx.names.parts, exporter.ctx.names.snapshots],
        concurrency: config.worker.concurrency,
        requestsPerMinute: effectiveRate(budgetConfigFrom(config)),
        api: config.api.url,
      },
      'worker ready',
    );
    const signal = await new Promise<NodeJS.Signals>((resolve) => {
      // The handler stays installed: a second signal forces the exit.
      onShutdownSignal((s) => resolve(s), {
        forceExitMs: shutdownBoundMs(config),
        closing: () =>
          `closing the workers and Redis at ${redactUrl(config.redis.url)}: parts they held go back to the queue when their locks expire (worker.lock_duration_ms)`,
      });
    });
    logger.info(
      { signal, deadlineMs: config.worker.shutdown_timeout_ms },
      'shutting down: no new jobs; waiting for running ones',
    );
  } finally {
    await exporter.close(config.worker.shutdown_timeout_ms);
    await served?.close();
    logger.info('worker stopped');
  }
}
