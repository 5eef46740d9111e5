/**
 * Parquet files concatenated without re-encoding (parquet-concat.ts) and the compact-protocol codec
 * under it (thrift-compact.ts), checked against DuckDB: it writes the inputs, and it must read the
 * concatenation as the file one COPY writes, row for row, row group for row group.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDuck, type DuckSession } from '../../src/output/convert/duckdb.js';
import { memberCut, rowRanges } from '../../src/output/staged-part/row-cuts.js';
import { concatParquet, parquetRowGroups } from '../../src/output/convert/parquet-concat.js';
import { decodeStruct, encodeStruct, TType, type TStruct } from '../../src/output/convert/thrift-compact.js';

let duck: DuckSession;
let dir: string;
beforeAll(async () => {
  duck = await openDuck({ threads: 1 });
  dir = await mkdtemp(join(tmpdir(), 'fx-parquet-concat-'));
});
afterAll(async () => {
  duck.close();
  await rm(dir, { recursive: true, force: true });
});

const ROWS = 30_000;
/** DuckDB rounds row groups up to whole 2,048-row vectors; rowRanges does the same. */
const GROUP = 2048;
/** Every column type the datasets write, nulls, a value beyond DECIMAL's double range, and text that repeats (dictionaries, bloom filters). */
const SOURCE = `SELECT
    i AS n,
    CAST(CAST(i AS HUGEINT) * 100000000000000000000000000000 + 7 AS DECIMAL(38,0)) AS big,
    CASE WHEN i % 7 = 0 THEN NULL ELSE 'ticker-' || (i % 13) END AS ticker,
    md5(CAST(i AS VARCHAR)) AS fact_key,
    DATE '2020-01-01' + CAST(i % 900 AS INTEGER) AS period_end,
    TIMESTAMPTZ '2026-11-21 02:03:04.567+00' + to_seconds(i) AS fetched_at,
    i % 2 = 0 AS flag,
    CAST(i AS DOUBLE) / 3 AS approx,
    ['a' || (i % 3), 'b'] AS axes,
    CAST('{"k":' || i || '}' AS JSON) AS extra
  FROM range(${ROWS}) t(i)`;

async function write(path: string, skip: number, take: number): Promise<void> {
  await duck.run(
    `COPY (SELECT * FROM (${SOURCE}) WHERE n >= ${skip} AND n < ${skip + take} ORDER BY n) TO '${path}' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE ${GROUP})`,
  );
}

const footerOf = async (path: string): Promise<Uint8Array> => {
  const buf = await readFile(path);
  const len = buf.readUInt32LE(buf.length - 8);
  return buf.subarray(buf.length - 8 - len, buf.length - 8);
};

describe('thrift compact protocol', () => {
  it('re-encodes a footer DuckDB wrote to the same bytes', async () => {
    const path = join(dir, 'footer.parquet');
    await write(path, 0, ROWS);
    const footer = await footerOf(path);
    const { struct, end } = decodeStruct(footer);
    expect(end).toBe(footer.length);
    expect(Buffer.from(encodeStruct(struct)).equals(Buffer.from(footer))).toBe(true);
  });

  it('round-trips every wire type, long field-id gaps and long lists', () => {
    const s: TStruct = {
      t: TType.STRUCT,
      fields: [
        { id: 1, value: { t: TType.BOOL_TRUE } },
        { id: 2, value: { t: TType.BOOL_FALSE } },
        { id: 3, value: { t: TType.BYTE, v: 200n } },
        { id: 4, value: { t: TType.I16, v: -32768n } },
        { id: 5, value: { t: TType.I32, v: 2147483647n } },
        { id: 40, value: { t: TType.I64, v: -9223372036854775808n } },
        { id: 41, value: { t: TType.I64, v: 9223372036854775807n } },
        { id: 42, value: { t: TType.DOUBLE, v: new Uint8Array([0, 0, 0, 0, 0, 0, 0xf0, 0x3f]) } },
        { id: 43, value: { t: TType.BINARY, v: new TextEncoder().encode('PAR1 é') } },
        {
          id: 44,
          value: {
            t: TType.LIST,
            elem: TType.I32,
            items: Array.from({ length: 20 }, (_, i) => ({ t: TType.I32, v: BigInt(i - 10) })),
          },
        },
        {
          id: 45,
          value: {
            t: TType.LIST,
            elem: TType.BOOL_TRUE,
            items: [
              { t: 'bool', byte: 1 },
              { t: 'bool', byte: 2 },
            ],
          },
        },
        {
          id: 46,
          value: {
            t: TType.MAP,
            key: TType.BINARY,
            val: TType.STRUCT,
            entries: [
              [
                { t: TType.BINARY, v: new Uint8Array([120]) },
                { t: TType.STRUCT, fields: [{ id: 300, value: { t: TType.I64, v: 5n } }] },
              ],
            ],
          },
        },
        { id: 47, value: { t: TType.MAP, key: 0, val: 0, entries: [] } },
      ],
    };
    const bytes = encodeStruct(s);
    const { struct, end } = decodeStruct(bytes);
    expect(end).toBe(bytes.length);
    expect(struct).toEqual(s);
    expect(Buffer.from(encodeStruct(struct)).equals(Buffer.from(bytes))).toBe(true);
  });

  it('refuses truncated input and unknown wire types', () => {
    const bytes = encodeStruct({
      t: TType.STRUCT,
      fields: [{ id: 1, value: { t: TType.I64, v: 1234567n } }],
    });
    expect(() => decodeStruct(bytes.subarray(0, 2))).toThrow(/unexpected end/);
    expect(() => decodeStruct(new Uint8Array([0x1e, 0]))).toThrow(/unknown wire type 14/);
  });
});

