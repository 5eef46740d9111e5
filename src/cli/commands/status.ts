/**
 * `filings-export status [SNAPSHOT]`: progress per dataset (done / not_found / bad_request /
 * failed / pending, rows), the state, and what the snapshot waits for. Without an id: the most
 * recent snapshot, and a line for each other recent one. `--json` prints the report as JSON.
 */
import type { Command } from 'commander';
import type { CommonCliOptions } from '../command-support.js';
import { configOption, positiveInt } from '../option-parsers.js';
import { counted } from '../../counted.js';

export interface StatusCliOptions extends CommonCliOptions {
  json?: boolean;
  limit?: number;
}

export function register(program: Command): void {
  const cmd = program
    .command('status [snapshot]')
    .description('Progress of a snapshot per dataset and what it waits for (default: the latest)');
  configOption(cmd)
    .option('--json', 'print the report as JSON')
    .option('--limit <n>', 'recent snapshots listed', positiveInt('--limit'))
    .action(async (id: string | undefined, o: StatusCliOptions) => run(id, o));
}

export async function run(snapshotId: string | undefined, o: StatusCliOptions): Promise<void> {
  // The status modules alone, not the pipeline's index: status never loads BullMQ or DuckDB.
  const [{ setup }, { InputError }, { formatStatus, openRecords, readStatus, totals }] = await Promise.all([
    import('../command-support.js'),
    import('../../errors.js'),
    import('../../pipeline/status-view.js'),
  ]);
  const { config, logger } = setup(o);
  const ctx = await openRecords(config, logger);
  try {
    const recent = await ctx.store.list(o.limit ?? 10);
    const id = snapshotId ?? recent[0];
    if (id === undefined) {
      if (o.json) process.stdout.write('null\n');
      else process.stdout.write(`no snapshots yet in ${config.redis.prefix}:${config.queue.name}\n`);
      return;
    }
    const report = await readStatus(ctx, id, { all: o.json === true });
    if (!report) throw new InputError(`snapshot ${id}: no such snapshot (or its record expired)`);
    if (o.json) {
      process.stdout.write(`${JSON.stringify(report)}\n`);
      return;
    }
    process.stdout.write(`${formatStatus(report)}\n`);
    if (snapshotId === undefined && recent.length > 1) {
      process.stdout.write('\nrecent snapshots:\n');
      for (const other of recent) {
        const r = await ctx.store.view(other);
        if (!r) continue;
        const t = totals(r);
        process.stdout.write(
          `  ${other.padEnd(40)} ${r.state.padEnd(10)} ${t.total - t.pending}/${counted(t.total, 'part')}  ${counted(t.rows, 'row', 'rows', t.rows.toLocaleString('en-US'))}  ${new Date(r.createdAtMs).toISOString()}${other === report.latest ? '  latest' : ''}\n`,
        );
      }
    }
  } finally {
    await ctx.close();
  }
}
