/** `filings-export iceberg rebuild`: writes every dataset's Iceberg table from the retained published snapshots. */
import type { Command } from 'commander';
import { configOption, outOption } from '../option-parsers.js';
import type { OutputCliOptions } from '../output-root.js';

export function register(program: Command): void {
  const iceberg = program
    .command('iceberg')
    .description('Apache Iceberg tables over the published snapshots');
  const cmd = iceberg
    .command('rebuild')
    .description(
      "Write every dataset's Iceberg table again from the retained published snapshots, oldest first",
    )
    .action(async (o: OutputCliOptions) => rebuild(o));
  configOption(outOption(cmd));
}

export async function rebuild(o: OutputCliOptions): Promise<void> {
  const { openOutputRoot } = await import('../output-root.js');
  const root = await openOutputRoot(o);
  try {
    const { rebuildTables, formatRebuild } = await import('../../output/iceberg/index.js');
    process.stdout.write(`${formatRebuild(await rebuildTables(root.storage))}\n`);
  } finally {
    await root.close();
  }
}
