/**
 * `filings-export worker`: runs the pipeline's workers until SIGTERM/SIGINT, then shuts down
 * gracefully: stops taking jobs, lets running parts finish for worker.shutdown_timeout_ms, aborts
 * the rest (they are retried by another worker). A second signal exits at once.
 */
import { InvalidArgumentError, type Command } from 'commander';
import type { FlagOverride } from '../../config/load.js';
import type { CliApp } from '../app.js';
import type { CommonCliOptions } from '../command-support.js';
import { configOption, positiveInt } from '../option-parsers.js';

export interface WorkerCliOptions extends CommonCliOptions {
  concurrency?: number;
  /** Run only one kind of worker. */
  only?: 'parts' | 'control';
}

export function register(program: Command, app: CliApp): void {
  const cmd = program
    .command('worker')
    .description('Run export workers until SIGTERM/SIGINT (any number of processes and machines)');
  configOption(cmd)
    .option('--concurrency <n>', 'part jobs in flight in this process', positiveInt('--concurrency'))
    .option('--only <kind>', 'run only the "parts" or the "control" worker', (v: string) => {
      if (v !== 'parts' && v !== 'control')
        throw new InvalidArgumentError('--only must be "parts" or "control"');
      return v;
    })
    .action(async (o: WorkerCliOptions) => run(o, app));
}

export async function run(o: WorkerCliOptions, app: CliApp): Promise<void> {
  const [{ requireApiKey }, { onShutdownSignal, setup }, { budgetConfigFrom, effectiveRate, openExporter }] =
    await Promise.all([
      import('../../config/load.js'),
      import('../command-support.js'),
      import('../../pipeline/index.js'),
    ]);
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
