/** `filings-export ddl --dialect D [SNAPSHOT]`: prints CREATE statements over a snapshot's layout. */
import { InvalidArgumentError, type Command } from 'commander';
import { outputRoot, snapshotOrLatest, type OutputCliOptions } from './output-command-support.js';

const DIALECTS = ['duckdb', 'bigquery', 'snowflake', 'spark'] as const;

export interface DdlCliOptions extends OutputCliOptions {
  dialect: (typeof DIALECTS)[number];
  format?: 'parquet' | 'ndjson';
  location?: string;
  tablePrefix?: string;
}

function oneOf<T extends string>(flag: string, allowed: readonly T[]) {
  return (text: string): T => {
    if (!(allowed as readonly string[]).includes(text)) {
      throw new InvalidArgumentError(`${flag} must be one of ${allowed.join(', ')}`);
    }
    return text as T;
  };
}

export function registerDdlCommand(program: Command): void {
  program
    .command('ddl [snapshot]')
    .description('Print statements creating tables over a snapshot (default: the latest published one)')
    .requiredOption('--dialect <name>', `one of ${DIALECTS.join(', ')}`, oneOf('--dialect', DIALECTS))
    .option(
      '--format <format>',
      'parquet or ndjson files (default: parquet when written)',
      oneOf('--format', ['parquet', 'ndjson'] as const),
    )
    .option('--location <uri>', 'where the output root is as the warehouse sees it (gs://…, @stage, s3://…)')
    .option('--table-prefix <prefix>', 'prefix of table names, e.g. analytics.')
    .option('--out <dir>', 'output root (default: config output.dir, $FILINGS_EXPORT_OUT, ./out)')
    .option('--config <file>', 'config file (YAML or JSON); default $FILINGS_EXPORT_CONFIG')
    .action(async (snapshot: string | undefined, o: DdlCliOptions) => runDdlCommand(snapshot, o));
}

export async function runDdlCommand(snapshot: string | undefined, o: DdlCliOptions): Promise<void> {
  const root = await outputRoot(o);
  const id = await snapshotOrLatest(root, snapshot);
  const { ddl } = await import('../output/index.js');
  process.stdout.write(
    await ddl(root, id, o.dialect, {
      ...(o.format !== undefined ? { format: o.format } : {}),
      ...(o.location !== undefined ? { location: o.location } : {}),
      ...(o.tablePrefix !== undefined ? { tablePrefix: o.tablePrefix } : {}),
    }),
  );
}
