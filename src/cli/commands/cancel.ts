/**
 * `filings-export cancel SNAPSHOT [--by NAME]`: cancels a queued, waiting or running snapshot. Its
 * jobs are removed and its record says cancelled, by whom and when; parts a worker holds end on
 * their own and their results are discarded. Published snapshots and the budget are untouched, and
 * `run --snapshot-id SNAPSHOT --retry` starts it again. Exit code: 0 cancelled, 1 nothing to cancel.
 */
import type { Command } from 'commander';
import type { CommonCliOptions } from '../command-support.js';
import { configOption } from '../option-parsers.js';

export interface CancelCliOptions extends CommonCliOptions {
  by?: string;
}

export function register(program: Command): void {
  const cmd = program
    .command('cancel <snapshot>')
    .description(
      'Cancel a queued, waiting or running snapshot: remove its jobs, record who and when (run --retry starts it again)',
    );
  configOption(cmd)
    .option('--by <name>', 'who cancels it, as the record says (default: <user>@<host>)')
    .action(async (id: string, o: CancelCliOptions) => run(id, o));
}

export async function run(snapshotId: string, o: CancelCliOptions): Promise<void> {
  const [{ hostname, userInfo }, { setup }, { InputError }, p] = await Promise.all([
    import('node:os'),
    import('../command-support.js'),
    import('../../errors.js'),
    import('../../pipeline/index.js'),
  ]);
  const by = o.by ?? `${userInfo().username}@${hostname()}`;
  if (by.trim() === '') throw new InputError('--by: must name who cancels the snapshot (it is empty)');
  const { config, logger } = setup(o);
  const ctx = await p.openPipeline(config, logger);
  try {
    const { record, removed, inFlight } = await p.cancelSnapshot(ctx, snapshotId, by.trim());
    const held =
      inFlight === 0
        ? ''
        : `; ${parts(inFlight, 'part')} held by a worker will end on ${inFlight === 1 ? 'its' : 'their'} own, result discarded`;
    process.stdout.write(
      `snapshot ${snapshotId} cancelled: ${parts(removed, 'queued part')} removed${held}\n` +
        `${record.message ?? ''}\n`,
    );
  } finally {
    await ctx.close();
  }
}

/** `1 part`, `2 parts`. */
function parts(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
