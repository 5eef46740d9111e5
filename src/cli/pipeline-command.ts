/**
 * Registers the exporter's commands (run, worker, schedule, status, demo). Only commander is
 * loaded here; each command's module (and BullMQ, the client, the output) loads when it runs.
 */
import { InvalidArgumentError, type Command } from 'commander';
import type { CliApp } from './app.js';
import { commaList } from './option-parsers.js';

function positiveInt(flag: string) {
  return (text: string): number => {
    if (!/^\d+$/.test(text.trim()) || Number(text) < 1)
      throw new InvalidArgumentError(`${flag} must be a whole number of at least 1`);
    return Number(text);
  };
}

const CONFIG_HELP = 'config file (YAML or JSON); default $FILINGS_EXPORT_CONFIG';

export function registerPipelineCommands(program: Command, app: CliApp): void {
  program
    .command('run')
    .description('Export a snapshot now (prints the plan; --wait follows it and ends with one JSON line)')
    .option('--config <file>', CONFIG_HELP)
    .option(
      '--tickers <list>',
      'companies: tickers and/or CIKs, comma-separated (default: config universe)',
      commaList,
    )
    .option(
      '--universe-file <file>',
      'companies from a file: one per line, or CSV with a ticker or cik column',
    )
    .option('--datasets <list>', 'datasets, comma-separated (default: config datasets)', commaList)
    .option('--formats <list>', 'parquet and/or ndjson (default: config output.formats)', commaList)
    .option('--out <dir>', 'output root (default: config output.dir, $FILINGS_EXPORT_OUT)')
    .option('--snapshot-id <id>', 'name the snapshot (default: adhoc-<date>-<hash of the request>)')
    .option('--wait', 'follow the snapshot to its end with progress; print one JSON line')
    .option('--local', 'also run the workers in this process (implies --wait)')
    .option('--allow-multi-day', 'start even when the snapshot exceeds the remaining monthly quota')
    .option('--retry', 'run a failed or stopped snapshot again (finished parts are reused)')
    .action(async (o) => (await import('./run-command.js')).runRunCommand(o, app));

  program
    .command('worker')
    .description('Run export workers until SIGTERM/SIGINT (any number of processes and machines)')
    .option('--config <file>', CONFIG_HELP)
    .option('--concurrency <n>', 'part jobs in flight in this process', positiveInt('--concurrency'))
    .option('--only <kind>', 'run only the "parts" or the "control" worker', (v: string) => {
      if (v !== 'parts' && v !== 'control')
        throw new InvalidArgumentError('--only must be "parts" or "control"');
      return v;
    })
    .action(async (o) => (await import('./worker-command.js')).runWorkerCommand(o, app));

  program
    .command('schedule')
    .description('Upsert the nightly job scheduler (cron and time zone from config); idempotent')
    .option('--config <file>', CONFIG_HELP)
    .option('--remove', 'remove the nightly scheduler')
    .option('--json', 'print the result as JSON')
    .action(async (o) => (await import('./schedule-command.js')).runScheduleCommand(o));

  program
    .command('status [snapshot]')
    .description('Progress of a snapshot per dataset and what it waits for (default: the latest)')
    .option('--config <file>', CONFIG_HELP)
    .option('--json', 'print the report as JSON')
    .option('--limit <n>', 'recent snapshots listed', positiveInt('--limit'))
    .action(async (id: string | undefined, o) =>
      (await import('./status-command.js')).runStatusCommand(id, o),
    );

  program
    .command('demo')
    .description('Export every bundled company with a private Redis and emulator, then query it with DuckDB')
    .option('--config <file>', CONFIG_HELP)
    .option('--out <dir>', 'output root (default: ./out)')
    .option('--tickers <list>', 'only these bundled companies', commaList)
    .action(async (o) => (await import('./demo-command.js')).runDemoCommand(o, app));
}
