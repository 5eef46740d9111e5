/**
 * `filings-export ddl --iceberg`: the statement that reads or registers each dataset's Iceberg
 * table in a warehouse, with its time-travel form, from the tables' current metadata (not from a
 * snapshot's manifest: the table is every retained night).
 */
import { InputError } from '../../errors.js';
import { DATASETS, type DatasetName } from '../../types.js';
import { readTable, SUMMARY_SNAPSHOT_ID, type TableVersion, versionFile } from '../iceberg/index.js';
import type { Storage } from '../storage/index.js';
import type { DdlDialect } from './ddl-dialects.js';

export interface IcebergDdlOptions {
  /** Where the output root is as the warehouse sees it. @defaultValue the root itself (`gs://YOUR_BUCKET/filings-export` for bigquery) */
  location?: string;
  /** Prefix of table names, e.g. `analytics.`. @defaultValue none */
  tablePrefix?: string;
}

interface Table {
  name: string;
  dataset: DatasetName;
  /** The table location as the warehouse sees it. */
  location: string;
  /** The current metadata file relative to the root, and as the warehouse sees it. */
  metadataRel: string;
  metadataUrl: string;
  table: TableVersion;
}

/** How DuckDB (its `iceberg` extension) reads the table at `location`: `ddl --iceberg` and the demo print it. */
export const duckdbIcebergScan = (location: string): string => `SELECT * FROM iceberg_scan('${location}')`;

const STATEMENTS: Record<DdlDialect, (t: Table) => string[]> = {
  duckdb: (t) => [
    `CREATE OR REPLACE VIEW ${t.name} AS ${duckdbIcebergScan(t.location)};`,
    `-- time travel: SELECT * FROM iceberg_scan('${t.location}', snapshot_from_id => <iceberg snapshot id>);`,
  ],
  spark: (t) => [
    `CREATE TABLE IF NOT EXISTS ${t.name} USING iceberg LOCATION '${t.location}';`,
    `-- time travel: SELECT * FROM ${t.name} VERSION AS OF <iceberg snapshot id>;`,
    `-- Trino: CALL iceberg.system.register_table(schema_name => 'filings', table_name => '${t.dataset}', table_location => '${t.location}');`,
    `--   time travel: SELECT * FROM iceberg.filings.${t.dataset} FOR VERSION AS OF <iceberg snapshot id>;`,
  ],
  snowflake: (t) => [
    `CREATE OR REPLACE ICEBERG TABLE ${t.name}`,
    `  EXTERNAL_VOLUME = 'filings_export_volume' CATALOG = 'filings_export_catalog'`,
    `  METADATA_FILE_PATH = '${t.metadataRel}';`,
    `-- after each night: ALTER ICEBERG TABLE ${t.name} REFRESH '<dataset>/metadata/vN.metadata.json';`,
    `-- time travel: a table over an older vN.metadata.json (one per night, kept while the night is retained)`,
  ],
  bigquery: (t) => [
    `CREATE OR REPLACE EXTERNAL TABLE ${t.name}`,
    `  WITH CONNECTION \`PROJECT.REGION.CONNECTION\``,
    `  OPTIONS (format = 'ICEBERG', uris = ['${t.metadataUrl}']);`,
    `-- time travel: the same statement over an older vN.metadata.json`,
  ],
};

/** The statements for every dataset that has a table under the root. */
export async function icebergDdl(
  storage: Storage,
  dialect: DdlDialect,
  opts: IcebergDdlOptions = {},
): Promise<string> {
  const base = (
    opts.location ?? (dialect === 'bigquery' ? 'gs://YOUR_BUCKET/filings-export' : storage.root)
  ).replace(/\/+$/, '');
  const out = [`-- filings-export Iceberg tables under ${base}, ${dialect}`];
  if (dialect === 'snowflake')
    out.push(
      `-- filings_export_volume: an external volume over ${base}; filings_export_catalog: CATALOG_SOURCE = OBJECT_STORE`,
    );
  if (dialect === 'duckdb') out.push('INSTALL iceberg; LOAD iceberg;');
  let tables = 0;
  for (const dataset of DATASETS) {
    const table = await readTable(storage, dataset);
    if (table === null) continue;
    tables += 1;
    const metadataRel = `${dataset}/metadata/${versionFile(table.version)}`;
    const t: Table = {
      name: `${opts.tablePrefix ?? ''}${dataset}`,
      dataset,
      location: `${base}/${dataset}`,
      metadataRel,
      metadataUrl: `${base}/${metadataRel}`,
      table,
    };
    const nights = table.metadata.snapshots.map(
      (s) => `${s.summary[SUMMARY_SNAPSHOT_ID]} = ${s['snapshot-id']}`,
    );
    out.push(
      '',
      `-- ${dataset}: v${table.version}; iceberg snapshot ids by night: ${nights.join(', ')}`,
      ...STATEMENTS[dialect](t),
    );
  }
  if (tables === 0)
    throw new InputError(
      `no Iceberg table under ${storage.root}: run \`filings-export iceberg rebuild --out ${storage.root}\` first`,
    );
  return `${out.join('\n')}\n`;
}
