/**
 * verify (API and CLI) against real published snapshots, including damaged ones, and the DDL:
 * the DuckDB statements are executed in DuckDB against the snapshot; the warehouse dialects are
 * checked for the types the manifest's columns require.
 */
import { execFile } from 'node:child_process';
import { copyFile, mkdtemp, open, rm, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDuck, type DuckSession } from '../../src/output/convert/duckdb.js';
import {
  createPartWriter,
  ddl,
  publishSnapshot,
  verifySnapshot,
  type Manifest,
} from '../../src/output/index.js';
import { syntheticFactRow } from '../helpers/synthetic-rows.js';
import type { DatasetName, OutputFormat, PartPointer } from '../../src/types.js';

const run = promisify(execFile);
const BIN = fileURLToPath(new URL('../../bin/filings-export.mjs', import.meta.url));
const DATE = '2026-11-21';

let duck: DuckSession;
const roots: string[] = [];
beforeAll(async () => {
  duck = await openDuck({ threads: 1 });
});
afterAll(async () => {
  duck.close();
  await Promise.all(roots.map((r) => rm(r, { recursive: true, force: true })));
});

type Row = Record<string, unknown>;

async function stage(
  root: string,
  id: string,
  dataset: DatasetName,
  ticker: string,
  rows: Row[],
): Promise<PartPointer> {
  const w = createPartWriter({
    root,
    snapshotId: id,
    dataset,
    ticker,
    lineage: { snapshotId: id, fetchedAt: '2026-11-21T01:00:00Z', requestedTicker: ticker },
  });
  for (const r of rows) await w.write(r);
  return { dataset, ticker, status: 'done', ...(await w.finish()) };
}

function facts(ticker: string, n: number, tweak: (r: Row, i: number) => Row = (r) => r): Row[] {
  return Array.from({ length: n }, (_, i) => tweak(syntheticFactRow(i, { ticker, cik: '0000320193' }), i));
}

/** A published snapshot with facts_full (two files), evidence and series_catalog. */
async function snapshot(
  id: string,
  formats: OutputFormat[] = ['parquet', 'ndjson'],
  root?: string,
  tweak?: (r: Row, i: number) => Row,
): Promise<{ root: string; manifest: Manifest }> {
  const dir = root ?? (await mkdtemp(join(tmpdir(), 'fx-output-verify-')));
  if (root === undefined) roots.push(dir);
  const parts = [
    await stage(dir, id, 'facts_full', 'AAPL', facts('AAPL', 1500, tweak)),
    await stage(dir, id, 'facts_full', 'MSFT', facts('MSFT', 200)),
    await stage(dir, id, 'evidence', 'AAPL', [
      {
        evidence_key: 'e1',
        cik: '0000320193',
        source_filed_at: '2024-11-01',
        highlight_payload_json: { start: 5 },
      },
    ]),
    await stage(dir, id, 'series_catalog', 'AAPL', [
      { series_key: 'k1', observation_count: 3, first_period_end: '2020-01-31' },
    ]),
  ];
  const manifest = await publishSnapshot({
    root: dir,
    snapshotId: id,
    snapshotDate: DATE,
    formats,
    parts,
    targetFileBytes: 40_000,
    rowGroupRows: 1000,
  });
  return { root: dir, manifest };
}

async function corrupt(path: string): Promise<void> {
  const fh = await open(path, 'r+');
  try {
    const { size } = await fh.stat();
    await fh.write(Buffer.from('garbage!'), 0, 8, Math.floor(size / 2));
  } finally {
    await fh.close();
  }
}

