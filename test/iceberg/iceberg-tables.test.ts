/**
 * Iceberg tables read back by an independent reader: two nights on the emulator's clock
 * (2025-10-30, then 2025-11-05, when Apple filed its 10-K), `iceberg rebuild` through the CLI,
 * then icebird (with its own hyparquet and Avro decoder) reads each dataset's table at every
 * Iceberg snapshot, and its rows equal what DuckDB reads of that snapshot's published files.
 * The Avro headers carry the spec's field ids; a re-commit is a no-op; expiry drops a night.
 */
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { avroMetadata } from 'icebird';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDuck, type DuckSession } from '../../src/output/convert/duckdb.js';
import type { Manifest, ManifestDataset } from '../../src/output/catalog/manifest.js';
import { LocalStorage } from '../../src/output/storage/local-storage.js';
import {
  commitPublished,
  commitSnapshot,
  expireSnapshots,
  readTable,
  type TableMetadata,
} from '../../src/output/iceberg/index.js';
import { outputPorts } from '../../src/pipeline/output-adapter.js';
import type { DatasetName } from '../../src/types.js';
import { startPipelineHarness, type PipelineHarness } from '../helpers/pipeline.js';
import { runCli } from '../helpers/processes.js';
import { localFileFetch } from './local-file-fetch.js';
import {
  icebergRows as tableRows,
  publishedRows as rowsOf,
  publishNight,
  setEmulatorClock,
} from './iceberg-rows.js';
import { DDL_DIALECTS, type DdlDialect } from '../../src/output/readers/ddl-dialects.js';

const TICKERS = ['AAPL', 'MSFT'];
const DATASETS: DatasetName[] = ['series_catalog', 'facts_full'];
const realFetch = globalThis.fetch;

let h: PipelineHarness;
let duck: DuckSession;
const nights: Manifest[] = [];
type Columns = ManifestDataset['columns'];

beforeAll(async () => {
  h = await startPipelineHarness({
    emulator: { asOf: '2025-10-30' },
    // The publisher commits nothing: `iceberg rebuild` writes the tables of a root that has none.
    config: { 'output.formats': ['parquet'], 'output.iceberg': false },
    // Small files: several per dataset, so the second night reuses some and writes others.
    output: await outputPorts({ targetFileBytes: 256 * 1024, rowGroupRows: 4096 }),
  });
  await h.startWorkers();
  duck = await openDuck({ threads: 1 });
  globalThis.fetch = localFileFetch(realFetch);
});
afterAll(async () => {
  globalThis.fetch = realFetch;
  duck?.close();
  await h?.close();
});

const night = (id: string, date: string): Promise<Manifest> => publishNight(h, TICKERS, DATASETS, id, date);
const publishedRows = (m: Manifest, dataset: DatasetName): Promise<string[]> =>
  rowsOf(duck, h.outDir, m, dataset);
const icebergRows = (dataset: DatasetName, version: number, columns: Columns): Promise<string[]> =>
  tableRows(join(h.outDir, dataset), columns, version);

const metadataOf = async (dataset: DatasetName, version: number): Promise<TableMetadata> =>
  JSON.parse(
    await readFile(join(h.outDir, dataset, 'metadata', `v${version}.metadata.json`), 'utf8'),
  ) as TableMetadata;

const avroHeader = async (path: string): Promise<Record<string, unknown>> => {
  const b = await readFile(path);
  return avroMetadata({ view: new DataView(b.buffer, b.byteOffset, b.byteLength), offset: 0 })
    .metadata as Record<string, unknown>;
};

const fieldIds = (schema: unknown): Record<string, unknown> =>
  Object.fromEntries(
    (schema as { fields: { name: string; 'field-id': number }[] }).fields.map((f) => [f.name, f['field-id']]),
  );

