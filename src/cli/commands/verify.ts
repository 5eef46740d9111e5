/** `filings-export verify [SNAPSHOT]`: re-reads every file of a published snapshot against its manifest. */
import type { Command } from 'commander';
import { configOption, outOption } from '../option-parsers.js';
import type { OutputCliOptions } from '../output-root.js';

export interface VerifyCliOptions extends OutputCliOptions {
  json?: boolean;
  values?: boolean;
}

export function register(program: Command): void {
  const cmd = program
    .command('verify [snapshot]')
    .description(
      'Re-read every file of a snapshot: counts, sha256, schema, value_num = value_scaled_int x 10^scale',
    )
    .option('--json', 'print the report as JSON')
    .option('--no-values', 'skip the per-row value identity check')
    .action(async (snapshot: string | undefined, o: VerifyCliOptions) => run(snapshot, o));
  configOption(outOption(cmd));
}

export async function run(snapshot: string | undefined, o: VerifyCliOptions): Promise<void> {
  const { outputRoot, snapshotOrLatest } = await import('../output-root.js');
  const root = await outputRoot(o);
  const id = await snapshotOrLatest(root, snapshot);
  const { verifySnapshot, formatVerifyReport } = await import('../../output/index.js');
  const report = await verifySnapshot(root, id, { checkValues: o.values !== false });
  process.stdout.write(
    o.json === true ? `${JSON.stringify(report, null, 2)}\n` : `${formatVerifyReport(report)}\n`,
  );
  if (!report.ok) process.exitCode = 1;
}
