/** `filings-export ddl --dialect D [SNAPSHOT]`: prints CREATE statements over a snapshot's layout. */
import type { Command } from 'commander';
import { configOption, oneOf, outOption } from '../option-parsers.js';
import type { OutputCliOptions } from '../output-root.js';
// The leaf list, not the output index: choices are read without loading DuckDB.
import { DDL_DIALECTS, type DdlDialect } from '../../output/readers/ddl-dialects.js';
import { OUTPUT_FORMATS, type OutputFormat } from '../../types.js';

export interface DdlCliOptions extends OutputCliOptions {
  dialect: DdlDialect;
  format?: OutputFormat;
  location?: string;
  tablePrefix?: string;
  iceberg?: boolean;
}

export function register(program: Command): void {
  const cmd = program
    .command('ddl [snapshot]')
    .description('Print statements creating tables over a snapshot (default: the latest published one)')
    .requiredOption('--dialect <name>', `one of ${DDL_DIALECTS.join(', ')}`, oneOf('--dialect', DDL_DIALECTS))
    .option(
      '--format <format>',
      `${OUTPUT_FORMATS.join(' or ')} files (default: parquet when written)`,
      oneOf('--format', OUTPUT_FORMATS),
    )
    .option('--location <uri>', 'where the output root is as the warehouse sees it (gs://…, @stage, s3://…)')
    .option('--table-prefix <prefix>', 'prefix of table names, e.g. analytics.')
    .option('--iceberg', "read or register each dataset's Iceberg table (every retained night) instead")
    .action(async (snapshot: string | undefined, o: DdlCliOptions) => run(snapshot, o));
  configOption(outOption(cmd));
}

export async function run(snapshot: string | undefined, o: DdlCliOptions): Promise<void> {
  const { openOutputRoot, snapshotOrLatest } = await import('../output-root.js');
  const root = await openOutputRoot(o);
  try {
    if (o.iceberg === true) {
      const { icebergDdl } = await import('../../output/index.js');
      const opts = { location: o.location, tablePrefix: o.tablePrefix };
      process.stdout.write(
        await icebergDdl(root.storage, o.dialect, JSON.parse(JSON.stringify(opts)) as typeof opts),
      );
      return;
    }
    const id = await snapshotOrLatest(root.storage, snapshot);
    const { ddl, withLocalSnapshot } = await import('../../output/index.js');
    const text = await withLocalSnapshot(
      root.storage,
      id,
      { data: false, ...(root.tmpDir !== undefined ? { tmpDir: root.tmpDir } : {}) },
      (local) =>
        ddl(local, id, o.dialect, {
          ...(o.format !== undefined ? { format: o.format } : {}),
          ...(o.location !== undefined ? { location: o.location } : {}),
          ...(root.storage.kind === 's3' ? { bucketUrl: root.storage.root } : {}),
          ...(o.tablePrefix !== undefined ? { tablePrefix: o.tablePrefix } : {}),
        }),
    );
    process.stdout.write(text);
  } finally {
    await root.close();
  }
}
