/**
 * Prune and the Iceberg tables agree, and published Parquet carries the tables' field ids. Two
 * nights on the emulator's clock (2025-10-30, then 2025-11-05, when Apple filed its 10-K),
 * `iceberg rebuild`, then the Parquet footers (hyparquet) hold each column's id of the table's
 * schema; `prune --keep 1` expires the old Iceberg snapshot before deleting its files, and icebird
 * reads the kept night exactly, with every file the current metadata references present. A table
 * whose commits lag behind the kept night takes it before the expiry.
 */
import { readFile, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { parquetMetadata, type SchemaElement } from 'hyparquet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDuck, type DuckSession } from '../../src/output/convert/duckdb.js';
import type { Manifest } from '../../src/output/catalog/manifest.js';
import { LocalStorage } from '../../src/output/storage/local-storage.js';
import { commitSnapshot, decodeAvro, readTable, type TableMetadata } from '../../src/output/iceberg/index.js';
import { outputPorts } from '../../src/pipeline/output-adapter.js';
import type { DatasetName } from '../../src/types.js';
import { startPipelineHarness, type PipelineHarness } from '../helpers/pipeline.js';
import { runCli } from '../helpers/processes.js';
import { localFileFetch } from './local-file-fetch.js';
import { icebergRows, publishedRows, publishNight, setEmulatorClock } from './iceberg-rows.js';

const TICKERS = ['AAPL', 'MSFT'];
const DATASETS: DatasetName[] = ['series_catalog', 'facts_full'];
const realFetch = globalThis.fetch;

let h: PipelineHarness;
let duck: DuckSession;
let storage: LocalStorage;
const nights: Manifest[] = [];

beforeAll(async () => {
  h = await startPipelineHarness({
    emulator: { asOf: '2025-10-30' },
    // Tables written by `iceberg rebuild` and by hand, so a test can leave one behind its nights.
    config: { 'output.formats': ['parquet'], 'output.iceberg': false },
    output: await outputPorts({ targetFileBytes: 256 * 1024, rowGroupRows: 4096 }),
  });
  await h.startWorkers();
  duck = await openDuck({ threads: 1 });
  storage = new LocalStorage(h.outDir);
  globalThis.fetch = localFileFetch(realFetch);
});
afterAll(async () => {
  globalThis.fetch = realFetch;
  duck?.close();
  await h?.close();
});

const night = (id: string, date: string): Promise<Manifest> => publishNight(h, TICKERS, DATASETS, id, date);

/** name → field id of every column of a Parquet footer (a list's element under `<name>.element`). */
function footerIds(schema: readonly SchemaElement[]): Record<string, number | undefined> {
  const out: Record<string, number | undefined> = {};
  let i = 1;
  for (let c = 0; c < (schema[0]?.num_children ?? 0); c++) {
    const col = schema[i++]!;
    out[col.name] = col.field_id;
    if ((col.num_children ?? 0) > 0) {
      expect(schema[i++]?.num_children).toBe(1); // the repeated `list` group, then its element
      out[`${col.name}.element`] = schema[i++]?.field_id;
    }
  }
  return out;
}

/** name → id of the table's current schema, in the footer's form. */
function tableIds(m: TableMetadata): Record<string, number> {
  const schema = m.schemas.find((s) => s['schema-id'] === m['current-schema-id'])!;
  return Object.fromEntries(
    schema.fields.flatMap((f) => [
      [f.name, f.id],
      ...(typeof f.type === 'string' ? [] : [[`${f.name}.element`, f.type['element-id']]]),
    ]),
  );
}

/** Every file the table's current metadata references: manifest lists, manifests, data files. */
async function referencedFiles(m: TableMetadata): Promise<string[]> {
  const files: string[] = [];
  for (const s of m.snapshots) {
    files.push(s['manifest-list']);
    const list = await decodeAvro<{ manifest_path: string }>(
      await storage.getStream(keyOf(s['manifest-list'])),
    );
    for (const r of list.records) {
      files.push(r.manifest_path);
      const entries = await decodeAvro<{ data_file: { file_path: string } }>(
        await storage.getStream(keyOf(r.manifest_path)),
      );
      files.push(...entries.records.map((e) => e.data_file.file_path));
    }
  }
  return files;
}

const keyOf = (url: string): string => url.slice(h.outDir.length + 1);
const exists = (path: string): Promise<boolean> =>
  stat(path).then(
    () => true,
    () => false,
  );
const metadataFiles = async (dataset: DatasetName): Promise<string[]> =>
  (await readdir(join(h.outDir, dataset, 'metadata'))).filter((n) => n.endsWith('.metadata.json'));

describe('prune and the Iceberg tables', () => {
  it('published Parquet files carry the field ids of the table’s schema', async () => {
    nights.push(await night('pr-1', '2025-10-30'));
    await setEmulatorClock(realFetch, h, '2025-11-05');
    nights.push(await night('pr-2', '2025-11-05'));
    const cli = await runCli(['iceberg', 'rebuild', '--out', h.outDir], { env: h.env, timeoutMs: 120_000 });
    expect(cli.code, cli.stderr).toBe(0);

    for (const dataset of DATASETS) {
      const expected = tableIds((await readTable(storage, dataset))!.metadata);
      expect(Object.keys(expected).length).toBeGreaterThan(3);
      for (const m of nights)
        for (const f of m.files.filter((x) => x.dataset === dataset && x.format === 'parquet')) {
          const bytes = await readFile(join(h.outDir, f.path));
          const footer = parquetMetadata(
            bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength),
          );
          expect(footerIds(footer.schema), f.path).toEqual(expected);
        }
    }
  }, 300_000);

  it('prune --keep 1 expires the old Iceberg snapshot before it deletes its files', async () => {
    const [old, kept] = [nights[0]!, nights[1]!];
    const before = new Map<DatasetName, TableMetadata>();
    for (const dataset of DATASETS) before.set(dataset, (await readTable(storage, dataset))!.metadata);

    const cli = await runCli(['prune', '--keep', '1', '--out', h.outDir], { env: h.env, timeoutMs: 120_000 });
    expect(cli.code, cli.stderr).toBe(0);
    expect(cli.stdout).toContain(`removed ${old.snapshot_id}`);
    for (const dataset of DATASETS)
      expect(cli.stdout).toContain(`expired pr-1 from the ${dataset} Iceberg table (now v3.metadata.json)`);

    for (const dataset of DATASETS) {
      const table = (await readTable(storage, dataset))!;
      expect(table.version).toBe(3);
      const ids = table.metadata.snapshots.map((s) => s.summary['filings_export.snapshot_id']);
      expect(ids).toEqual([kept.snapshot_id]);
      // The old Iceberg snapshot's manifest list is gone with it, and so are the versions naming it.
      const oldSnap = before
        .get(dataset)!
        .snapshots.find((s) => s.summary['filings_export.snapshot_id'] === 'pr-1')!;
      expect(await exists(oldSnap['manifest-list'])).toBe(false);
      expect(await metadataFiles(dataset)).toEqual(['v3.metadata.json']);
      // Its data files are deleted, and nothing the current metadata references is missing.
      for (const f of old.files.filter((x) => x.dataset === dataset))
        expect(await exists(join(h.outDir, f.path))).toBe(false);
      const referenced = await referencedFiles(table.metadata);
      expect(referenced.length).toBeGreaterThan(2);
      for (const path of referenced) expect(await exists(path), path).toBe(true);
      // icebird, following the version hint, reads the kept night exactly.
      const columns = kept.datasets[dataset]!.columns;
      expect(await icebergRows(join(h.outDir, dataset), columns)).toEqual(
        await publishedRows(duck, h.outDir, kept, dataset),
      );
    }
  }, 300_000);

  it('a table behind the kept night takes it before prune expires the night it still shows', async () => {
    const latest = await night('pr-3', '2025-11-06');
    // The table as if pr-3's commit were still pending: its current snapshot is pr-2, which prune removes.
    for (const dataset of DATASETS) await rm(join(h.outDir, dataset, 'metadata'), { recursive: true });
    await commitSnapshot(storage, nights[1]!);

    const cli = await runCli(['prune', '--keep', '1', '--out', h.outDir], { env: h.env, timeoutMs: 120_000 });
    expect(cli.code, cli.stderr).toBe(0);
    for (const dataset of DATASETS) {
      const table = (await readTable(storage, dataset))!;
      expect(table.metadata.snapshots.map((s) => s.summary['filings_export.snapshot_id'])).toEqual(['pr-3']);
      expect(await metadataFiles(dataset)).toEqual([`v${table.version}.metadata.json`]);
      for (const path of await referencedFiles(table.metadata)) expect(await exists(path), path).toBe(true);
      expect(await icebergRows(join(h.outDir, dataset), latest.datasets[dataset]!.columns)).toEqual(
        await publishedRows(duck, h.outDir, latest, dataset),
      );
    }
  }, 300_000);
});