describe('verifySnapshot', () => {
  it('passes a sound snapshot, checking every row of every file', async () => {
    const { root, manifest } = await snapshot('v-ok');
    const report = await verifySnapshot(root, 'v-ok');
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.files).toHaveLength(manifest.files.length);
    expect(
      manifest.files.filter((f) => f.dataset === 'facts_full' && f.format === 'parquet').length,
    ).toBeGreaterThan(1);
    expect(report.valuesChecked).toBe(2 * 1700);
    expect(report.rowsChecked).toBe(2 * manifest.totals.rows);
  });

  it('catches a corrupted file and a missing one', async () => {
    const { root, manifest } = await snapshot('v-bad');
    const pq = manifest.files.find((f) => f.format === 'parquet' && f.dataset === 'facts_full')!;
    const nd = manifest.files.find((f) => f.format === 'ndjson' && f.dataset === 'evidence')!;
    await corrupt(join(root, pq.path));
    await unlink(join(root, nd.path));
    const report = await verifySnapshot(root, 'v-bad');
    expect(report.ok).toBe(false);
    const byPath = new Map(report.files.map((f) => [f.path, f]));
    expect(byPath.get(pq.path)?.problems.join(' ')).toMatch(/sha256/);
    expect(byPath.get(nd.path)?.problems).toEqual(['missing']);
    expect(
      report.files
        .filter((f) => !f.ok)
        .map((f) => f.path)
        .sort(),
    ).toEqual([nd.path, pq.path].sort());
  });

  it('reports rows where value_num is not value_scaled_int x 10^scale', async () => {
    const { root } = await snapshot('v-values', ['parquet'], undefined, (r, i) =>
      i === 17 ? { ...r, value_num: `${String(r.value_num)}1` } : r,
    );
    const report = await verifySnapshot(root, 'v-values');
    expect(report.ok).toBe(false);
    const bad = report.files.filter((f) => !f.ok);
    expect(bad).toHaveLength(1);
    expect(bad[0]?.problems.join(' ')).toMatch(/^1 row where value_num != value_scaled_int x 10\^scale/);
    expect(bad[0]?.problems.join(' ')).toContain(
      String(syntheticFactRow(17, { ticker: 'AAPL', cik: '0000320193' }).fact_key),
    );
  });

  it('flags an unpublished snapshot and files the manifest does not list', async () => {
    const { root, manifest } = await snapshot('v-stray', ['parquet']);
    const f = manifest.files[0]!;
    await copyFile(join(root, f.path), join(root, f.path.replace(/part-\d+/, 'part-99999')));
    await unlink(join(root, '_snapshots', 'v-stray', '_SUCCESS'));
    const report = await verifySnapshot(root, 'v-stray');
    expect(report.ok).toBe(false);
    expect(report.published).toBe(false);
    expect(report.problems.join('\n')).toMatch(/_SUCCESS is missing/);
    expect(report.problems.join('\n')).toMatch(/part-99999\.parquet is not listed in the manifest/);
  });

  it('the CLI exits 0 on a sound snapshot (latest by default) and 1 with a report otherwise', async () => {
    const { root, manifest } = await snapshot('v-cli');
    const ok = await run(process.execPath, [BIN, 'verify', '--out', root]);
    expect(ok.stdout).toMatch(/^snapshot v-cli: OK/);
    await corrupt(join(root, manifest.files.at(-1)!.path));
    const failed = await run(process.execPath, [BIN, 'verify', 'v-cli', '--out', root]).then(
      () => ({ code: 0, stdout: '' }),
      (err: { code: number; stdout: string }) => err,
    );
    expect(failed.code).toBe(1);
    expect(failed.stdout).toMatch(/snapshot v-cli: FAILED/);
    expect(failed.stdout).toContain(`FAIL ${manifest.files.at(-1)!.path}`);
  });
});

