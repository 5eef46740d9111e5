/**
 * A source file losing one company (reused-files.ts rebuiltUnit): its row groups wholly inside kept
 * rows are copied byte for byte, only the row groups the dropped company starts or ends in are
 * re-encoded, and the result reads as exactly the kept rows, in order. DuckDB writes the source.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatasetSchema } from '../../../src/datasets/index.js';
import { openDuck, parquetFieldIds, type DuckSession } from '../../../src/output/convert/duckdb.js';
import type { Manifest, ManifestFile } from '../../../src/output/catalog/manifest.js';
import type { KeptRange, ReuseSource } from '../../../src/output/publish/reuse-plan.js';
import { rebuiltUnit, rowGroupSpans } from '../../../src/output/publish/reused-files.js';
import { hashFile } from '../../../src/output/storage/fs-util.js';

const GROUP = 2048;
/** Companies A, B, C: B starts and ends mid row group (groups are 2,048 rows). */
const A = 3000;
const B = 2000;
const C = 4000;
const ROWS = A + B + C;

const schema: DatasetSchema = {
  dataset: 'facts_core',
  version: 1,
  inferred: false,
  columns: [
    { name: 'n', type: 'BIGINT', role: 'field' },
    { name: 'ticker', type: 'VARCHAR', role: 'field' },
    { name: 'big', type: 'DECIMAL(38,0)', role: 'field' },
    { name: 'period_end', type: 'DATE', role: 'field' },
    { name: 'axes', type: 'VARCHAR[]', role: 'field' },
  ],
};
const SOURCE = `SELECT CAST(i AS BIGINT) AS n,
    CASE WHEN i < ${A} THEN 'A' WHEN i < ${A + B} THEN 'B' ELSE 'C' END AS ticker,
    CAST(CAST(i AS HUGEINT) * 100000000000000000000000000000 + 7 AS DECIMAL(38,0)) AS big,
    DATE '2020-01-01' + CAST(i % 900 AS INTEGER) AS period_end,
    ['a' || (i % 3), 'b'] AS axes
  FROM range(${ROWS}) t(i)`;

let duck: DuckSession;
let dir: string;
beforeAll(async () => {
  duck = await openDuck({ threads: 1 });
  dir = await mkdtemp(join(tmpdir(), 'fx-rebuild-groups-'));
});
afterAll(async () => {
  duck.close();
  await rm(dir, { recursive: true, force: true });
});

const groupsOf = (p: string) =>
  duck.all(
    `SELECT row_group_id AS g, column_id AS c, row_group_num_rows AS n, total_compressed_size AS size, stats_min_value AS lo, stats_max_value AS hi FROM parquet_metadata('${p}') ORDER BY g, c`,
  );

/**
 * Writes the source rows as one Parquet file as publishing does (with the table's field ids;
 * `extra` adds COPY options) and its manifest entry.
 */
async function writeSource(name: string, extra = ''): Promise<{ src: string; file: ManifestFile }> {
  const src = join(dir, `${name}.parquet`);
  await duck.run(
    `COPY (${SOURCE} ORDER BY n) TO '${src}' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE ${GROUP}, ${parquetFieldIds(schema.columns)}${extra})`,
  );
  // The rebuild hashes what it reads against the entry's sha256 and bytes (checkedSources).
  const file: ManifestFile = {
    path: `facts_core/x/${name}.parquet`,
    dataset: 'facts_core',
    format: 'parquet',
    rows: ROWS,
    ...(await hashFile(src)),
  };
  return { src, file };
}

/** The rebuild's options: every source column, Parquet with zstd, this DuckDB's footer. */
const rebuildOptions = () => ({
  schema,
  sourceColumns: schema.columns.map((c) => c.name),
  formats: ['parquet' as const],
  compression: 'zstd' as const,
  rowGroupRows: GROUP,
  duck,
  sameColumns: true,
});

