/**
 * Rebuilding a published file that loses one company (issue 27): a facts-like Parquet file of
 * REBUILD_BENCH_ROWS rows (default 2,000,000; 100 companies; row groups of 24,576 rows, the
 * default `output.row_group_rows`), the 50th company dropped. Times the rebuild copying the
 * untouched row groups against re-encoding every kept row (what it did before), and against
 * re-encoding the dropped company's own rows: the copy costs that plus at most two row groups,
 * the byte copy and the rebuilt file's row count / period_end scan.
 *
 * `npm run bench -- rebuild`
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DatasetSchema } from '../src/datasets/index.js';
import type { Manifest, ManifestFile } from '../src/output/catalog/manifest.js';
import { openDuck, parquetCodec } from '../src/output/convert/duckdb.js';
import type { KeptRange, ReuseSource } from '../src/output/publish/reuse-plan.js';
import { rebuiltUnit } from '../src/output/publish/reused-files.js';
import type { BenchResult } from './support/types.js';

const ROWS = Number(process.env.REBUILD_BENCH_ROWS ?? 2_000_000);
const COMPANIES = 100;
const GROUP = 24_576; // output.row_group_rows' default

const schema: DatasetSchema = {
  dataset: 'facts_core',
  version: 1,
  inferred: false,
  columns: [
    { name: 'company', type: 'INTEGER', role: 'field' },
    { name: 'fact_key', type: 'VARCHAR', role: 'field' },
    { name: 'concept', type: 'VARCHAR', role: 'field' },
    { name: 'value', type: 'DECIMAL(38,0)', role: 'field' },
    { name: 'period_end', type: 'DATE', role: 'field' },
    { name: 'axes', type: 'VARCHAR[]', role: 'field' },
  ],
};

export async function run(): Promise<BenchResult[]> {
  const dir = await mkdtemp(join(tmpdir(), 'fx-bench-rebuild-'));
  const duck = await openDuck();
  try {
    const per = Math.floor(ROWS / COMPANIES);
    const src = join(dir, 'source.parquet');
    await duck.run(
      `COPY (SELECT CAST(i // ${per} AS INTEGER) AS company, md5(CAST(i AS VARCHAR)) AS fact_key,
        'us-gaap:Concept' || (i % 997) AS concept, CAST(i * 1000 + 7 AS DECIMAL(38,0)) AS value,
        DATE '2010-01-01' + CAST(i % 5000 AS INTEGER) AS period_end, ['axis' || (i % 7)] AS axes
        FROM range(${per * COMPANIES}) t(i)) TO '${src}' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE ${GROUP})`,
    );
    const file: ManifestFile = {
      path: 'source.parquet',
      dataset: 'facts_core',
      format: 'parquet',
      rows: per * COMPANIES,
      bytes: (await stat(src)).size,
      sha256: '',
    };
    const source: ReuseSource = {
      manifest: { snapshot_id: 'bench' } as Manifest,
      placeWhole: () => Promise.resolve(false),
      readable: () => Promise.resolve(src),
    };
    const drop = 49 * per;
    const company = (n: number, first: number, rows: number) => ({ ticker: `C${n}`, first_row: first, rows });
    const kept: KeptRange[] = [
      { file, first_row: 0, rows: drop, companies: [company(0, 0, drop)] },
      {
        file,
        first_row: drop + per,
        rows: file.rows - drop - per,
        companies: [company(1, drop + per, file.rows - drop - per)],
      },
    ];
    const rebuild = async (sameColumns: boolean, name: string): Promise<number> => {
      const t0 = performance.now();
      await rebuiltUnit(
        source,
        kept,
        {
          schema,
          sourceColumns: schema.columns.map((c) => c.name),
          formats: ['parquet'],
          compression: 'zstd',
          rowGroupRows: GROUP,
          duck,
          sameColumns,
        },
        join(dir, name),
        0,
      );
      return performance.now() - t0;
    };
    const own = async (): Promise<number> => {
      const t0 = performance.now();
      await duck.run(
        `COPY (SELECT * FROM read_parquet('${src}', file_row_number = true) WHERE file_row_number >= ${drop} AND file_row_number < ${drop + per}) TO '${join(dir, 'own.parquet')}' (FORMAT parquet, ${parquetCodec('zstd')}, ROW_GROUP_SIZE ${GROUP})`,
      );
      return performance.now() - t0;
    };
    // Three runs each, interleaved; medians.
    const copied: number[] = [];
    const encoded: number[] = [];
    const owns: number[] = [];
    for (let i = 0; i < 3; i++) {
      copied.push(await rebuild(true, `copy-${i}`));
      encoded.push(await rebuild(false, `encode-${i}`));
      owns.push(await own());
    }
    const [c, e, o] = [median(copied), median(encoded), median(owns)];
    const size = `${(file.bytes / 1e6).toFixed(0)} MB, ${file.rows} rows, ${COMPANIES} companies of ${per}`;
    return [
      {
        group: 'output',
        name: 'rebuild without one company: copying row groups / re-encoding every kept row',
        value: c / e,
        unit: 'ratio',
        note: `${(c / 1000).toFixed(2)} s vs ${(e / 1000).toFixed(2)} s (medians of 3; ${size})`,
      },
      {
        group: 'output',
        name: 'rebuild without one company (copying row groups) / re-encoding that company alone',
        value: c / o,
        unit: 'ratio',
        note: `${(c / 1000).toFixed(2)} s vs ${(o / 1000).toFixed(2)} s: the copy re-encodes at most two row groups of ${GROUP} rows beside the byte copy`,
      },
    ];
  } finally {
    duck.close();
    await rm(dir, { recursive: true, force: true });
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}
