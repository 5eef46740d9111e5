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
  const { openOutputRoot, snapshotOrLatest } = await import('../output-root.js');
  const root = await openOutputRoot(o);
  try {
    const id = await snapshotOrLatest(root.storage, snapshot);
    const { verifySnapshot, formatVerifyReport, withLocalSnapshot } = await import('../../output/index.js');
    // A bucket's snapshot is copied to a temp dir first: DuckDB then reads exactly the stored bytes.
    const report = await withLocalSnapshot(
      root.storage,
      id,
      { data: true, ...(root.tmpDir !== undefined ? { tmpDir: root.tmpDir } : {}) },
      (local) => verifySnapshot(local, id, { checkValues: o.values !== false }),
    );
    process.stdout.write(
      o.json === true
        ? `${JSON.stringify({ root: root.storage.root, ...report }, null, 2)}\n`
        : `${formatVerifyReport(report)}\n`,
    );
    if (!report.ok) process.exitCode = 1;
  } finally {
    await root.close();
  }
}
