/**
 * `filings-export worker`: runs the pipeline's workers until SIGTERM/SIGINT, then shuts down
 * gracefully: stops taking jobs, lets running parts finish for worker.shutdown_timeout_ms, aborts
 * the rest (they are retried by another worker). A second signal exits at once.
 */
import type { FlagOverride } from '../config/load.js';
import { requireApiKey } from '../config/load.js';
import { effectiveRate } from '../budget/index.js';
import { budgetConfigFrom } from '../pipeline/context.js';
import { openExporter } from '../pipeline/exporter.js';
import type { CliApp } from './app.js';
import { onShutdownSignal, setup, type CommonCliOptions } from './command-support.js';

export interface WorkerCliOptions extends CommonCliOptions {
  concurrency?: number;
  /** Run only one kind of worker. */
  only?: 'parts' | 'control';
}

export async function runWorkerCommand(o: WorkerCliOptions, app: CliApp): Promise<void> {
  const flags: FlagOverride[] = [{ path: 'worker.concurrency', value: o.concurrency, flag: '--concurrency' }];
  const { config, logger } = setup(o, flags);
  const apiKey = requireApiKey(config);
  const exporter = await openExporter({ config, logger, apiKey, processors: await app.loadJobs() });
  try {
    const roles = o.only ? { parts: o.only === 'parts', control: o.only === 'control' } : undefined;
    await exporter.startWorkers(roles);
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
      onShutdownSignal((s) => resolve(s));
    });
    logger.info(
      { signal, deadlineMs: config.worker.shutdown_timeout_ms },
      'shutting down: no new jobs; waiting for running ones',
    );
  } finally {
    await exporter.close(config.worker.shutdown_timeout_ms);
    logger.info('worker stopped');
  }
}
