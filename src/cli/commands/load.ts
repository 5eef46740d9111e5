/**
 * `filings-export load --into duckdb:PATH|postgres://…`: brings warehouse tables to the published
 * snapshots (default: every one not yet loaded, oldest first, up to `latest`), exactly once.
 * A load that would empty a table or remove more than half of its companies needs --allow-shrink;
 * --history keeps point-in-time history tables beside the current ones.
 */
import { InvalidArgumentError, type Command } from 'commander';
import { DATASETS, isDatasetName, type DatasetName } from '../../datasets/index.js';
import { commaList, configOption, outOption } from '../option-parsers.js';
import type { OutputCliOptions } from '../output-root.js';
import { TARGET_SYNTAX } from '../../warehouse/target.js';

export interface LoadCliOptions extends OutputCliOptions {
  into: string;
  schema?: string;
  datasets?: DatasetName[];
  snapshot?: string;
  dryRun?: boolean;
  allowShrink?: boolean;
  history?: boolean;
  json?: boolean;
}

function datasetList(text: string): DatasetName[] {
  return commaList(text).map((d) => {
    if (!isDatasetName(d))
      throw new InvalidArgumentError(`unknown dataset ${JSON.stringify(d)}: use ${DATASETS.join(', ')}`);
    return d;
  });
}

export function register(program: Command): void {
  const cmd = program
    .command('load')
    .description(
      'Load published snapshots into DuckDB or PostgreSQL tables, exactly once (full or from `changes`)',
    )
    .requiredOption('--into <target>', `${TARGET_SYNTAX} (password: URL, PGPASSWORD or .pgpass)`)
    .option('--schema <name>', 'schema of the tables (default: main in DuckDB, public in PostgreSQL)')
    .option(
      '--datasets <list>',
      'datasets to load, comma-separated (default: every dataset of the snapshot)',
      datasetList,
    )
    .option(
      '--snapshot <id>',
      'load this snapshot (default: every published snapshot not yet loaded, up to latest)',
    )
    .option('--dry-run', 'print the plan; change nothing')
    .option(
      '--allow-shrink',
      'apply a load that would leave a table empty or remove more than half of its companies (refused otherwise)',
    )
    .option(
      '--history',
      'also keep <dataset>_history: every version of every key, valid from/to the nights that published and replaced it',
    )
    .option('--json', 'print the report as JSON')
    .action(async (o: LoadCliOptions) => run(o));
  configOption(outOption(cmd));
}

export async function run(o: LoadCliOptions): Promise<void> {
  const { openOutputRoot } = await import('../output-root.js');
  const { openWarehouse, loadSnapshots, formatLoadReport, publishedSnapshots } =
    await import('../../warehouse/index.js');
  const root = await openOutputRoot(o);
  try {
    // Before the warehouse is opened: a root with nothing published (a mistyped --out, a bucket
    // that refuses us) fails without creating a database file.
    await publishedSnapshots(root.storage);
    const warehouse = await openWarehouse(o.into, {
      ...(o.schema !== undefined ? { schema: o.schema } : {}),
      ...(root.tmpDir !== undefined ? { tmpDir: root.tmpDir } : {}),
    });
    try {
      const report = await loadSnapshots({
        storage: root.storage,
        warehouse,
        ...(o.datasets !== undefined ? { datasets: o.datasets } : {}),
        ...(o.snapshot !== undefined ? { snapshot: o.snapshot } : {}),
        ...(o.dryRun === true ? { dryRun: true } : {}),
        ...(o.allowShrink === true ? { allowShrink: true } : {}),
        ...(o.history === true ? { history: true } : {}),
        ...(root.tmpDir !== undefined ? { tmpDir: root.tmpDir } : {}),
      });
      process.stdout.write(
        o.json === true ? `${JSON.stringify(report, null, 2)}\n` : formatLoadReport(report),
      );
    } finally {
      await warehouse.close();
    }
  } finally {
    await root.close();
  }
}