describe('Iceberg tables', () => {
  it('rebuild writes one Iceberg snapshot per night, and icebird reads each night’s published rows', async () => {
    nights.push(await night('ice-1', '2025-10-30'));
    await setEmulatorClock(realFetch, h, '2025-11-05');
    nights.push(await night('ice-2', '2025-11-05'));

    const cli = await runCli(['iceberg', 'rebuild', '--out', h.outDir], { env: h.env, timeoutMs: 120_000 });
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toContain('rebuilt 2 tables from 2 published snapshots');

    for (const dataset of DATASETS) {
      expect((await readFile(join(h.outDir, dataset, 'metadata', 'version-hint.text'), 'utf8')).trim()).toBe(
        '2',
      );
      for (const [i, m] of nights.entries()) {
        const meta = await metadataOf(dataset, i + 1);
        const current = meta.snapshots.find((s) => s['snapshot-id'] === meta['current-snapshot-id'])!;
        expect(current.summary).toMatchObject({
          operation: 'overwrite',
          'filings_export.snapshot_id': m.snapshot_id,
          'filings_export.snapshot_date': m.snapshot_date,
          'total-records': String(m.datasets[dataset]!.rows),
        });
        expect(meta.snapshots).toHaveLength(i + 1);
        const expected = await publishedRows(m, dataset);
        expect(expected.length).toBe(m.datasets[dataset]!.rows);
        expect(await icebergRows(dataset, i + 1, m.datasets[dataset]!.columns)).toEqual(expected);
      }
    }
    // The nights differ (Apple filed), so reading the right version matters.
    expect(nights[1]!.datasets.facts_full!.rows).not.toBe(nights[0]!.datasets.facts_full!.rows);
  }, 300_000);

  it('manifests and manifest lists carry the spec’s field ids and header metadata', async () => {
    const meta = await metadataOf('facts_full', 2);
    const current = meta.snapshots.find((s) => s['snapshot-id'] === meta['current-snapshot-id'])!;
    const list = await avroHeader(current['manifest-list']);
    expect(list).toMatchObject({ 'format-version': '2', 'snapshot-id': String(current['snapshot-id']) });
    expect(fieldIds(list['avro.schema'])).toEqual({
      manifest_path: 500,
      manifest_length: 501,
      partition_spec_id: 502,
      content: 517,
      sequence_number: 515,
      min_sequence_number: 516,
      added_snapshot_id: 503,
      added_files_count: 504,
      existing_files_count: 505,
      deleted_files_count: 506,
      added_rows_count: 512,
      existing_rows_count: 513,
      deleted_rows_count: 514,
    });
    const manifests = (await readdir(join(h.outDir, 'facts_full', 'metadata'))).filter((n) =>
      n.endsWith('-m0.avro'),
    );
    expect(manifests).toHaveLength(2);
    const header = await avroHeader(
      join(h.outDir, 'facts_full', 'metadata', `${current['snapshot-id']}-m0.avro`),
    );
    expect(header).toMatchObject({
      'format-version': '2',
      content: 'data',
      'partition-spec-id': '0',
      'partition-spec': '[]',
    });
    expect(header.schema).toEqual(meta.schemas.find((s) => s['schema-id'] === current['schema-id']));
    const entry = header['avro.schema'] as { fields: { name: string; 'field-id': number; type: unknown }[] };
    expect(fieldIds(entry)).toEqual({
      status: 0,
      snapshot_id: 1,
      sequence_number: 3,
      file_sequence_number: 4,
      data_file: 2,
    });
    expect(fieldIds(entry.fields.find((f) => f.name === 'data_file')!.type)).toMatchObject({
      content: 134,
      file_path: 100,
      file_format: 101,
      partition: 102,
      record_count: 103,
      file_size_in_bytes: 104,
    });
    expect(JSON.parse(meta.properties['schema.name-mapping.default']!)).toContainEqual({
      'field-id': 1,
      names: [meta.schemas[0]!.fields[0]!.name],
    });
  });

  it('a re-commit is a no-op, an older night never lands on a newer one, and expiry drops a night', async () => {
    const storage = new LocalStorage(h.outDir);
    const again = await commitSnapshot(storage, nights[1]!);
    expect(again.map((c) => [c.dataset, c.outcome, c.version])).toEqual([
      ['facts_full', 'present', 2],
      ['series_catalog', 'present', 2],
    ]);
    const expired = await expireSnapshots(storage, ['ice-1']);
    expect(expired.map((e) => [e.dataset, e.version])).toEqual([
      ['facts_full', 3],
      ['series_catalog', 3],
    ]);
    const older = await commitSnapshot(storage, nights[0]!);
    expect(older.map((c) => c.outcome)).toEqual(['older', 'older']);
    for (const dataset of DATASETS) {
      const table = await readTable(storage, dataset);
      expect(table?.version).toBe(3);
      expect(table?.metadata.snapshots.map((s) => s.summary['filings_export.snapshot_id'])).toEqual([
        'ice-2',
      ]);
      expect(table?.metadata['metadata-log']).toEqual([]);
      // No older version that names the expired night is left to open.
      expect(
        (await readdir(join(h.outDir, dataset, 'metadata'))).filter((n) => n.endsWith('.metadata.json')),
      ).toEqual(['v3.metadata.json']);
      const m = nights[1]!;
      expect(await icebergRows(dataset, 3, m.datasets[dataset]!.columns)).toEqual(
        await publishedRows(m, dataset),
      );
    }
  }, 120_000);

  it('a commit’s catch-up lists `_snapshots/` alone, never the data and staged files', async () => {
    const storage = new LocalStorage(h.outDir);
    const listed: string[] = [];
    const recording = Object.assign(Object.create(storage) as LocalStorage, {
      list: (prefix: string) => {
        listed.push(prefix);
        return storage.list(prefix);
      },
    });
    // ice-1 is out of the tables (expired above), so the commit looks for older nights to land
    // first; the tables hold a newer night, so ice-1 itself is not put on top of it.
    const commits = await commitPublished(recording, 'ice-1');
    expect(commits.map((c) => [c.snapshotId, c.tables.map((t) => t.outcome)])).toEqual([
      ['ice-1', ['older', 'older']],
    ]);
    expect(listed).toContain('_snapshots/');
    expect(listed.filter((p) => !p.startsWith('_snapshots/') && !/^[a-z_]+\/metadata\//.test(p))).toEqual([]);
  }, 60_000);

  it('ddl --iceberg prints each warehouse’s statement over the current metadata', async () => {
    const expected: Record<DdlDialect, string> = {
      duckdb: `SELECT * FROM iceberg_scan('${join(h.outDir, 'facts_full')}')`,
      spark: `USING iceberg LOCATION '${join(h.outDir, 'facts_full')}'`,
      snowflake: `METADATA_FILE_PATH = 'facts_full/metadata/v3.metadata.json'`,
      bigquery: `uris = ['gs://YOUR_BUCKET/filings-export/facts_full/metadata/v3.metadata.json']`,
    };
    const current = (await readTable(new LocalStorage(h.outDir), 'facts_full'))!.metadata[
      'current-snapshot-id'
    ];
    for (const dialect of DDL_DIALECTS) {
      const cli = await runCli(['ddl', '--iceberg', '--dialect', dialect, '--out', h.outDir], {
        env: h.env,
        timeoutMs: 60_000,
      });
      expect(cli.code, cli.stderr).toBe(0);
      expect(cli.stdout).toContain(expected[dialect]);
      expect(cli.stdout).toContain(`-- time travel: `);
      // The night's Iceberg snapshot id, for the time-travel forms.
      expect(cli.stdout).toContain(`ice-2 = ${current}`);
      if (dialect === 'spark') expect(cli.stdout).toContain('CALL iceberg.system.register_table(');
    }
  }, 300_000);
});
