/**
 * `filings-export schedule`: upserts the nightly job scheduler (cron and time zone from config).
 * Idempotent: running it again replaces the scheduler's settings, never adds a second one.
 * `--remove` deletes it. Run it from one place (a deploy step), not from every worker.
 */
import { loadUniverse } from '../pipeline/universe.js';
import { openPipeline } from '../pipeline/context.js';
import { removeNightlySchedule, upsertNightlySchedule } from '../pipeline/schedule.js';
import { setup, type CommonCliOptions } from './command-support.js';

export interface ScheduleCliOptions extends CommonCliOptions {
  remove?: boolean;
  json?: boolean;
}

export async function runScheduleCommand(o: ScheduleCliOptions): Promise<void> {
  const { config, logger } = setup(o);
  const ctx = await openPipeline(config, logger);
  try {
    if (o.remove) {
      const removed = await removeNightlySchedule(ctx);
      process.stderr.write(
        removed
          ? `nightly scheduler ${config.schedule.scheduler_id} removed\n`
          : `no nightly scheduler ${config.schedule.scheduler_id} to remove\n`,
      );
      return;
    }
    const companies = await loadUniverse(config.universe);
    const info = await upsertNightlySchedule(ctx, {
      v: 1,
      tz: config.schedule.tz,
      companies,
      datasets: config.datasets,
      formats: config.output.formats,
      outDir: config.output.dir,
    });
    if (o.json)
      process.stdout.write(
        `${JSON.stringify({ ...info, companies: companies.length, datasets: config.datasets })}\n`,
      );
    else
      process.stderr.write(
        `nightly scheduler ${info.id} ${info.replaced ? 'updated' : 'created'}: '${info.pattern}' (${info.tz}); ` +
          `next run ${info.next ?? 'unknown'}; ${companies.length} companies x ${config.datasets.length} datasets -> ${config.output.dir}\n`,
      );
  } finally {
    await ctx.close();
  }
}
