/**
 * `filings-export schedule`: upserts the nightly job scheduler (cron and time zone from config).
 * Idempotent: running it again replaces the scheduler's settings, never adds a second one.
 * `--remove` deletes it. Run it from one place (a deploy step), not from every worker.
 */
import type { Command } from 'commander';
import type { CommonCliOptions } from '../command-support.js';
import { configOption } from '../option-parsers.js';
import { counted } from '../../counted.js';

export interface ScheduleCliOptions extends CommonCliOptions {
  remove?: boolean;
  json?: boolean;
}

export function register(program: Command): void {
  const cmd = program
    .command('schedule')
    .description('Upsert the nightly job scheduler (cron and time zone from config); idempotent');
  configOption(cmd)
    .option('--remove', 'remove the nightly scheduler')
    .option('--json', 'print the result as JSON')
    .action(async (o: ScheduleCliOptions) => run(o));
}

export async function run(o: ScheduleCliOptions): Promise<void> {
  const [
    { setup },
    { loadUniverse, openPipeline, removeNightlySchedule, upsertNightlySchedule },
    { checkAnyOutputRoot },
    { s3Settings },
  ] = await Promise.all([
    import('../command-support.js'),
    import('../../pipeline/index.js'),
    import('../../output/staged-part/index.js'),
    import('../../output/storage/index.js'),
  ]);
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
    await checkAnyOutputRoot(config.output.dir, s3Settings(config.output));
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
          `next run ${info.next ?? 'unknown'}; ${counted(companies.length, 'company', 'companies')} x ${counted(config.datasets.length, 'dataset')} -> ${config.output.dir}\n`,
      );
  } finally {
    await ctx.close();
  }
}
