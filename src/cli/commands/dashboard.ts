/**
 * `filings-export dashboard`: serves the status page (recent snapshots, progress with ETA, the
 * budget window and quota ledger, holds, last errors) with Bull Board at /queues, until
 * SIGTERM/SIGINT. Loopback and read-only by default; FILINGS_EXPORT_DASHBOARD_TOKEN enables the
 * retry action and is required to listen on any other address.
 */
import type { Command } from 'commander';
import type { CommonCliOptions } from '../command-support.js';
import { configOption, integer } from '../option-parsers.js';

export interface DashboardCliOptions extends CommonCliOptions {
  port?: number;
  host?: string;
}

export function register(program: Command): void {
  const cmd = program
    .command('dashboard')
    .description('Serve a status page of snapshots, the budget and errors, with Bull Board at /queues');
  configOption(cmd)
    .option(
      '--port <n>',
      'TCP port (default: dashboard.port, 8790; 0 = any free port)',
      integer('--port', 0, 65535),
    )
    .option('--host <addr>', 'listening address (default: dashboard.host, 127.0.0.1)')
    .action(async (o: DashboardCliOptions) => run(o));
}

export async function run(o: DashboardCliOptions): Promise<void> {
  const [
    { setup, onShutdownSignal, CLOSE_MARGIN_MS },
    { openPipeline },
    { startDashboard },
    { systemClock },
  ] = await Promise.all([
    import('../command-support.js'),
    import('../../pipeline/index.js'),
    import('../../dashboard/server.js'),
    import('../../types.js'),
  ]);
  const { config, logger } = setup(o, [
    { path: 'dashboard.port', value: o.port, flag: '--port' },
    { path: 'dashboard.host', value: o.host, flag: '--host' },
  ]);
  const ctx = await openPipeline(config, logger);
  try {
    const dashboard = await startDashboard({
      ctx,
      port: config.dashboard.port,
      host: config.dashboard.host,
      portSetting: '--port, or dashboard.port in the config',
      ...(config.dashboard.token ? { token: config.dashboard.token } : {}),
      clock: systemClock,
    });
    process.stdout.write(`dashboard on ${dashboard.url} (Bull Board at ${dashboard.url}queues)\n`);
    await new Promise<void>((resolve) =>
      onShutdownSignal(() => resolve(), {
        forceExitMs: CLOSE_MARGIN_MS,
        closing: () => 'closing the dashboard and its Redis connection',
      }),
    );
    await dashboard.close();
  } finally {
    await ctx.close();
  }
}
