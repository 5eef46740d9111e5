/**
 * Publishing: staged parts of every dataset become typed, exact, sized files in the Hive layout,
 * read back here with DuckDB over `<root>/<dataset>/*\/*\/*.parquet` (hive_partitioning) and the
 * NDJSON twins. Rows are built from the interface's field lists (sections 2.2, 2.6, 2.7) and the
 * catalog rows the emulator returns, with the awkward values: beyond 2^53, negative scales, null
 * dates, a significand wider than DECIMAL(38,0), unknown fields.
 */
import { mkdtemp, readdir, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { openDuck, type DuckSession } from '../../src/output/convert/duckdb.js';
import {
  createPartWriter,
  publishSnapshot,
  readSchemaRegistry,
  type Manifest,
} from '../../src/output/index.js';
import { exactDecimal, syntheticFactRow } from '../helpers/synthetic-rows.js';
import type { DatasetName, PartPointer } from '../../src/types.js';

type Row = Record<string, unknown>;
const DATE = '2026-11-21';
const FETCHED = '2026-11-21T02:03:04.567Z';

let duck: DuckSession;
const roots: string[] = [];
beforeAll(async () => {
  duck = await openDuck({ threads: 1 });
});
afterAll(async () => {
  duck.close();
  await Promise.all(roots.map((r) => rm(r, { recursive: true, force: true })));
});

async function newRoot(): Promise<string> {
  const r = await mkdtemp(join(tmpdir(), 'fx-output-publish-'));
  roots.push(r);
  return r;
}

async function stage(
  root: string,
  snapshotId: string,
  dataset: DatasetName,
  ticker: string,
  rows: Row[],
): Promise<PartPointer> {
  const w = createPartWriter({
    root,
    snapshotId,
    dataset,
    ticker,
    lineage: { snapshotId, fetchedAt: FETCHED, requestedTicker: ticker },
  });
  for (const r of rows) await w.write(r);
  return { dataset, ticker, status: 'done', ...(await w.finish()) };
}

const company = (ticker: string, cik: string) => ({ ticker, cik });

/** Fact rows with the edge cases named in the interface (2.2). */
function factRows(ticker: string, cik: string, n: number): Row[] {
  const rows = Array.from({ length: n }, (_, i) => syntheticFactRow(i, company(ticker, cik)));
  const base = (i: number): Row => ({
    ...syntheticFactRow(100_000 + i, company(ticker, cik)),
    dims_key: null,
    axis_types: [],
    dimension_path_label: null,
    axis_member_path: null,
    is_consolidated: true,
  });
  rows.push(
    { ...base(1), value_scaled_int: '-12345', scale: -2, value_num: '-123.45' },
    { ...base(2), value_scaled_int: '9007199254740993', scale: 0, value_num: '9007199254740993' },
    // Wider than DECIMAL(38,0): kept exact in value_scaled_int_text.
    {
      ...base(3),
      value_scaled_int: '123456789012345678901234567890123456789012',
      scale: -3,
      value_num: '123456789012345678901234567890123456789.012',
    },
    {
      ...base(4),
      period_start: null,
      source_is_amendment: null,
      source_is_current_filing_period: null,
      current_ticker: null,
    },
    { ...base(5), future_field: { added_in: 'v2', weight: 0.5 }, raw_note: 'not in the interface' },
  );
  return rows;
}

function coreRows(ticker: string, cik: string, n: number): Row[] {
  return Array.from({ length: n }, (_, i) => {
    const r = syntheticFactRow(i * 2, company(ticker, cik));
    delete r.dims_key;
    delete r.axis_types;
    delete r.dimension_path_label;
    delete r.axis_member_path;
    return r;
  });
}

function evidenceRows(cik: string, n: number): Row[] {
  return Array.from({ length: n }, (_, i) => ({
    evidence_key: `ev${i}`,
    cik,
    source_accession: `${cik}-24-${String(i).padStart(6, '0')}`,
    source_form_type: i % 2 === 0 ? '10-K' : null,
    source_is_amendment: i % 3 === 0 ? null : false,
    source_filed_at: `2024-0${1 + (i % 9)}-1${i % 10}`,
    filing_url: `/viewer/${i}`,
    document_url: i % 4 === 0 ? null : `https://www.sec.gov/Archives/${i}.htm`,
    evidence_url: `/api/evidence/ev${i}/open`,
    viewer_url: null,
    snippet_text: `Net sales were $${i},000 "million" — see note ${i}`,
    locator_type: ['html', 'ixbrl', 'xbrl'][i % 3],
    html_start_offset: i % 3 === 2 ? null : 1000 * i,
    html_end_offset: i % 3 === 2 ? null : 1000 * i + 57,
    document_name: 'aapl-20240928.htm',
    document_sequence: '1',
    section_title: i % 5 === 0 ? null : 'Item 7',
    highlight_payload_json:
      i % 3 === 2
        ? null
        : {
            locator_type: 'html',
            start: 1000 * i,
            cells: [i, i + 1],
            ix: { name: 'us-gaap:Revenues', context: null },
          },
  }));
}

/** Catalog rows shaped as the emulator returns them (src/emulator/data/rows/catalogs.ts). */
function seriesCatalogRows(cik: string, n: number, extra: (i: number) => Row = () => ({})): Row[] {
  return Array.from({ length: n }, (_, i) => ({
    series_key: `s${i}`.padEnd(64, '0'),
    cik,
    metric_id: `us-gaap#M${i}`,
    dims_key: i % 2 === 0 ? null : `d${i}`,
    axis_types: i % 2 === 0 ? [] : ['srt:ProductOrServiceAxis'],
    is_consolidated: i % 2 === 0,
    observation_count: 10 + i,
    first_period_end: '2010-09-25',
    last_period_end: '2024-09-28',
    latest_value_num: exactDecimal(String(391035 + i), 6),
    ...extra(i),
  }));
}

function dimsCatalogRows(n: number): Row[] {
  return Array.from({ length: n }, (_, i) => ({
    dims_key: `d${i}`,
    dimension_path_label: `Americas ${i}`,
    axis_types: ['us-gaap:StatementBusinessSegmentsAxis'],
    members: [
      {
        axis: 'us-gaap:StatementBusinessSegmentsAxis',
        axis_label: 'Segments',
        member: `aapl:Americas${i}Member`,
      },
    ],
    is_geographic_like: true,
    is_business_segment_like: true,
    is_product_like: false,
    fact_count: 3 + i,
  }));
}

function issuerRow(cik: string, ticker: string): Row {
  return {
    cik,
    current_ticker: ticker,
    issuer_name: `${ticker} Inc.`,
    ipo_date: ticker === 'AAPL' ? '1980-12-12' : null,
    exchange: 'Nasdaq',
    sector: null,
    industry: 'Tech',
    sic_code: '3571',
    as_of_date: '2024-11-01',
  };
}

async function describeTypes(sql: string): Promise<Record<string, string>> {
  const rows = await duck.all(`DESCRIBE ${sql}`);
  return Object.fromEntries(rows.map((r) => [String(r.column_name), String(r.column_type)]));
}

const hive = (root: string, dataset: string, ext = 'parquet') =>
  ext === 'parquet'
    ? `read_parquet('${root}/${dataset}/*/*/*.parquet', hive_partitioning = true)`
    : `read_ndjson('${root}/${dataset}/*/*/*.ndjson.gz', hive_partitioning = true)`;

describe('publishSnapshot: every dataset, typed and exact', () => {
  let root: string;
  let manifest: Manifest;
  const input: Record<string, Row[]> = {};

  beforeAll(async () => {
    root = await newRoot();
    const snap = 'nightly-2026-11-21';
    input.AAPL = factRows('AAPL', '0000320193', 1200);
    input.MSFT = factRows('MSFT', '0000789019', 40);
    const parts: PartPointer[] = [
      await stage(root, snap, 'facts_full', 'AAPL', input.AAPL),
      await stage(root, snap, 'facts_full', 'MSFT', input.MSFT),
      {
        dataset: 'facts_full',
        ticker: 'NVDA',
        status: 'not_found',
        rows: 0,
        bytes: 0,
        message: 'Unknown ticker: NVDA',
      },
      {
        dataset: 'facts_full',
        ticker: 'TSLA',
        status: 'failed',
        rows: 0,
        bytes: 0,
        message: '503 after 5 attempts',
      },
      await stage(root, snap, 'facts_core', 'AAPL', coreRows('AAPL', '0000320193', 300)),
      await stage(root, snap, 'facts_latest', 'AAPL', coreRows('AAPL', '0000320193', 50)),
      await stage(root, snap, 'evidence', 'AAPL', evidenceRows('0000320193', 90)),
      await stage(root, snap, 'evidence', 'MSFT', []),
      await stage(root, snap, 'issuer_reference', 'AAPL', [issuerRow('0000320193', 'AAPL')]),
      await stage(root, snap, 'issuer_reference', 'MSFT', [issuerRow('0000789019', 'MSFT')]),
      await stage(root, snap, 'series_catalog', 'AAPL', seriesCatalogRows('0000320193', 70)),
      await stage(root, snap, 'dims_catalog', 'AAPL', dimsCatalogRows(12)),
    ];
    manifest = await publishSnapshot({
      root,
      snapshotId: snap,
      snapshotDate: DATE,
      formats: ['parquet', 'ndjson'],
      parts,
      stats: {
        requests: 14,
        rateLimited429: 2,
        retries: 3,
        startedAt: '2026-11-21T02:00:00.000Z',
        finishedAt: '2026-11-21T02:10:00.000Z',
        waits: [
          { message: 'daily quota', since: '2026-11-21T02:01:00.000Z', until: '2026-11-21T02:03:00.000Z' },
        ],
      },
    });
  });

  it('reads facts_full over the Hive layout with the schema types', async () => {
    const types = await describeTypes(`SELECT * FROM ${hive(root, 'facts_full')}`);
    expect(types).toMatchObject({
      fact_key: 'VARCHAR',
      period_start: 'DATE',
      period_end: 'DATE',
      period_end_year: 'INTEGER',
      value_num: 'VARCHAR',
      value_num_approx: 'DOUBLE',
      value_scaled_int: 'DECIMAL(38,0)',
      value_scaled_int_text: 'VARCHAR',
      scale: 'INTEGER',
      source_is_amendment: 'BOOLEAN',
      source_filed_at: 'DATE',
      is_consolidated: 'BOOLEAN',
      axis_types: 'VARCHAR[]',
      _extra: 'JSON',
      _snapshot_id: 'VARCHAR',
      _fetched_at: 'TIMESTAMP WITH TIME ZONE',
      _requested_ticker: 'VARCHAR',
      snapshot_date: 'DATE',
      snapshot_id: 'VARCHAR',
    });
  });

  it('keeps every fact row exact, with lineage, and unknown fields in _extra', async () => {
    const out = await duck.all(
      `SELECT fact_key, value_num, CAST(value_scaled_int AS VARCHAR) AS vsi, value_scaled_int_text AS vsi_text, scale,
              CAST(period_start AS VARCHAR) AS period_start, CAST(period_end AS VARCHAR) AS period_end, period_end_year,
              source_is_amendment, is_consolidated, axis_types, CAST(_extra AS VARCHAR) AS extra, current_ticker,
              _snapshot_id, strftime(_fetched_at, '%Y-%m-%dT%H:%M:%S.%gZ') AS fetched, _requested_ticker,
              CAST(snapshot_date AS VARCHAR) AS snapshot_date, snapshot_id
       FROM ${hive(root, 'facts_full')}`,
    );
    const expected = [
      ...input.AAPL!.map((r) => ['AAPL', r] as const),
      ...input.MSFT!.map((r) => ['MSFT', r] as const),
    ];
    expect(out).toHaveLength(expected.length);
    const byKey = new Map(out.map((r) => [`${String(r._requested_ticker)}/${String(r.fact_key)}`, r]));
    for (const [ticker, r] of expected) {
      const o = byKey.get(`${ticker}/${String(r.fact_key)}`);
      expect(o, String(r.fact_key)).toBeDefined();
      const wide = String(r.value_scaled_int).replace('-', '').length > 38;
      const known = new Set([
        'fact_key',
        'series_key',
        'cik',
        'current_ticker',
        'metric_id',
        'metric_label',
        'period_key',
        'period_kind',
        'period_start',
        'period_end',
        'period_end_year',
        'period_end_quarter',
        'unit_signature',
        'unit_class',
        'currency',
        'value_num',
        'value_scaled_int',
        'scale',
        'source_accession',
        'source_form_type',
        'source_is_amendment',
        'source_is_current_filing_period',
        'source_filed_at',
        'evidence_key',
        'evidence_url',
        'is_consolidated',
        'dims_key',
        'axis_types',
        'dimension_path_label',
      ]);
      const extra = Object.fromEntries(Object.entries(r).filter(([k, v]) => !known.has(k) && v !== null));
      expect(o).toEqual({
        fact_key: r.fact_key,
        value_num: r.value_num,
        vsi: wide ? null : r.value_scaled_int,
        vsi_text: wide ? r.value_scaled_int : null,
        scale: r.scale,
        period_start: r.period_start,
        period_end: r.period_end,
        period_end_year: r.period_end_year,
        source_is_amendment: r.source_is_amendment,
        is_consolidated: r.is_consolidated,
        axis_types: r.axis_types,
        extra: Object.keys(extra).length === 0 ? null : JSON.stringify(extra),
        current_ticker: r.current_ticker,
        _snapshot_id: 'nightly-2026-11-21',
        fetched: FETCHED,
        _requested_ticker: ticker,
        snapshot_date: DATE,
        snapshot_id: 'nightly-2026-11-21',
      });
      // The double is only a convenience: it is the nearest double to the exact text.
    }
    const approx = await duck.all(
      `SELECT count(*) AS n FROM ${hive(root, 'facts_full')} WHERE value_num_approx IS DISTINCT FROM TRY_CAST(value_num AS DOUBLE)`,
    );
    expect(Number(approx[0]?.n)).toBe(0);
  });

  it('writes NDJSON with the same rows and columns as the Parquet', async () => {
    for (const dataset of [
      'facts_full',
      'evidence',
      'series_catalog',
      'dims_catalog',
      'issuer_reference',
    ] as const) {
      const ds = manifest.datasets[dataset]!;
      const cols = `{${ds.columns.map((c) => `'${c.name}': '${c.type}'`).join(', ')}}`;
      const nd = `read_ndjson('${root}/${dataset}/*/*/*.ndjson.gz', columns = ${cols}, hive_partitioning = false)`;
      const pq = `read_parquet('${root}/${dataset}/*/*/*.parquet', hive_partitioning = false)`;
      const diff = await duck.all(
        `SELECT (SELECT count(*) FROM (SELECT COLUMNS(*)::VARCHAR FROM ${pq} EXCEPT ALL SELECT COLUMNS(*)::VARCHAR FROM ${nd})) AS a,
                (SELECT count(*) FROM (SELECT COLUMNS(*)::VARCHAR FROM ${nd} EXCEPT ALL SELECT COLUMNS(*)::VARCHAR FROM ${pq})) AS b,
                (SELECT count(*) FROM ${nd}) AS n`,
      );
      expect({ dataset, ...diff[0] }).toEqual({ dataset, a: '0', b: '0', n: String(ds.rows) });
    }
    // Exact decimals are strings in NDJSON, never JSON numbers.
    const line = await duck.all(
      `SELECT json FROM read_ndjson_objects('${root}/facts_full/*/*/*.ndjson.gz') LIMIT 1`,
    );
    expect(String(line[0]?.json)).toMatch(/"value_scaled_int":"-?\d+"/);
  });

  it('types the other datasets: evidence, issuer reference, inferred catalogs', async () => {
    expect(await describeTypes(`SELECT * FROM ${hive(root, 'evidence')}`)).toMatchObject({
      source_filed_at: 'DATE',
      source_is_amendment: 'BOOLEAN',
      html_start_offset: 'BIGINT',
      highlight_payload_json: 'JSON',
      snippet_text: 'VARCHAR',
    });
    expect(await describeTypes(`SELECT * FROM ${hive(root, 'issuer_reference')}`)).toMatchObject({
      ipo_date: 'DATE',
      as_of_date: 'DATE',
      sic_code: 'VARCHAR',
    });
    expect(await describeTypes(`SELECT * FROM ${hive(root, 'series_catalog')}`)).toMatchObject({
      series_key: 'VARCHAR',
      axis_types: 'VARCHAR[]',
      is_consolidated: 'BOOLEAN',
      observation_count: 'BIGINT',
      first_period_end: 'DATE',
      latest_value_num: 'VARCHAR',
      _extra: 'JSON',
    });
    expect(await describeTypes(`SELECT * FROM ${hive(root, 'dims_catalog')}`)).toMatchObject({
      members: 'JSON',
      is_geographic_like: 'BOOLEAN',
      fact_count: 'BIGINT',
    });

    const ev = await duck.all(
      `SELECT evidence_key, CAST(highlight_payload_json AS VARCHAR) AS h, html_end_offset FROM ${hive(root, 'evidence')} ORDER BY evidence_key`,
    );
    const src = new Map(evidenceRows('0000320193', 90).map((r) => [r.evidence_key, r]));
    expect(ev).toHaveLength(90);
    for (const e of ev) {
      const r = src.get(String(e.evidence_key))!;
      expect(e.h === null ? null : JSON.parse(String(e.h))).toEqual(r.highlight_payload_json);
      expect(e.html_end_offset).toBe(r.html_end_offset === null ? null : String(r.html_end_offset));
    }
    const members = await duck.all(
      `SELECT CAST(members AS VARCHAR) AS m FROM ${hive(root, 'dims_catalog')} WHERE dims_key = 'd3'`,
    );
    expect(JSON.parse(String(members[0]?.m))).toEqual(dimsCatalogRows(12)[3]?.members);
  });

  it('records every part, the totals and the quota waits in the manifest', async () => {
    // No staged rows are kept beside the files: a part has no archive, a file names its companies.
    const factFiles = manifest.files.filter((f) => f.dataset === 'facts_full' && f.format === 'parquet');
    expect(factFiles.flatMap((f) => f.companies!.map((c) => c.ticker))).toEqual(['AAPL', 'MSFT']);
    expect(factFiles[0]!.companies![0]).toEqual({ ticker: 'AAPL', first_row: 0, rows: input.AAPL!.length });
    expect(manifest.status).toBe('published');
    expect(manifest.complete).toBe(false); // TSLA failed
    expect(manifest.parts.filter((p) => p.dataset === 'facts_full')).toEqual([
      {
        dataset: 'facts_full',
        ticker: 'AAPL',
        status: 'done',
        rows: input.AAPL!.length,
      },
      {
        dataset: 'facts_full',
        ticker: 'MSFT',
        status: 'done',
        rows: input.MSFT!.length,
      },
      {
        dataset: 'facts_full',
        ticker: 'NVDA',
        status: 'not_found',
        rows: 0,
        message: 'Unknown ticker: NVDA',
      },
      { dataset: 'facts_full', ticker: 'TSLA', status: 'failed', rows: 0, message: '503 after 5 attempts' },
    ]);
    expect(manifest.datasets.facts_full).toMatchObject({
      schema_version: 1,
      rows: input.AAPL!.length + input.MSFT!.length,
      extra_fields: ['axis_member_path', 'future_field', 'raw_note'],
      parts: { done: 2, not_found: 1, failed: 1, bad_request: 0 },
    });
    expect(manifest.datasets.evidence?.rows).toBe(90);
    expect(manifest.totals).toMatchObject({
      requests: 14,
      rate_limited_429: 2,
      retries: 3,
      wall_time_ms: 600_000,
      rows: input.AAPL!.length + input.MSFT!.length + 300 + 50 + 90 + 2 + 70 + 12,
    });
    expect(manifest.quota_wait).toMatchObject({ waited: true, total_ms: 120_000 });
    for (const f of manifest.files) {
      expect(f.path).toMatch(
        new RegExp(
          `^${f.dataset}/snapshot_date=${DATE}/snapshot_id=nightly-2026-11-21/part-\\d{5}\\.(parquet|ndjson\\.gz)$`,
        ),
      );
    }
    const facts = [...input.AAPL!, ...input.MSFT!].map((r) => String(r.period_end)).sort();
    const pq = manifest.files.filter((f) => f.dataset === 'facts_full' && f.format === 'parquet');
    expect(pq.map((f) => f.min_period_end).sort()[0]).toBe(facts[0]);
    expect(
      pq
        .map((f) => f.max_period_end)
        .sort()
        .at(-1),
    ).toBe(facts.at(-1));
    const onDisk = JSON.parse(
      await readFile(join(root, '_snapshots', 'nightly-2026-11-21', 'manifest.json'), 'utf8'),
    ) as Manifest;
    expect(onDisk).toEqual(manifest);
    // Staging is gone once published.
    await expect(
      readFile(join(root, '_staging', 'nightly-2026-11-21', 'facts_full', 'AAPL.ndjson.gz')),
    ).rejects.toThrow();
  });

  it('is idempotent: publishing again returns the published manifest', async () => {
    const again = await publishSnapshot({
      root,
      snapshotId: 'nightly-2026-11-21',
      snapshotDate: DATE,
      formats: ['parquet', 'ndjson'],
      parts: [],
    });
    expect(again).toEqual(manifest);
  });

  it('a second snapshot on the same date does not collide', async () => {
    const p = await stage(
      root,
      'adhoc-2026-11-21-b',
      'facts_full',
      'AAPL',
      factRows('AAPL', '0000320193', 10),
    );
    await publishSnapshot({
      root,
      snapshotId: 'adhoc-2026-11-21-b',
      snapshotDate: DATE,
      formats: ['parquet'],
      parts: [p],
    });
    const per = await duck.all(
      `SELECT snapshot_id, count(*) AS n FROM ${hive(root, 'facts_full')} GROUP BY ALL ORDER BY ALL`,
    );
    expect(per).toEqual([
      { snapshot_id: 'adhoc-2026-11-21-b', n: '15' },
      { snapshot_id: 'nightly-2026-11-21', n: String(input.AAPL!.length + input.MSFT!.length) },
    ]);
  });
});

describe('publishSnapshot: file sizing', () => {
  it('combines many small companies into one file', async () => {
    const root = await newRoot();
    const parts: PartPointer[] = [];
    for (let t = 0; t < 25; t++)
      parts.push(
        await stage(root, 's1', 'facts_core', `T${t}`, coreRows(`T${t}`, String(t).padStart(10, '0'), 20)),
      );
    const m = await publishSnapshot({
      root,
      snapshotId: 's1',
      snapshotDate: DATE,
      formats: ['parquet'],
      parts,
    });
    expect(m.files).toHaveLength(1);
    expect(m.files[0]?.rows).toBe(500);
  });

  it('splits a large company across files near the target size, in row order', async () => {
    const root = await newRoot();
    const big = factRows('BIG', '0000000001', 6000);
    const parts = [
      await stage(root, 's2', 'facts_full', 'AAA', factRows('AAA', '0000000002', 30)),
      await stage(root, 's2', 'facts_full', 'BIG', big),
      await stage(root, 's2', 'facts_full', 'ZZZ', factRows('ZZZ', '0000000003', 30)),
    ];
    const target = 80_000;
    const m = await publishSnapshot({
      root,
      snapshotId: 's2',
      snapshotDate: DATE,
      formats: ['parquet', 'ndjson'],
      parts,
      targetFileBytes: target,
      rowGroupRows: 1000,
    });
    const pq = m.files.filter((f) => f.format === 'parquet');
    expect(pq.length).toBeGreaterThanOrEqual(4);
    expect(pq.reduce((s, f) => s + f.rows, 0)).toBe(big.length + 70);
    // Every file but the last is near the target (the first is planned from a guessed ratio).
    for (const f of pq.slice(1, -1)) expect(f.bytes).toBeGreaterThan(target * 0.5);
    for (const f of pq) expect(f.bytes).toBeLessThan(target * 2);
    // BIG's rows span several files, in their original order.
    const rows = await duck.all(
      `SELECT filename, fact_key FROM read_parquet('${root}/facts_full/*/*/*.parquet', filename = true) WHERE _requested_ticker = 'BIG'`,
    );
    expect(new Set(rows.map((r) => r.filename)).size).toBeGreaterThan(2);
    expect(rows.map((r) => r.fact_key)).toEqual(big.map((r) => r.fact_key));
    // NDJSON files hold the same rows file by file.
    const nd = m.files.filter((f) => f.format === 'ndjson');
    expect(nd.map((f) => f.rows)).toEqual(pq.map((f) => f.rows));
  });

  it('rebuilds an unpublished snapshot identically (crash between files and manifest)', async () => {
    const root = await newRoot();
    const parts = [
      await stage(root, 's3', 'facts_full', 'AAA', factRows('AAA', '0000000002', 800)),
      await stage(root, 's3', 'evidence', 'AAA', evidenceRows('0000000002', 30)),
    ];
    const opts = {
      root,
      snapshotId: 's3',
      snapshotDate: DATE,
      formats: ['parquet', 'ndjson'] as ('parquet' | 'ndjson')[],
      parts,
      targetFileBytes: 50_000,
      rowGroupRows: 500,
      keepStaging: true,
    };
    const first = await publishSnapshot(opts);
    await unlink(join(root, '_snapshots', 's3', '_SUCCESS'));
    await unlink(join(root, '_snapshots', 's3', 'manifest.json'));
    const second = await publishSnapshot(opts);
    expect(second.files).toEqual(first.files);
  });
});

describe('publishSnapshot: a big file converted in row ranges by several sessions', () => {
  const BIG_ROWS = 40_000;
  const big = factRows('BIG', '0000000001', BIG_ROWS);
  const small = factRows('AAA', '0000000002', 30);

  /**
   * Stages the same parts under a fresh root and publishes them with `conversions`; `files` sets
   * the target file size so that BIG's rows take about that many files (the writer's first guess
   * is 0.6 output bytes per staged byte).
   */
  async function publishWith(
    conversions: number,
    extra: { files?: number; rows?: Row[]; olderSidecar?: boolean; alone?: boolean; ndjson?: boolean } = {},
  ) {
    const root = await newRoot();
    const parts = [
      ...(extra.alone === true ? [] : [await stage(root, 'rr', 'facts_full', 'AAA', small)]),
      await stage(root, 'rr', 'facts_full', 'BIG', extra.rows ?? big),
    ];
    if (extra.olderSidecar === true) {
      // As an older writer left it: no gzip member starts, so every range reads from the start.
      const sidecar = join(root, '_staging', 'rr', 'facts_full', 'BIG.fields.json');
      const json = JSON.parse(await readFile(sidecar, 'utf8')) as { members?: unknown };
      expect(Array.isArray(json.members) && json.members.length > 0).toBe(true);
      delete json.members;
      await writeFile(sidecar, JSON.stringify(json));
    }
    const bigBytes = parts[parts.length - 1]?.bytes ?? 0;
    const lines: string[] = [];
    const logger = createLogger({
      level: 'debug',
      pretty: false,
      destination: new Writable({
        write(chunk: Buffer, _enc, done) {
          lines.push(chunk.toString());
          done();
        },
      }),
    });
    const manifest = await publishSnapshot({
      root,
      snapshotId: 'rr',
      snapshotDate: DATE,
      formats: extra.ndjson === true ? ['parquet', 'ndjson'] : ['parquet'],
      parts,
      rowGroupRows: 2048,
      conversions,
      logger,
      ...(extra.files !== undefined ? { targetFileBytes: Math.floor((0.6 * bigBytes) / extra.files) } : {}),
    });
    const ranged = lines
      .map((l) => JSON.parse(l) as { msg: string; ranges?: number })
      .filter((l) => l.msg === 'file converted in row ranges');
    // Every value of every row, in file order, file by file, as one digest (the path differs per
    // root, the file name does not); 40,000 rows compared in DuckDB, not as JS objects.
    const files = `read_parquet('${root}/facts_full/*/*/*.parquet', filename = true, file_row_number = true)`;
    const [content] = await duck.all(
      `SELECT count(*)::INTEGER AS n, md5(string_agg(CAST(t AS VARCHAR), chr(10) ORDER BY t.file, t.rn)) AS digest FROM (SELECT parse_filename(filename) AS file, file_row_number AS rn, * EXCLUDE (filename, file_row_number) FROM ${files}) t`,
    );
    const keys = async (ticker: string) =>
      (
        await duck.all(
          `SELECT fact_key FROM ${files} WHERE _requested_ticker = '${ticker}' ORDER BY parse_filename(filename), file_row_number`,
        )
      ).map((r) => r.fact_key);
    const row = async (ticker: string, factKey: unknown) =>
      (
        await duck.all(
          `SELECT CAST(period_end AS VARCHAR) AS period_end, CAST(_extra AS VARCHAR) AS _extra FROM ${files} WHERE _requested_ticker = '${ticker}' AND fact_key = '${String(factKey)}'`,
        )
      )[0];
    const groups = await duck.all(
      `SELECT parse_filename(file_name) AS file, row_group_id, any_value(row_group_num_rows) AS n FROM parquet_metadata('${root}/facts_full/*/*/*.parquet') GROUP BY ALL ORDER BY ALL`,
    );
    return { manifest, content, keys, row, groups, ranged };
  }

  it('writes the rows and values one conversion writes, in as many row groups', async () => {
    const one = await publishWith(1, { ndjson: true });
    const three = await publishWith(3, { ndjson: true });
    expect(one.ranged).toEqual([]);
    expect(three.ranged.map((l) => l.ranges)).toEqual([3]);
    expect(three.content?.n).toBe(big.length + small.length);
    expect(three.content).toEqual(one.content);
    expect(await three.keys('BIG')).toEqual(big.map((r) => r.fact_key));
    // As many row groups per file. Their sizes may differ by a few rows: DuckDB closes a row group
    // at the first whole chunk past the size, and chunks follow the parts a file is made of.
    const perFile = (g: Record<string, unknown>[]) => g.map((r) => r.file);
    expect(perFile(three.groups)).toEqual(perFile(one.groups));
    const files = (m: Manifest) =>
      m.files.map((f) => ({ name: f.path.split('/').pop(), format: f.format, rows: f.rows }));
    expect(files(three.manifest)).toEqual(files(one.manifest));
    // The NDJSON twin is written from the concatenated Parquet: byte for byte the same file.
    const ndjson = (m: Manifest) => m.files.filter((f) => f.format === 'ndjson').map((f) => f.sha256);
    expect(ndjson(three.manifest)).toEqual(ndjson(one.manifest));
  });

  it('a part alone in its file: ranges start at its gzip members, or skip rows when it has none', async () => {
    const one = await publishWith(1, { alone: true });
    const members = await publishWith(3, { alone: true });
    // Staged before gzip members were recorded: every range reads from the start and skips.
    const older = await publishWith(3, { alone: true, olderSidecar: true });
    for (const r of [members, older]) {
      expect(r.ranged.map((l) => l.ranges)).toEqual([3]);
      expect(r.content?.n).toBe(big.length);
      expect(r.content).toEqual(one.content);
    }
  });

  it('converts each file of a company split across files in ranges, from the right row', async () => {
    const one = await publishWith(1, { files: 2 });
    const two = await publishWith(2, { files: 2 });
    expect(one.manifest.files.filter((f) => f.format === 'parquet').length).toBeGreaterThanOrEqual(2);
    expect(two.ranged.length).toBeGreaterThanOrEqual(1);
    expect(two.content).toEqual(one.content);
    expect(await two.keys('BIG')).toEqual(big.map((r) => r.fact_key));
  });

  it('falls back to one tolerant conversion when a range meets a value that does not fit', async () => {
    const BAD = 35_000; // in the last of three ranges
    const rows = big.map((r, i) => (i === BAD ? { ...r, period_end: '2024-02-30' } : r));
    const one = await publishWith(1, { rows });
    const three = await publishWith(3, { rows });
    expect(three.ranged).toEqual([]);
    expect(three.manifest.warnings).toEqual(one.manifest.warnings);
    expect(three.manifest.warnings.join('\n')).toMatch(/kept in _extra/);
    expect(three.content).toEqual(one.content);
    const bad = await three.row('BIG', rows[BAD]?.fact_key);
    expect(bad?.period_end).toBeNull();
    expect(JSON.parse(String(bad?._extra))).toMatchObject({ period_end: '2024-02-30' });
  });

  it('refuses a conversions count that is not a whole number from 1 to 64', async () => {
    const root = await newRoot();
    for (const conversions of [0, 1.5, 65]) {
      await expect(
        publishSnapshot({
          root,
          snapshotId: 'rr',
          snapshotDate: DATE,
          formats: ['parquet'],
          parts: [],
          conversions,
        }),
      ).rejects.toThrow(/conversions must be an integer from 1 to 64/);
    }
  });
});

describe('publishSnapshot: staged lines are read exactly', () => {
  /** Text that a line splitter or a CSV reader could mistake for structure. */
  const awkward = [
    'tab\there, comma; pipe| quote " backslash \\ hash # at start',
    'control \u0001 \u0000 \u001f and the text \\x01',
    'line\nbreak and\r\ncarriage return',
    'non-BMP 😀 𝄞, accents éü, CJK 漢字, line separator \u2028 paragraph \u2029',
    '{"looks":"like json"}',
    '',
  ];
  const wide = `${'é'.repeat(100_000)}${'😀'.repeat(50_000)}${'x'.repeat(100_000)}`;

  function rows(n: number): Row[] {
    return evidenceRows('0000320193', n).map((r, i) => ({
      ...r,
      snippet_text: i === n - 2 ? wide : `${i}: ${awkward[i % awkward.length]!}`,
    }));
  }

  async function publishedSnippets(root: string, id: string): Promise<unknown[]> {
    const out = await duck.all(
      `SELECT snippet_text FROM read_parquet('${root}/evidence/*/snapshot_id=${id}/*.parquet')`,
    );
    return out.map((r) => r.snippet_text);
  }

  it('keeps every character and the row order, with a 500 KB field among short ones', async () => {
    const root = await newRoot();
    const input = rows(40);
    const parts = [await stage(root, 'l1', 'evidence', 'AAPL', input)];
    await publishSnapshot({ root, snapshotId: 'l1', snapshotDate: DATE, formats: ['parquet'], parts });
    expect(await publishedSnippets(root, 'l1')).toEqual(input.map((r) => r.snippet_text));
  });

  it('reads parts staged without a line-length record (older sidecar) or without a sidecar', async () => {
    const root = await newRoot();
    const a = rows(12);
    const b = rows(9);
    const parts = [
      await stage(root, 'l2', 'evidence', 'AAA', a),
      await stage(root, 'l2', 'evidence', 'BBB', b),
    ];
    const sidecarA = join(root, '_staging', 'l2', 'evidence', 'AAA.fields.json');
    const old = JSON.parse(await readFile(sidecarA, 'utf8')) as Record<string, unknown>;
    expect(old.max_line_chars).toBeGreaterThan(wide.length);
    delete old.max_line_chars;
    await writeFile(sidecarA, JSON.stringify(old));
    await unlink(join(root, '_staging', 'l2', 'evidence', 'BBB.fields.json'));
    await publishSnapshot({ root, snapshotId: 'l2', snapshotDate: DATE, formats: ['parquet'], parts });
    expect(await publishedSnippets(root, 'l2')).toEqual([...a, ...b].map((r) => r.snippet_text));
  });
});

describe('publishSnapshot: schemas evolve additively, nothing is dropped', () => {
  it('adds new catalog fields as columns, keeps values that do not fit in _extra', async () => {
    const root = await newRoot();
    const s1 = await stage(root, 'c1', 'series_catalog', 'AAPL', seriesCatalogRows('0000320193', 5));
    const m1 = await publishSnapshot({
      root,
      snapshotId: 'c1',
      snapshotDate: '2026-11-20',
      formats: ['parquet'],
      parts: [s1],
    });
    expect(m1.datasets.series_catalog?.schema_version).toBe(1);

    const rows2 = seriesCatalogRows('0000320193', 5, (i) => ({
      coverage_ratio: i / 4,
      ...(i === 2 ? { observation_count: 'twelve' } : {}),
    }));
    const s2 = await stage(root, 'c2', 'series_catalog', 'AAPL', rows2);
    const m2 = await publishSnapshot({
      root,
      snapshotId: 'c2',
      snapshotDate: DATE,
      formats: ['parquet'],
      parts: [s2],
    });
    const ds = m2.datasets.series_catalog!;
    expect(ds.schema_version).toBe(2);
    const names = ds.columns.map((c) => c.name);
    expect(names.slice(names.indexOf('latest_value_num'), names.indexOf('_extra'))).toEqual([
      'latest_value_num',
      'coverage_ratio',
    ]);
    expect(ds.columns.find((c) => c.name === 'coverage_ratio')?.type).toBe('DOUBLE');
    expect(m2.warnings.join('\n')).toMatch(/observation_count/);
    expect(m2.schema_changes).toEqual([
      { dataset: 'series_catalog', schema_version: 2, added: ['coverage_ratio'] },
    ]);

    const reg = await readSchemaRegistry(root, 'series_catalog');
    expect(reg?.schema_version).toBe(2);
    expect(reg?.history.map((h) => [h.version, h.added.includes('coverage_ratio')])).toEqual([
      [1, false],
      [2, true],
    ]);
    const bad = await duck.all(
      `SELECT observation_count, CAST(_extra AS VARCHAR) AS extra FROM read_parquet('${root}/series_catalog/snapshot_date=${DATE}/*/*.parquet') WHERE series_key = '${String(rows2[2]?.series_key)}'`,
    );
    expect(bad).toEqual([{ observation_count: null, extra: '{"observation_count":"twelve"}' }]);
    // Both snapshots read together: the older files simply lack the new column.
    const all = await duck.all(
      `SELECT snapshot_id, count(coverage_ratio) AS c FROM read_parquet('${root}/series_catalog/*/*/*.parquet', hive_partitioning = true, union_by_name = true) GROUP BY ALL ORDER BY ALL`,
    );
    expect(all).toEqual([
      { snapshot_id: 'c1', c: '0' },
      { snapshot_id: 'c2', c: '5' },
    ]);
  });

  it('an inferred dataset without rows has no columns yet (version 0); its first rows make version 1', async () => {
    const root = await newRoot();
    const empty = await stage(root, 'e1', 'dims_catalog', 'WMT', []);
    const m1 = await publishSnapshot({
      root,
      snapshotId: 'e1',
      snapshotDate: DATE,
      formats: ['parquet'],
      parts: [empty],
    });
    expect(m1.datasets.dims_catalog).toMatchObject({ schema_version: 0, rows: 0, files: 0 });
    expect(m1.files).toEqual([]);
    const p = await stage(root, 'e2', 'dims_catalog', 'AAPL', dimsCatalogRows(2));
    const m2 = await publishSnapshot({
      root,
      snapshotId: 'e2',
      snapshotDate: DATE,
      formats: ['parquet'],
      parts: [p],
    });
    expect(m2.datasets.dims_catalog?.schema_version).toBe(1);
    expect(m2.schema_changes[0]?.added).toEqual(Object.keys(dimsCatalogRows(1)[0]!));
  });

  it('keeps an impossible date or a fractional year in _extra instead of failing or rounding', async () => {
    const root = await newRoot();
    const rows = factRows('AAA', '0000000002', 3);
    rows[0] = { ...rows[0], period_end: '2024-02-30' };
    rows[1] = { ...rows[1], period_end_year: 2024.5 };
    const p = await stage(root, 't1', 'facts_full', 'AAA', rows);
    const m = await publishSnapshot({
      root,
      snapshotId: 't1',
      snapshotDate: DATE,
      formats: ['parquet'],
      parts: [p],
    });
    expect(m.warnings.join('\n')).toMatch(/does not fit|kept in _extra/);
    const out = await duck.all(
      `SELECT fact_key, CAST(period_end AS VARCHAR) AS pe, period_end_year AS y, CAST(_extra AS VARCHAR) AS extra FROM ${hive(root, 'facts_full')} WHERE fact_key IN ('${String(rows[0]?.fact_key)}', '${String(rows[1]?.fact_key)}') ORDER BY fact_key`,
    );
    const byKey = new Map(out.map((r) => [r.fact_key, r]));
    expect(byKey.get(rows[0]?.fact_key)).toMatchObject({ pe: null, y: rows[0]?.period_end_year });
    expect(JSON.parse(String(byKey.get(rows[0]?.fact_key)?.extra))).toMatchObject({
      period_end: '2024-02-30',
    });
    expect(byKey.get(rows[1]?.fact_key)).toMatchObject({ y: null });
    expect(JSON.parse(String(byKey.get(rows[1]?.fact_key)?.extra))).toMatchObject({
      period_end_year: '2024.5',
    });
  });

  it('keeps an integer too big for its column in _extra when every value was an integer (no shape guard)', async () => {
    const root = await newRoot();
    const rows = factRows('AAA', '0000000002', 3);
    // Still a safe integer, so the writer records the field as only ever an integer: the strict
    // conversion casts without a guard, and the cast itself must refuse the overflow.
    rows[2] = { ...rows[2], period_end_year: 3_000_000_000 };
    const p = await stage(root, 'ov1', 'facts_full', 'AAA', rows);
    const m = await publishSnapshot({
      root,
      snapshotId: 'ov1',
      snapshotDate: DATE,
      formats: ['parquet'],
      parts: [p],
    });
    expect(m.warnings.join('\n')).toMatch(/kept in _extra/);
    const out = await duck.all(
      `SELECT fact_key, period_end_year AS y, CAST(_extra AS VARCHAR) AS extra FROM ${hive(root, 'facts_full')} ORDER BY fact_key`,
    );
    const byKey = new Map(out.map((r) => [r.fact_key, r]));
    expect(byKey.get(rows[2]?.fact_key)?.y).toBeNull();
    expect(JSON.parse(String(byKey.get(rows[2]?.fact_key)?.extra))).toMatchObject({
      period_end_year: '3000000000',
    });
    expect(byKey.get(rows[0]?.fact_key)?.y).toBe(rows[0]?.period_end_year);
  });

  it('names a staged file altered behind its back (same size) as corrupt, not what reading it broke, and publishes nothing', async () => {
    const root = await newRoot();
    const p = await stage(root, 'alt1', 'facts_full', 'AAA', factRows('AAA', '0000000001', 2000));
    const path = join(root, p.file!);
    const bytes = await readFile(path);
    // A byte in the middle of the gzip stream: the conversion reading it fails on its own (CRC or
    // inflate error) while the hash, checked beside it, has not answered yet.
    bytes[Math.floor(bytes.length / 2)]! ^= 0xff;
    await writeFile(path, bytes);
    await expect(
      publishSnapshot({ root, snapshotId: 'alt1', snapshotDate: DATE, formats: ['parquet'], parts: [p] }),
    ).rejects.toThrow(/staged file .* is corrupt \(sha256/);
    expect(await readdir(join(root, 'facts_full')).catch(() => [])).toEqual([]);
    expect(await readdir(join(root, '_snapshots')).catch(() => [])).toEqual([]);
  });

  it('refuses to publish pending parts and staged files that do not match their pointer', async () => {
    const root = await newRoot();
    const p = await stage(root, 'r1', 'evidence', 'AAA', evidenceRows('0000000002', 3));
    await expect(
      publishSnapshot({
        root,
        snapshotId: 'r1',
        snapshotDate: DATE,
        formats: ['parquet'],
        parts: [{ ...p, status: 'pending' }],
      }),
    ).rejects.toThrow(/still pending/);
    await expect(
      publishSnapshot({
        root,
        snapshotId: 'r1',
        snapshotDate: DATE,
        formats: ['parquet'],
        parts: [{ ...p, sha256: '0'.repeat(64) }],
      }),
    ).rejects.toThrow(/corrupt/);
    await expect(
      publishSnapshot({
        root,
        snapshotId: 'r1',
        snapshotDate: '2026-02-30',
        formats: ['parquet'],
        parts: [p],
      }),
    ).rejects.toThrow(/not a calendar date/);
  });
});
