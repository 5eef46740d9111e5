/** `filings-export verify [SNAPSHOT]`: re-reads every file of a published snapshot against its manifest. */
import type { Command } from 'commander';
import { outputRoot, snapshotOrLatest, type OutputCliOptions } from './output-command-support.js';

export interface VerifyCliOptions extends OutputCliOptions {
  json?: boolean;
  values?: boolean;
}

export function registerVerifyCommand(program: Command): void {
  program
    .command('verify [snapshot]')
    .description(
      'Re-read every file of a snapshot: counts, sha256, schema, value_num = value_scaled_int x 10^scale',
    )
    .option('--out <dir>', 'output root (default: config output.dir, $FILINGS_EXPORT_OUT, ./out)')
    .option('--config <file>', 'config file (YAML or JSON); default $FILINGS_EXPORT_CONFIG')
    .option('--json', 'print the report as JSON')
    .option('--no-values', 'skip the per-row value identity check')
    .action(async (snapshot: string | undefined, o: VerifyCliOptions) => runVerifyCommand(snapshot, o));
}

export async function runVerifyCommand(snapshot: string | undefined, o: VerifyCliOptions): Promise<void> {
  const root = await outputRoot(o);
  const id = await snapshotOrLatest(root, snapshot);
  const { verifySnapshot, formatVerifyReport } = await import('../output/index.js');
  const report = await verifySnapshot(root, id, { checkValues: o.values !== false });
  process.stdout.write(
    o.json === true ? `${JSON.stringify(report, null, 2)}\n` : `${formatVerifyReport(report)}\n`,
  );
  if (!report.ok) process.exitCode = 1;
}
