/**
 * The rows of a night two ways, in one comparable text form: DuckDB over the snapshot's published
 * Parquet files, and icebird (with its own hyparquet and Avro decoder) over an Iceberg table
 * version. Shared by the Iceberg tests that publish nights on the emulator's clock.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { icebergRead } from 'icebird';
import { expect } from 'vitest';
import type { DuckSession } from '../../src/output/convert/duckdb.js';
import type { Manifest, ManifestDataset } from '../../src/output/catalog/manifest.js';
import { incrementalPlanner } from '../../src/pipeline/queue/incremental.js';
import type { SnapshotSpec } from '../../src/pipeline/record/snapshot-states.js';
import type { ColumnType } from '../../src/datasets/index.js';
import type { TableMetadata } from '../../src/output/iceberg/index.js';
import type { DatasetName } from '../../src/types.js';
import type { PipelineHarness } from '../helpers/pipeline.js';

type Columns = ManifestDataset['columns'];

/** Publishes one incremental night `id` labelled `date` and returns its manifest. */
export async function publishNight(
  h: PipelineHarness,
  tickers: string[],
  datasets: DatasetName[],
  id: string,
  date: string,
): Promise<Manifest> {
  const asked: SnapshotSpec = { ...h.spec(tickers, datasets, id), date };
  const { spec } = await incrementalPlanner(h.config)(asked, {});
  const rec = await h.runToEnd(spec);
  expect(rec.state, rec.message ?? '').toBe('published');
  return JSON.parse(await readFile(join(h.outDir, '_snapshots', id, 'manifest.json'), 'utf8')) as Manifest;
}

/** Moves the emulator's clock (a later night sees later filings). */
export async function setEmulatorClock(
  fetch: typeof globalThis.fetch,
  h: PipelineHarness,
  asOf: string,
): Promise<void> {
  const res = await fetch(`${h.emulator.url}/_emulator/clock`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ as_of: asOf }),
  });
  expect(res.status).toBe(200);
}

/** Keys sorted at every level, so two readers' JSON compares as values. */
function stable(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(stable);
  if (v !== null && typeof v === 'object')
    return Object.fromEntries(
      Object.entries(v as Record<string, unknown>)
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([k, x]) => [k, stable(x)]),
    );
  return v;
}

/** One value as text, the same whichever reader gave it (dates and instants as epoch ms). */
function canon(type: ColumnType, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  switch (type) {
    case 'JSON':
      return JSON.stringify(stable(typeof v === 'string' ? JSON.parse(v) : v));
    case 'VARCHAR[]':
      return JSON.stringify(typeof v === 'string' ? JSON.parse(v) : v);
    case 'DATE':
    case 'TIMESTAMPTZ':
      return String(v instanceof Date ? v.getTime() : v);
    case 'DOUBLE':
    case 'DECIMAL(38,0)':
      // icebird's Parquet reader (hyparquet) decodes DECIMAL to a JS number, so both sides compare
      // as numbers here. The table references the published files as they are (no copy), and the
      // exactness of their values past 2^53 is checked by DuckDB on those files (output tests).
      return String(Number(v));
    case 'VARCHAR':
    case 'BOOLEAN':
    case 'INTEGER':
    case 'BIGINT':
      return String(v);
    default: {
      const never: never = type;
      throw new Error(`unknown type ${String(never)}`);
    }
  }
}

/** DuckDB's reading of a column, in a form canon() takes. */
function duckColumn(name: string, type: ColumnType): string {
  const c = `"${name}"`;
  if (type === 'DATE') return `epoch_ms(${c}::TIMESTAMP)::VARCHAR AS ${c}`;
  if (type === 'TIMESTAMPTZ') return `epoch_ms(${c})::VARCHAR AS ${c}`;
  if (type === 'DECIMAL(38,0)') return `${c}::DOUBLE AS ${c}`;
  if (type === 'VARCHAR[]') return `to_json(${c})::VARCHAR AS ${c}`;
  return `${c}::VARCHAR AS ${c}`;
}

const rowText = (columns: Columns, row: Record<string, unknown>): string =>
  JSON.stringify(columns.map((c) => canon(c.type, row[c.name])));

/** The night's rows of `dataset` as DuckDB reads its published Parquet files under `outDir`. */
export async function publishedRows(
  duck: DuckSession,
  outDir: string,
  m: Manifest,
  dataset: DatasetName,
): Promise<string[]> {
  const columns = m.datasets[dataset]!.columns;
  const files = m.files.filter((f) => f.dataset === dataset && f.format === 'parquet');
  const list = files.map((f) => `'${join(outDir, f.path)}'`).join(', ');
  const rows = await duck.all(
    `SELECT ${columns.map((c) => duckColumn(c.name, c.type)).join(', ')} FROM read_parquet([${list}])`,
  );
  return rows.map((r) => rowText(columns, r)).sort();
}

/** The rows icebird reads of the table at `tableUrl`, at `vN.metadata.json` or the hint's version. */
export async function icebergRows(tableUrl: string, columns: Columns, version?: number): Promise<string[]> {
  const rows = await icebergRead({
    tableUrl,
    ...(version !== undefined ? { metadataFileName: `v${version}.metadata.json` } : {}),
  });
  return rows.map((r) => rowText(columns, r)).sort();
}

/** Table version `version` of `dataset` under root `outDir`, as written. */
export const metadataOf = async (
  outDir: string,
  dataset: DatasetName,
  version: number,
): Promise<TableMetadata> =>
  JSON.parse(
    await readFile(join(outDir, dataset, 'metadata', `v${version}.metadata.json`), 'utf8'),
  ) as TableMetadata;