describe('rebuilding a file without one company', () => {
  it('copies the row groups inside kept rows and re-encodes only the two it starts and ends in', async () => {
    const { src, file: whole } = await writeSource('part-00000');
    const file: ManifestFile = {
      ...whole,
      companies: [
        { ticker: 'A', first_row: 0, rows: A },
        { ticker: 'B', first_row: A, rows: B },
        { ticker: 'C', first_row: A + B, rows: C },
      ],
    };
    let reads = 0;
    const source: ReuseSource = {
      manifest: { snapshot_id: 's1' } as Manifest,
      placeWhole: () => Promise.resolve(false),
      readable: () => (reads++, Promise.resolve(src)),
    };
    const kept: KeptRange[] = [
      { file, first_row: 0, rows: A, companies: [file.companies![0]!] },
      { file, first_row: A + B, rows: C, companies: [file.companies![2]!] },
    ];
    const out = join(dir, 'build');
    const unit = await rebuiltUnit(source, kept, rebuildOptions(), out, 0);
    const built = join(out, 'rebuilt-0.parquet');
    // Two kept ranges of one file: fetched (on a bucket, downloaded) and checked once.
    expect(reads).toBe(1);
    expect(unit.files).toHaveLength(1);
    expect(unit.files[0]).toMatchObject({
      rows: A + C,
      companies: [
        { ticker: 'A', first_row: 0, rows: A },
        { ticker: 'C', first_row: A, rows: C },
      ],
    });

    // Exactly the kept rows, in order, with exact decimals and lists.
    const got = await duck.all(
      `SELECT file_row_number AS rn, * EXCLUDE (file_row_number) FROM read_parquet('${built}', file_row_number = true) ORDER BY rn`,
    );
    const want = await duck.all(`SELECT * FROM (${SOURCE}) WHERE ticker <> 'B' ORDER BY n`);
    expect(got.map(({ rn: _rn, ...r }) => r)).toEqual(want);
    expect(got[A + C - 1]?.big).toBe(`${ROWS - 1}${'0'.repeat(28)}7`);
    // Its rows and period_end span come from its footer's statistics, equal to a scan of it.
    const [span] = await duck.all(
      `SELECT CAST(min(period_end) AS VARCHAR) AS lo, CAST(max(period_end) AS VARCHAR) AS hi FROM read_parquet('${built}')`,
    );
    expect(unit.files[0]).toMatchObject({ min_period_end: span!.lo, max_period_end: span!.hi });

    // Source groups [0, 2048) [2048, 4096) [4096, 6144) [6144, 8192) [8192, 9000): B (3000..5000)
    // cuts groups 1 and 2, which are re-encoded; groups 0, 3 and 4 are the source's, unchanged.
    const [before, after] = [await groupsOf(src), await groupsOf(built)];
    const rowsPerGroup = (m: Record<string, unknown>[]) =>
      m.filter((r) => Number(r.c) === 0).map((r) => Number(r.n));
    expect(rowsPerGroup(before)).toEqual([2048, 2048, 2048, 2048, 808]);
    expect(rowsPerGroup(after)).toEqual([2048, 952, 1144, 2048, 808]);
    const strip = (m: Record<string, unknown>[], g: number) =>
      m.filter((r) => Number(r.g) === g).map(({ g: _g, ...r }) => r);
    for (const [from, to] of [
      [0, 0],
      [3, 3],
      [4, 4],
    ])
      expect(strip(after, to!)).toEqual(strip(before, from!));
    // Byte for byte: the copied groups' bytes appear in the rebuilt file.
    const [a, b] = [await readFile(src), await readFile(built)];
    const offsets = await duck.all(
      `SELECT row_group_id AS g, min(coalesce(dictionary_page_offset, data_page_offset)) AS lo, max(coalesce(dictionary_page_offset, data_page_offset) + total_compressed_size) AS hi FROM parquet_metadata('${src}') GROUP BY g ORDER BY g`,
    );
    for (const g of [0, 3, 4]) {
      const o = offsets[g]!;
      expect(b.includes(a.subarray(Number(o.lo), Number(o.hi)))).toBe(true);
    }
    const n = await duck.all(
      `SELECT count(*)::INTEGER AS c FROM read_parquet('${built}') WHERE ticker = 'B'`,
    );
    expect(n[0]?.c).toBe(0);
  });

  it('refuses a source altered behind its back inside a row group it would copy (same size)', async () => {
    const { src, file } = await writeSource('altered');
    // One byte inside row group 0, which the rebuild copies without decoding: only the hash sees it.
    const [g0] = await duck.all(
      `SELECT min(coalesce(dictionary_page_offset, data_page_offset)) AS lo FROM parquet_metadata('${src}') WHERE row_group_id = 0`,
    );
    const bytes = await readFile(src);
    const at = Number(g0!.lo) + 40;
    bytes[at] = bytes[at]! ^ 0xff;
    await writeFile(src, bytes);
    const source: ReuseSource = {
      manifest: { snapshot_id: 's1' } as Manifest,
      placeWhole: () => Promise.resolve(false),
      readable: () => Promise.resolve(src),
    };
    const err = await rebuiltUnit(
      source,
      [
        { file, first_row: 0, rows: A, companies: [{ ticker: 'A', first_row: 0, rows: A }] },
        { file, first_row: A + B, rows: C, companies: [{ ticker: 'C', first_row: A + B, rows: C }] },
      ],
      rebuildOptions(),
      join(dir, 'build-altered'),
      0,
    ).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'REUSE_SOURCE_CHANGED', retryable: true });
    expect((err as Error).message).toMatch(
      /altered\.parquet of s1, reused by this snapshot, fails its checksum/,
    );
  });

  it('re-encodes every kept row when the source footer differs from what this DuckDB writes', async () => {
    // Key/value metadata stands in for another writer: its row groups cannot join re-encoded ones.
    const { src, file } = await writeSource('other-writer', ", KV_METADATA {writer: 'older'}");
    const source: ReuseSource = {
      manifest: { snapshot_id: 's1' } as Manifest,
      placeWhole: () => Promise.resolve(false),
      readable: () => Promise.resolve(src),
    };
    const a = { ticker: 'A', first_row: 0, rows: A };
    const c = { ticker: 'C', first_row: A + B, rows: C };
    const out = join(dir, 'build-other');
    const unit = await rebuiltUnit(
      source,
      [
        { file, first_row: 0, rows: A, companies: [a] },
        { file, first_row: A + B, rows: C, companies: [c] },
      ],
      rebuildOptions(),
      out,
      0,
    );
    expect(unit.files[0]?.rows).toBe(A + C);
    const built = join(out, 'rebuilt-0.parquet');
    const got = await duck.all(
      `SELECT file_row_number AS rn, * EXCLUDE (file_row_number) FROM read_parquet('${built}', file_row_number = true) ORDER BY rn`,
    );
    const want = await duck.all(`SELECT * FROM (${SOURCE}) WHERE ticker <> 'B' ORDER BY n`);
    expect(got.map(({ rn: _rn, ...r }) => r)).toEqual(want);
    // Nothing copied: the source's groups inside kept rows (2048 rows at 0, 6144, 8192) are not there.
    const groups = await duck.all(
      `SELECT DISTINCT row_group_id AS g, row_group_num_rows AS n FROM parquet_metadata('${built}') ORDER BY g`,
    );
    const sizes = groups.map((r) => Number(r.n));
    expect(sizes.reduce((x, y) => x + y, 0)).toBe(A + C);
    expect(sizes).not.toEqual([2048, 952, 1144, 2048, 808]);
    const kv = await duck.all(`SELECT count(*)::INTEGER AS c FROM parquet_kv_metadata('${built}')`);
    expect(kv[0]?.c).toBe(0);
  });

  it('cuts kept rows along row groups: whole groups inside, partial ones at the ends', () => {
    const sizes = [2048, 2048, 2048, 2048, 808];
    expect(rowGroupSpans(sizes, 0, 3000)).toEqual([
      { first: 0, rows: 2048, whole: 0 },
      { first: 2048, rows: 952 },
    ]);
    expect(rowGroupSpans(sizes, 5000, 4000)).toEqual([
      { first: 5000, rows: 1144 },
      { first: 6144, rows: 2048, whole: 3 },
      { first: 8192, rows: 808, whole: 4 },
    ]);
    expect(rowGroupSpans(sizes, 2100, 100)).toEqual([{ first: 2100, rows: 100 }]);
    expect(() => rowGroupSpans(sizes, 8000, 2000)).toThrow(
      /rows up to 10000 were kept, but the file holds only 9000/,
    );
  });
});