describe('concatParquet', () => {
  it('reads back as the file one COPY writes: rows in order, row groups and their statistics', async () => {
    const single = join(dir, 'single.parquet');
    await write(single, 0, ROWS);
    const cuts = rowRanges(0, ROWS, 3, GROUP);
    expect(cuts.length).toBe(3);
    const inputs: string[] = [];
    for (const [i, c] of cuts.entries()) {
      inputs.push(join(dir, `range-${i}.parquet`));
      await write(inputs[i]!, c.skip, c.take);
    }
    const merged = join(dir, 'merged.parquet');
    const result = await concatParquet(inputs, merged);
    expect(result.rows).toBe(ROWS);
    expect(result.rowGroups).toBe(Math.ceil(ROWS / GROUP));

    const rowsOf = (p: string) =>
      duck.all(
        `SELECT file_row_number AS rn, * EXCLUDE (file_row_number) FROM read_parquet('${p}', file_row_number = true) ORDER BY rn`,
      );
    const [a, b] = [await rowsOf(merged), await rowsOf(single)];
    expect(a.length).toBe(ROWS);
    expect(a).toEqual(b);
    // Exact values survive (DECIMAL(38,0) beyond a double), and column types are the same.
    expect(a[ROWS - 1]?.big).toBe(`${ROWS - 1}${'0'.repeat(28)}7`);
    const types = (p: string) => duck.all(`SELECT name, type FROM parquet_schema('${p}')`);
    expect(await types(merged)).toEqual(await types(single));

    const groups = (p: string) =>
      duck.all(
        `SELECT row_group_id, column_id, row_group_num_rows, stats_min_value, stats_max_value, stats_null_count, num_values, total_compressed_size, encodings FROM parquet_metadata('${p}') ORDER BY row_group_id, column_id`,
      );
    expect(await groups(merged)).toEqual(await groups(single));
    // Filters on statistics and bloom filters still find their rows.
    const hit = await duck.all(
      `SELECT count(*)::INTEGER AS c FROM read_parquet('${merged}') WHERE fact_key = md5('9876') AND period_end >= DATE '2020-01-01'`,
    );
    expect(hit[0]?.c).toBe(1);
    const probe = (p: string, value: string) =>
      duck.all(
        `SELECT row_group_id, bloom_filter_excludes FROM parquet_bloom_probe('${p}', 'ticker', '${value}') ORDER BY row_group_id`,
      );
    for (const value of ['ticker-5', 'ticker-99']) {
      const probed = await probe(merged, value);
      expect(probed.length).toBe(result.rowGroups);
      expect(probed).toEqual(await probe(single, value));
    }
    expect((await probe(merged, 'ticker-99')).every((r) => r.bloom_filter_excludes === true)).toBe(true);
  });

  it('takes one input as it is, and keeps inputs of one row group each', async () => {
    const one = join(dir, 'one.parquet');
    await write(one, 0, 100);
    const out = join(dir, 'one-out.parquet');
    expect((await concatParquet([one], out)).rows).toBe(100);
    const small = [join(dir, 's0.parquet'), join(dir, 's1.parquet'), join(dir, 's2.parquet')];
    for (const [i, p] of small.entries()) await write(p, i * 10, 10);
    const merged = join(dir, 'small-out.parquet');
    expect(await concatParquet(small, merged)).toMatchObject({ rows: 30, rowGroups: 3 });
    const rows = await duck.all(`SELECT n FROM read_parquet('${merged}')`);
    expect(rows.map((r) => r.n)).toEqual(Array.from({ length: 30 }, (_, i) => String(i)));
  });

  it('copies a subset of row groups byte for byte: exact rows, footer counts, readable by DuckDB', async () => {
    const whole = join(dir, 'subset-src.parquet');
    await write(whole, 0, ROWS);
    const sizes = await parquetRowGroups(whole);
    expect(sizes.length).toBe(Math.ceil(ROWS / GROUP));
    const tail = join(dir, 'subset-tail.parquet');
    await write(tail, 100, 500); // rows of group 0, which is not picked
    // Groups 1, 2 (neighbours: one read), 5 and the last, then a whole file after them.
    const picked = [1, 2, 5, sizes.length - 1];
    const out = join(dir, 'subset-out.parquet');
    const result = await concatParquet([{ path: whole, rowGroups: picked }, tail], out);
    const starts = sizes.map((_, i) => sizes.slice(0, i).reduce((a, b) => a + b, 0));
    const expected = [
      ...picked.flatMap((g) => Array.from({ length: sizes[g]! }, (_, i) => starts[g]! + i)),
      ...Array.from({ length: 500 }, (_, i) => 100 + i),
    ];
    expect(result).toMatchObject({ rows: expected.length, rowGroups: picked.length + 1 });

    const got = await duck.all(
      `SELECT file_row_number AS rn, * EXCLUDE (file_row_number) FROM read_parquet('${out}', file_row_number = true) ORDER BY rn`,
    );
    const rowsOf = (ns: number[]) =>
      duck.all(`SELECT * FROM (${SOURCE}) WHERE n IN (SELECT unnest([${ns.join(',')}])) ORDER BY n`);
    const copied = expected.length - 500;
    const want = [...(await rowsOf(expected.slice(0, copied))), ...(await rowsOf(expected.slice(copied)))];
    expect(got.map(({ rn: _rn, ...r }) => r)).toEqual(want);
    // Exact decimals beyond a double and lists, straight from the copied bytes.
    const at = got.find((r) => r.n === String(starts[5]! + 3))!;
    expect(at.big).toBe(`${starts[5]! + 3}${'0'.repeat(28)}7`);
    expect(at.axes).toEqual([`a${(starts[5]! + 3) % 3}`, 'b']);
    // The footer's counts: per row group as in the source, and in all.
    const meta = await duck.all(
      `SELECT DISTINCT row_group_id, row_group_num_rows FROM parquet_metadata('${out}') ORDER BY row_group_id`,
    );
    expect(meta.map((r) => Number(r.row_group_num_rows))).toEqual([...picked.map((g) => sizes[g]!), 500]);
    const total = await duck.all(`SELECT count(*)::INTEGER AS c FROM read_parquet('${out}')`);
    expect(total[0]?.c).toBe(expected.length);
    // A filter on a copied group's value finds its one row.
    const hit = await duck.all(
      `SELECT count(*)::INTEGER AS c FROM read_parquet('${out}') WHERE fact_key = md5('${starts[2]! + 7}')`,
    );
    expect(hit[0]?.c).toBe(1);
  });

  it('refuses a subset that is not ascending row group indexes of the file', async () => {
    const src = join(dir, 'subset-bad.parquet');
    await write(src, 0, 5000);
    for (const rowGroups of [[], [1, 0], [0, 99]])
      await expect(concatParquet([{ path: src, rowGroups }], join(dir, 'bad-out.parquet'))).rejects.toThrow(
        new RegExp(`${src}: (no row groups picked|row groups \\[.*\\] are not ascending)`),
      );
  });

  it('refuses files whose schemas differ, naming the file', async () => {
    const a = join(dir, 'schema-a.parquet');
    const b = join(dir, 'schema-b.parquet');
    await write(a, 0, 10);
    await duck.run(`COPY (SELECT 1 AS n) TO '${b}' (FORMAT parquet)`);
    await expect(concatParquet([a, b], join(dir, 'x.parquet'))).rejects.toThrow(
      new RegExp(`${b}: its schema or file metadata differs`),
    );
  });

  it('refuses what is not a whole Parquet file, naming it', async () => {
    const good = join(dir, 'good.parquet');
    await write(good, 0, 10);
    const text = join(dir, 'text.parquet');
    await writeFile(text, 'not parquet at all, just text');
    await expect(concatParquet([good, text], join(dir, 'y.parquet'))).rejects.toThrow(
      new RegExp(`${text} is not a Parquet file this can concatenate: no PAR1 magic`),
    );
    const cut = join(dir, 'cut.parquet');
    const whole = await readFile(good);
    // Footer bytes damaged: its length still fits, its content does not decode.
    const damaged = Buffer.from(whole);
    const len = damaged.readUInt32LE(damaged.length - 8);
    damaged.fill(0xff, damaged.length - 8 - len, damaged.length - 8 - len + 16);
    await writeFile(cut, damaged);
    await expect(concatParquet([good, cut], join(dir, 'z.parquet'))).rejects.toThrow(
      /its footer does not decode/,
    );
    await expect(concatParquet([], join(dir, 'w.parquet'))).rejects.toThrow(/no input files/);
  });
});

