/**
 * `filings-export ddl`: statements that expose a snapshot's datasets in a warehouse, typed from the
 * snapshot's manifest (its exact schema versions), over the dataset-first Hive layout with the
 * partition keys snapshot_date (DATE) and snapshot_id (string).
 *
 * Per dialect:
 * - duckdb: a view per dataset over every published snapshot (files of unpublished snapshots are
 *   filtered out through `_snapshots/*\/_SUCCESS`), and one over exactly this snapshot's files.
 * - bigquery: external tables with hive partitioning over a gs:// copy of the output root.
 * - snowflake: external tables over a stage holding the output root, partition columns parsed
 *   from the file path.
 * - spark: partitioned tables over the output root (Spark SQL / Databricks).
 */
import { resolve } from 'node:path';
import { InputError } from '../../errors.js';
import { type DatasetName, type OutputFormat } from '../../types.js';
import { CHANGE_KEY } from '../publish/index.js';
import { sqlString } from '../convert/index.js';
import { readManifest, type Manifest, type ManifestDataset } from '../catalog/index.js';
import type { ColumnType } from '../../datasets/index.js';
import { DDL_DIALECTS, type DdlDialect } from './ddl-dialects.js';

export { DDL_DIALECTS, type DdlDialect };

export interface DdlOptions {
  /** Which files the tables read when the snapshot has both. @defaultValue parquet when written */
  format?: OutputFormat;
  /**
   * Where the output root is, as the warehouse sees it. @defaultValue the absolute local root for
   * duckdb and spark, `gs://YOUR_BUCKET/filings-export` for bigquery, `@filings_export_stage` for snowflake
   */
  location?: string;
  /** Prefix of table names, e.g. `analytics.` (BigQuery dataset, Snowflake schema). @defaultValue none */
  tablePrefix?: string;
  /**
   * The output root's own URL when it is a bucket (`s3://bucket/prefix`): where DuckDB and Spark
   * read unless `location` says otherwise, and the URL of the Snowflake stage hint. @defaultValue none
   */
  bucketUrl?: string;
}

type Dialect = DdlDialect;

const TYPES: Record<ColumnType, Record<Dialect, string>> = {
  VARCHAR: { duckdb: 'VARCHAR', bigquery: 'STRING', snowflake: 'VARCHAR', spark: 'STRING' },
  BOOLEAN: { duckdb: 'BOOLEAN', bigquery: 'BOOL', snowflake: 'BOOLEAN', spark: 'BOOLEAN' },
  INTEGER: { duckdb: 'INTEGER', bigquery: 'INT64', snowflake: 'INTEGER', spark: 'INT' },
  BIGINT: { duckdb: 'BIGINT', bigquery: 'INT64', snowflake: 'BIGINT', spark: 'BIGINT' },
  DOUBLE: { duckdb: 'DOUBLE', bigquery: 'FLOAT64', snowflake: 'DOUBLE', spark: 'DOUBLE' },
  DATE: { duckdb: 'DATE', bigquery: 'DATE', snowflake: 'DATE', spark: 'DATE' },
  TIMESTAMPTZ: {
    duckdb: 'TIMESTAMPTZ',
    bigquery: 'TIMESTAMP',
    snowflake: 'TIMESTAMP_TZ',
    spark: 'TIMESTAMP',
  },
  // NUMERIC holds 29 integer digits only; DECIMAL(38,0) needs BIGNUMERIC.
  'DECIMAL(38,0)': {
    duckdb: 'DECIMAL(38,0)',
    bigquery: 'BIGNUMERIC',
    snowflake: 'NUMBER(38,0)',
    spark: 'DECIMAL(38,0)',
  },
  'VARCHAR[]': { duckdb: 'VARCHAR[]', bigquery: 'ARRAY<STRING>', snowflake: 'ARRAY', spark: 'ARRAY<STRING>' },
  // BigQuery cannot load Parquet into JSON columns (only CSV/JSON/Avro), so Parquet JSON is STRING there.
  JSON: { duckdb: 'JSON', bigquery: 'JSON', snowflake: 'VARIANT', spark: 'STRING' },
};

function typeFor(t: ColumnType, dialect: Dialect, format: OutputFormat): string {
  if (dialect === 'bigquery' && t === 'JSON' && format === 'parquet') return 'STRING';
  return TYPES[t][dialect];
}