describe('ddl', () => {
  let root: string;
  let manifest: Manifest;
  beforeAll(async () => {
    ({ root, manifest } = await snapshot('d-1'));
    // A second, published snapshot, and a third whose publish did not finish (no _SUCCESS).
    await snapshot('d-2', ['parquet', 'ndjson'], root);
    await snapshot('d-3', ['parquet', 'ndjson'], root);
    await unlink(join(root, '_snapshots', 'd-3', '_SUCCESS'));
  });

  it('DuckDB: the statements run in DuckDB and expose typed, published rows only', async () => {
    const sql = await ddl(root, 'd-1', 'duckdb');
    for (const stmt of sql.split(/;\s*\n/).filter((s) => s.replace(/--.*$/gm, '').trim() !== ''))
      await duck.run(stmt);
    const per = await duck.all(`SELECT snapshot_id, count(*) AS n FROM facts_full GROUP BY ALL ORDER BY ALL`);
    expect(per).toEqual([
      { snapshot_id: 'd-1', n: '1700' },
      { snapshot_id: 'd-2', n: '1700' },
    ]);
    expect(await duck.all(`SELECT count(*) AS n FROM facts_full_d_1`)).toEqual([
      { n: String(manifest.datasets.facts_full?.rows) },
    ]);
    const types = Object.fromEntries(
      (await duck.all(`DESCRIBE facts_full`)).map((r) => [r.column_name, r.column_type]),
    );
    expect(types).toMatchObject({
      value_scaled_int: 'DECIMAL(38,0)',
      period_end: 'DATE',
      axis_types: 'VARCHAR[]',
      snapshot_date: 'DATE',
      snapshot_id: 'VARCHAR',
      _fetched_at: 'TIMESTAMP WITH TIME ZONE',
    });
    const ev = Object.fromEntries(
      (await duck.all(`DESCRIBE evidence_d_1`)).map((r) => [r.column_name, r.column_type]),
    );
    expect(ev).toMatchObject({ highlight_payload_json: 'JSON', source_filed_at: 'DATE' });
  });

  it('DuckDB over the NDJSON files gives the same types and rows', async () => {
    const sql = await ddl(root, 'd-1', 'duckdb', { format: 'ndjson', tablePrefix: 'nd_' });
    for (const stmt of sql.split(/;\s*\n/).filter((s) => s.replace(/--.*$/gm, '').trim() !== ''))
      await duck.run(stmt);
    const diff = await duck.all(
      `SELECT count(*) AS n FROM (SELECT * EXCLUDE (snapshot_date, snapshot_id) FROM nd_facts_full_d_1 EXCEPT ALL SELECT * EXCLUDE (snapshot_date, snapshot_id) FROM facts_full_d_1)`,
    );
    expect(diff).toEqual([{ n: '0' }]);
    const types = Object.fromEntries(
      (await duck.all(`DESCRIBE nd_facts_full`)).map((r) => [r.column_name, r.column_type]),
    );
    expect(types).toMatchObject({
      value_scaled_int: 'DECIMAL(38,0)',
      period_end: 'DATE',
      snapshot_date: 'DATE',
    });
  });

  it('warehouse dialects type every column from the manifest and declare the Hive keys', async () => {
    const cols = manifest.datasets.facts_full!.columns;
    const bq = await ddl(root, 'd-1', 'bigquery', { location: 'gs://bucket/fx', tablePrefix: 'filings.' });
    const sf = await ddl(root, 'd-1', 'snowflake');
    const sp = await ddl(root, 'd-1', 'spark');
    const expectType: Record<string, [string, string, string]> = {
      VARCHAR: ['STRING', 'VARCHAR', 'STRING'],
      BOOLEAN: ['BOOL', 'BOOLEAN', 'BOOLEAN'],
      INTEGER: ['INT64', 'INTEGER', 'INT'],
      DOUBLE: ['FLOAT64', 'DOUBLE', 'DOUBLE'],
      DATE: ['DATE', 'DATE', 'DATE'],
      TIMESTAMPTZ: ['TIMESTAMP', 'TIMESTAMP_TZ', 'TIMESTAMP'],
      'DECIMAL(38,0)': ['BIGNUMERIC', 'NUMBER(38,0)', 'DECIMAL(38,0)'],
      'VARCHAR[]': ['ARRAY<STRING>', 'ARRAY', 'ARRAY<STRING>'],
      JSON: ['STRING', 'VARIANT', 'STRING'],
    };
    for (const c of cols) {
      const [b, s, k] = expectType[c.type]!;
      expect(bq).toContain(`  ${c.name} ${b}`);
      expect(sf).toContain(`  "${c.name}" ${s} AS (`);
      expect(sp).toContain(`  \`${c.name}\` ${k}`);
    }
    expect(bq).toContain('WITH PARTITION COLUMNS (snapshot_date DATE, snapshot_id STRING)');
    expect(bq).toContain(`uris = ['gs://bucket/fx/facts_full/*.parquet']`);
    expect(bq).toContain('CREATE OR REPLACE EXTERNAL TABLE `filings.facts_full`');
    expect(sf).toMatch(
      /snapshot_date DATE AS TO_DATE\(SPLIT_PART\(SPLIT_PART\(METADATA\$FILENAME, 'snapshot_date=', 2\), '\/', 1\)\)/,
    );
    expect(sf).toContain('PARTITION BY (snapshot_date, snapshot_id)');
    expect(sp).toContain('PARTITIONED BY (snapshot_date, snapshot_id)');
    expect(sp).toContain('  snapshot_date DATE,\n  snapshot_id STRING');
  });

  it('the CLI prints the DDL of the latest published snapshot', async () => {
    const { stdout } = await run(process.execPath, [BIN, 'ddl', '--dialect', 'spark', '--out', root]);
    expect(stdout).toMatch(/^-- filings-export snapshot d-2 /);
    expect(stdout).toContain('USING PARQUET');
  });
});