describe('rowRanges', () => {
  /** Ranges must cover the rows once, in order, in whole row groups but for the last. */
  function expectCover(ranges: { skip: number; take: number }[], skip: number, take: number, unit: number) {
    let at = skip;
    for (const r of ranges) {
      expect(r.skip).toBe(at);
      expect(r.take).toBeGreaterThan(0);
      at += r.take;
    }
    expect(at).toBe(skip + take);
    for (const r of ranges.slice(0, -1)) expect(r.take % unit).toBe(0);
  }

  it('cuts at whole row groups, later ranges shorter by what skipping costs them', () => {
    // 15 row groups in 3 ranges: 6, 5 and the rest (4 groups less 528 rows).
    expect(rowRanges(0, 30_000, 3, 2048)).toEqual([
      { skip: 0, take: 12_288 },
      { skip: 12_288, take: 10_240 },
      { skip: 22_528, take: 7472 },
    ]);
    // Offsets are relative to the file's first row (a big part split across files); a row group
    // is rounded up to whole 2,048-row vectors, as DuckDB fills it.
    expect(rowRanges(500, 16_384, 2, 1000)).toEqual([
      { skip: 500, take: 10_240 },
      { skip: 10_740, take: 6144 },
    ]);
    for (const [take, ways, group] of [
      [1_000_000, 2, 24_576],
      [1_000_000, 8, 24_576],
      [1_000_000, 64, 24_576],
      [123_457, 5, 2048],
      [40 * 2048, 10, 2048],
    ] as const) {
      const ranges = rowRanges(7, take, ways, group);
      expectCover(ranges, 7, take, Math.ceil(group / 2048) * 2048);
      expect(ranges.length).toBe(Math.min(ways, Math.floor(Math.ceil(take / group) / 4)));
      // Each range's cost (a quarter per row skipped, one per row converted) is within a row group
      // or two of the others'.
      const costs = ranges.map((r) => 0.25 * (r.skip - 7) + r.take);
      if (ranges.length > 1)
        expect(Math.max(...costs.slice(0, -1)) - Math.min(...costs.slice(0, -1))).toBeLessThanOrEqual(
          2 * group,
        );
    }
  });

  it('cuts equal ranges when skipping costs nothing (gzip members to start from)', () => {
    expect(rowRanges(0, 30_000, 3, 2048, 0)).toEqual([
      { skip: 0, take: 10_240 },
      { skip: 10_240, take: 10_240 },
      { skip: 20_480, take: 9520 },
    ]);
  });

  it('keeps one range when the file is under four row groups per range, or one way is asked', () => {
    expect(rowRanges(0, 7 * 2048, 4, 2048)).toEqual([{ skip: 0, take: 7 * 2048 }]);
    expect(rowRanges(0, 8 * 2048, 1, 2048)).toEqual([{ skip: 0, take: 8 * 2048 }]);
    expect(rowRanges(3, 0, 2, 2048)).toEqual([{ skip: 3, take: 0 }]);
    expect(rowRanges(0, 8 * 2048, 3, 2048)).toHaveLength(2);
  });
});

describe('memberCut', () => {
  const members = [
    { row: 100, offset: 1000 },
    { row: 200, offset: 2100 },
    { row: 300, offset: 3300 },
  ];
  it('takes the bytes from the member a range starts in to the first member past its end', () => {
    expect(memberCut(members, { skip: 150, take: 100 }, 400)).toEqual({
      offset: 1000,
      end: 3300,
      row: 100,
      rows: 200,
    });
    expect(memberCut(members, { skip: 200, take: 100 }, 400)).toEqual({
      offset: 2100,
      end: 3300,
      row: 200,
      rows: 100,
    });
    expect(memberCut(members, { skip: 310, take: 90 }, 400)).toEqual({
      offset: 3300,
      end: undefined,
      row: 300,
      rows: 100,
    });
    expect(memberCut(members, { skip: 0, take: 120 }, 400)).toEqual({
      offset: 0,
      end: 2100,
      row: 0,
      rows: 200,
    });
  });
  it('is undefined for the whole file: no members, or a range over all of them', () => {
    expect(memberCut([], { skip: 150, take: 100 }, 400)).toBeUndefined();
    expect(memberCut(members, { skip: 50, take: 350 }, 400)).toBeUndefined();
  });
});