export async function ddl(
  root: string,
  snapshotId: string,
  dialect: DdlDialect,
  opts: DdlOptions = {},
): Promise<string> {
  if (!(DDL_DIALECTS as readonly string[]).includes(dialect)) {
    throw new InputError(`unknown dialect ${JSON.stringify(dialect)}: use one of ${DDL_DIALECTS.join(', ')}`);
  }
  const m = await readManifest(root, snapshotId);
  const format = opts.format ?? (m.formats.includes('parquet') ? 'parquet' : 'ndjson');
  if (!m.formats.includes(format)) {
    throw new InputError(`snapshot ${snapshotId} has no ${format} files (formats: ${m.formats.join(', ')})`);
  }
  const prefix = opts.tablePrefix ?? '';
  const out: string[] = [
    `-- filings-export snapshot ${m.snapshot_id} (snapshot_date ${m.snapshot_date}), ${format} files, ${dialect}`,
    `-- Layout: ${m.layout}`,
  ];
  const base = opts.location ?? opts.bucketUrl;
  if (dialect === 'duckdb' && base !== undefined && /^s3:\/\//i.test(base))
    out.push(
      `-- Reads the bucket through DuckDB's httpfs; credentials from the AWS chain (add ENDPOINT and URL_STYLE 'path' for MinIO and other non-AWS servers)`,
      `INSTALL httpfs; LOAD httpfs;`,
      `CREATE SECRET IF NOT EXISTS filings_export_s3 (TYPE s3, PROVIDER credential_chain);`,
    );
  if (dialect === 'spark' && base !== undefined && /^s3:\/\//i.test(base))
    out.push(
      `-- On open-source Spark (Hadoop S3A) write the location as s3a://; Databricks and EMR read s3:// as is`,
    );
  const entries = (Object.entries(m.datasets) as [DatasetName, ManifestDataset | undefined][]).filter(
    (e): e is [DatasetName, ManifestDataset] => e[1] !== undefined,
  );
  for (const [dataset, ds] of entries) {
    out.push('');
    if (ds.files === 0) {
      out.push(
        `-- ${dataset}: no rows in this snapshot (schema version ${ds.schema_version}); no table created`,
      );
      continue;
    }
    out.push(
      `-- ${dataset}: schema version ${ds.schema_version}${ds.schema_inferred ? ' (inferred from API rows)' : ''}, ${ds.rows} rows`,
    );
    out.push(
      ...DATASET_DDL[dialect]({
        root,
        m,
        dataset,
        ds,
        format,
        prefix,
        location: opts.location,
        bucketUrl: opts.bucketUrl,
      }),
    );
  }
  if (m.changes !== undefined)
    out.push('', ...changesDdl(m, dialect, prefix, opts.location ?? opts.bucketUrl ?? resolve(root)));
  return `${out.join('\n')}\n`;
}

/**
 * The `changes` dataset of the snapshot, and the MERGE that applies it to a table holding the
 * previous snapshot's rows of a facts dataset (same statement shape in all four dialects).
 */
function changesDdl(m: Manifest, dialect: Dialect, prefix: string, base: string): string[] {
  const c = m.changes!;
  const out = [
    `-- changes against ${c.against}: ${c.counts.added} added, ${c.counts.changed} changed, ${c.counts.removed} removed (fact rows; key fact_key + _requested_ticker)`,
  ];
  const source =
    dialect === 'duckdb'
      ? `(SELECT * FROM read_parquet([${c.files.map((f) => sqlString(joinUri(base, f.path))).join(', ')}]))`
      : `${prefix}changes`;
  if (dialect !== 'duckdb')
    out.push(
      `-- ${prefix}changes: an external table over ${joinUri(base, 'changes')}/ like the facts tables above, with two more columns first: change STRING, source_dataset STRING`,
    );
  for (const f of c.files) {
    const ds = m.datasets[f.source_dataset];
    if (ds === undefined) continue;
    const target = `${prefix}${f.source_dataset}_current`;
    out.push(
      `-- ${target}: a table holding ${c.against}'s ${f.source_dataset} rows; this brings it to ${m.snapshot_id}`,
      ...mergeChangesSql(
        target,
        `(SELECT * FROM ${source} WHERE source_dataset = '${f.source_dataset}')`,
        ds.columns.map((col) => col.name),
      ).split('\n'),
    );
  }
  return out;
}

/**
 * The MERGE that applies `changes` rows (`source`, with a `change` column) to `target`, matched on
 * CHANGE_KEY: printed by ddl, run by `load`. `ident` quotes column names (printed: as they are).
 */
export function mergeChangesSql(
  target: string,
  source: string,
  columns: readonly string[],
  ident: (name: string) => string = (n) => n,
): string {
  const rest = columns.filter((k) => !CHANGE_KEY.includes(k));
  return [
    `MERGE INTO ${target} AS t`,
    `USING ${source} AS c`,
    `ON ${CHANGE_KEY.map((k) => `t.${ident(k)} = c.${ident(k)}`).join(' AND ')}`,
    `WHEN MATCHED AND c.change = 'removed' THEN DELETE`,
    `WHEN MATCHED THEN UPDATE SET ${rest.map((k) => `${ident(k)} = c.${ident(k)}`).join(', ')}`,
    `WHEN NOT MATCHED AND c.change <> 'removed' THEN INSERT (${columns.map(ident).join(', ')}) VALUES (${columns.map((k) => `c.${ident(k)}`).join(', ')});`,
  ].join('\n');
}

/** What every dialect's statements for one dataset are written from. */
interface DatasetDdlInput {
  /** The local output root (the default location of duckdb and spark). */
  root: string;
  m: Manifest;
  dataset: DatasetName;
  ds: ManifestDataset;
  format: OutputFormat;
  prefix: string;
  /** `DdlOptions.location`: each dialect has its own default. */
  location: string | undefined;
  bucketUrl: string | undefined;
}

/** One row per dialect: the statements exposing one dataset of the snapshot. */
const DATASET_DDL: Record<DdlDialect, (input: DatasetDdlInput) => string[]> = {
  duckdb: duckdbDdl,
  bigquery: (i) => bigqueryDdl({ ...i, location: i.location ?? 'gs://YOUR_BUCKET/filings-export' }),
  snowflake: (i) => snowflakeDdl({ ...i, location: i.location ?? '@filings_export_stage' }),
  spark: sparkDdl,
};

function joinUri(base: string, ...parts: string[]): string {
  return [base.replace(/\/+$/, ''), ...parts].join('/');
}

function ndjsonColumns(ds: ManifestDataset): string {
  return `{${ds.columns.map((c) => `${sqlString(c.name)}: '${c.type}'`).join(', ')}}`;
}

function duckdbDdl({ root, m, dataset, ds, format, prefix, location, bucketUrl }: DatasetDdlInput): string[] {
  const base = location ?? bucketUrl ?? resolve(root);
  const hive = `hive_partitioning = true, hive_types = {'snapshot_date': DATE, 'snapshot_id': VARCHAR}`;
  const ext = format === 'parquet' ? 'parquet' : 'ndjson.gz';
  const reader = (paths: string): string =>
    format === 'parquet'
      ? `read_parquet(${paths}, ${hive}, union_by_name = true)`
      : `read_ndjson(${paths}, columns = ${ndjsonColumns(ds)}, format = 'newline_delimited', compression = 'gzip', ${hive})`;
  const files = m.files
    .filter((f) => f.dataset === dataset && f.format === format)
    .map((f) => sqlString(joinUri(base, f.path)));
  const success = sqlString(joinUri(base, '_snapshots', '*', '_SUCCESS'));
  return [
    `-- every published snapshot (a snapshot is published when _snapshots/<id>/_SUCCESS exists)`,
    `CREATE OR REPLACE VIEW ${prefix}${dataset} AS`,
    `SELECT * FROM ${reader(sqlString(joinUri(base, dataset, '*', '*', `*.${ext}`)))}`,
    `WHERE snapshot_id IN (SELECT regexp_extract(file, '_snapshots[/\\\\]([^/\\\\]+)[/\\\\]_SUCCESS$', 1) FROM glob(${success}));`,
    `-- exactly the files of snapshot ${m.snapshot_id}`,
    `CREATE OR REPLACE VIEW ${prefix}${dataset}_${sqlSafe(m.snapshot_id)} AS`,
    `SELECT * FROM ${reader(`[${files.join(', ')}]`)};`,
  ];
}

function sqlSafe(id: string): string {
  return id.replace(/[^A-Za-z0-9_]/g, '_');
}

function bigqueryDdl({
  m,
  dataset,
  ds,
  format,
  prefix,
  location,
}: DatasetDdlInput & { location: string }): string[] {
  const cols = ds.columns.map((c) => `  ${c.name} ${typeFor(c.type, 'bigquery', format)}`).join(',\n');
  const ext = format === 'parquet' ? 'parquet' : 'ndjson.gz';
  const options =
    format === 'parquet'
      ? [`format = 'PARQUET'`, `enable_list_inference = true`, `decimal_target_types = ['BIGNUMERIC']`]
      : [`format = 'NEWLINE_DELIMITED_JSON'`, `compression = 'GZIP'`];
  return [
    `-- copy the output root to ${location} first (gcloud storage cp -r); only published snapshots should be copied`,
    `CREATE OR REPLACE EXTERNAL TABLE \`${prefix}${dataset}\` (`,
    cols,
    `)`,
    `WITH PARTITION COLUMNS (snapshot_date DATE, snapshot_id STRING)`,
    `OPTIONS (`,
    `  ${[
      ...options,
      `uris = ['${joinUri(location, dataset, `*.${ext}`)}']`,
      `hive_partition_uri_prefix = '${joinUri(location, dataset)}'`,
      `require_hive_partition_filter = false`,
    ].join(',\n  ')}`,
    `);`,
    `CREATE OR REPLACE VIEW \`${prefix}${dataset}_${sqlSafe(m.snapshot_id)}\` AS`,
    `SELECT * FROM \`${prefix}${dataset}\` WHERE snapshot_id = '${m.snapshot_id}';`,
  ];
}

function snowflakeDdl({
  m,
  dataset,
  ds,
  format,
  prefix,
  location: stage,
  bucketUrl,
}: DatasetDdlInput & { location: string }): string[] {
  const value = (name: string, t: ColumnType): string => {
    const v = `VALUE:"${name}"`;
    // Parquet stores JSON as text; NDJSON embeds the object.
    if (t === 'JSON') return format === 'parquet' ? `TRY_PARSE_JSON(${v}::VARCHAR)` : v;
    if (t === 'VARCHAR[]') return `${v}::ARRAY`;
    return `${v}::${TYPES[t].snowflake}`;
  };
  const fileFormat = format === 'parquet' ? 'filings_export_parquet' : 'filings_export_ndjson';
  const ext = format === 'parquet' ? 'parquet' : 'ndjson[.]gz';
  return [
    format === 'parquet'
      ? `CREATE FILE FORMAT IF NOT EXISTS ${prefix}${fileFormat} TYPE = PARQUET USE_LOGICAL_TYPE = TRUE;`
      : `CREATE FILE FORMAT IF NOT EXISTS ${prefix}${fileFormat} TYPE = JSON COMPRESSION = GZIP;`,
    bucketUrl !== undefined
      ? `-- ${stage} must point at the output root: CREATE STAGE ${stage.replace(/^@/, '')} URL = '${bucketUrl.replace(/\/*$/, '/')}' STORAGE_INTEGRATION = …;`
      : `-- ${stage} must point at the output root (CREATE STAGE … URL = 's3://…' / 'azure://…' / 'gcs://…')`,
    `CREATE OR REPLACE EXTERNAL TABLE ${prefix}${dataset} (`,
    [
      `  snapshot_date DATE AS TO_DATE(SPLIT_PART(SPLIT_PART(METADATA$FILENAME, 'snapshot_date=', 2), '/', 1))`,
      `  snapshot_id VARCHAR AS SPLIT_PART(SPLIT_PART(METADATA$FILENAME, 'snapshot_id=', 2), '/', 1)`,
      ...ds.columns.map((c) => `  "${c.name}" ${TYPES[c.type].snowflake} AS (${value(c.name, c.type)})`),
    ].join(',\n'),
    `)`,
    `PARTITION BY (snapshot_date, snapshot_id)`,
    `LOCATION = ${joinUri(stage, dataset)}/`,
    `PATTERN = '.*[.]${ext}'`,
    `FILE_FORMAT = (FORMAT_NAME = '${prefix}${fileFormat}')`,
    `AUTO_REFRESH = FALSE;`,
    `CREATE OR REPLACE VIEW ${prefix}${dataset}_${sqlSafe(m.snapshot_id)} AS`,
    `SELECT * FROM ${prefix}${dataset} WHERE snapshot_id = '${m.snapshot_id}';`,
  ];
}

function sparkDdl({ root, m, dataset, ds, format, prefix, location, bucketUrl }: DatasetDdlInput): string[] {
  const base = location ?? bucketUrl ?? resolve(root);
  const cols = [
    ...ds.columns.map((c) => `  \`${c.name}\` ${typeFor(c.type, 'spark', format)}`),
    '  snapshot_date DATE',
    '  snapshot_id STRING',
  ].join(',\n');
  return [
    `CREATE TABLE IF NOT EXISTS ${prefix}${dataset} (`,
    cols,
    `)`,
    format === 'parquet' ? `USING PARQUET` : `USING JSON OPTIONS (compression 'gzip')`,
    `PARTITIONED BY (snapshot_date, snapshot_id)`,
    `LOCATION '${joinUri(base, dataset)}';`,
    `MSCK REPAIR TABLE ${prefix}${dataset};`,
    `CREATE OR REPLACE TEMPORARY VIEW ${prefix.replace(/\.$/, '_')}${dataset}_${sqlSafe(m.snapshot_id)} AS`,
    `SELECT * FROM ${prefix}${dataset} WHERE snapshot_id = '${m.snapshot_id}';`,
  ];
}
