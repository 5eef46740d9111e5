/**
 * An incremental night publishes two datasets at once (dataset-lanes.ts). Each dataset's
 * conversion of several fetched companies concatenates their staged parts into a scratch file:
 * two datasets at once must never share one. Two datasets, two fetched companies each, one reused;
 * the rows of the second night must be exactly the staged ones. And how `changes` (which runs
 * beside them) tells a changed row from an unchanged one: columns of the same type on both sides
 * are compared as values (NULLs equal, lineage ignored), a column whose type changed by its JSON
 * text. Real DuckDB over real Parquet files, local root. And which dataset a lane takes first.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Manifest, ManifestFile } from '../../src/output/catalog/index.js';
import { openDuck, type DuckSession } from '../../src/output/convert/duckdb.js';
import { writeChanges } from '../../src/output/publish/changes.js';
import { longestFirst } from '../../src/output/publish/publish.js';
import { outputPorts } from '../../src/pipeline/output-adapter.js';
import type { DatasetName, PartPointer } from '../../src/types.js';
import { syntheticFactRow } from '../helpers/synthetic-rows.js';
import { publishFactParts, type OutputPorts } from '../helpers/synthetic-snapshot.js';

const date = '2026-11-21';
const DATASETS: DatasetName[] = ['facts_core', 'facts_latest'];
let tmp: string;
let duck: DuckSession;
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'fx-publish-lanes-'));
  duck = await openDuck({ threads: 1 });
});
afterAll(async () => {
  duck?.close();
  await rm(tmp, { recursive: true, force: true });
});

async function stage(ports: OutputPorts, id: string, dataset: DatasetName, ticker: string, first: number) {
  const w = ports.staged.createWriter({
    root: tmp,
    snapshotId: id,
    dataset,
    ticker,
    fetchedAt: `${date}T01:00:00Z`,
  });
  for (let i = first; i < first + 3000; i++) await w.write(syntheticFactRow(i, { ticker, cik: '7' }));
  return { dataset, ticker, status: 'done', ...(await w.finish()) } as PartPointer;
}

function publish(ports: OutputPorts, id: string, parts: PartPointer[]): Promise<void> {
  return publishFactParts(ports, { root: tmp, id, date, formats: ['parquet'], datasets: DATASETS }, parts);
}

async function keys(dataset: DatasetName, id: string): Promise<string[]> {
  const rows = await duck.all(
    `SELECT _requested_ticker || '|' || fact_key AS k FROM read_parquet('${tmp}/${dataset}/*/snapshot_id=${id}/*.parquet', hive_partitioning = false) ORDER BY ALL`,
  );
  return rows.map((r) => String(r.k));
}

describe('an incremental night publishing two datasets at once', () => {
  it('converts each dataset from its own staged parts', async () => {
    const ports = await outputPorts({ tmpDir: tmp });
    try {
      const first: PartPointer[] = [];
      for (const d of DATASETS)
        for (const [i, t] of ['AAA', 'BBB', 'CCC'].entries())
          first.push(await stage(ports, 'l1', d, t, i * 10_000));
      await publish(ports, 'l1', first);
      // Night 2: AAA and CCC filed (their rows move; each dataset has its own), BBB is reused.
      const second: PartPointer[] = [];
      for (const [j, d] of DATASETS.entries()) {
        second.push(await stage(ports, 'l2', d, 'AAA', 100_000 + j * 50_000));
        second.push({ dataset: d, ticker: 'BBB', status: 'done', rows: 3000, bytes: 0, reusedFrom: 'l1' });
        second.push(await stage(ports, 'l2', d, 'CCC', 120_000 + j * 50_000));
      }
      await publish(ports, 'l2', second);
      const expected = async (d: DatasetName, j: number): Promise<string[]> => {
        const bbb = (await keys(d, 'l1')).filter((k) => k.startsWith('BBB|'));
        const fetched = (['AAA', 'CCC'] as const).flatMap((ticker, n) =>
          Array.from({ length: 3000 }, (_, i) => {
            const r = syntheticFactRow(100_000 + n * 20_000 + j * 50_000 + i, { ticker, cik: '7' });
            return `${ticker}|${String(r.fact_key)}`;
          }),
        );
        return [...bbb, ...fetched].sort();
      };
      for (const [j, d] of DATASETS.entries()) expect(await keys(d, 'l2'), d).toEqual(await expected(d, j));
    } finally {
      await ports.closeOutput();
    }
  });
});

type Column = { name: string; type: string };

/** One facts_full Parquet file of a snapshot from a SELECT, and its manifest entry. */
async function snapshotFile(id: string, select: string): Promise<ManifestFile> {
  const rel = `facts_full/snapshot_id=${id}/part-00000.parquet`;
  await mkdir(join(tmp, 'facts_full', `snapshot_id=${id}`), { recursive: true });
  await duck.run(`COPY (${select}) TO '${join(tmp, rel)}' (FORMAT parquet)`);
  return { path: rel, dataset: 'facts_full', format: 'parquet' } as ManifestFile;
}

function manifest(id: string, file: ManifestFile, columns: Column[]): Manifest {
  return {
    snapshot_id: id,
    formats: ['parquet'],
    datasets: { facts_full: { columns } },
    files: [file],
    parts: [{ dataset: 'facts_full', ticker: 'AAA' }],
  } as unknown as Manifest;
}

const cols = (valueType: string): Column[] =>
  [
    'fact_key:VARCHAR',
    '_requested_ticker:VARCHAR',
    `value:${valueType}`,
    'note:VARCHAR',
    '_snapshot_id:VARCHAR',
  ].map((c) => ({ name: c.split(':')[0]!, type: c.split(':')[1]! }));

async function changesOf(prev: string, prevType: string, next: string, nextType: string) {
  const id = `s${Math.random().toString(36).slice(2, 8)}`;
  const before = await snapshotFile(`${id}-a`, prev);
  const now = await snapshotFile(`${id}-b`, next);
  const c = await writeChanges(duck, {
    root: tmp,
    snapshotId: `${id}-b`,
    snapshotDate: '2026-11-26',
    datasets: ['facts_full'],
    companies: { facts_full: ['AAA'] },
    columns: { facts_full: cols(nextType) },
    files: [now],
    previous: manifest(`${id}-a`, before, cols(prevType)),
  });
  const rows = await duck.all(
    `SELECT change, fact_key FROM read_parquet('${join(tmp, c!.files[0]!.path)}') ORDER BY change, fact_key`,
  );
  return { counts: c!.counts, rows: rows.map((r) => `${String(r.change)} ${String(r.fact_key)}`) };
}

const rowsSql = (values: string[], lineage: string): string =>
  values
    .map(
      (v, i) =>
        `SELECT 'k${i}' AS fact_key, 'AAA' AS _requested_ticker, ${v} AS value, ${i === 2 ? 'NULL' : `'n${i}'`}::VARCHAR AS note, '${lineage}' AS _snapshot_id`,
    )
    .join(' UNION ALL ');

describe('the order the lanes take datasets in', () => {
  it('the most staged bytes first (a night of all catalogs and one changed company), ties as listed', () => {
    const part = (dataset: DatasetName, ticker: string, bytes: number, reused = false): PartPointer => ({
      dataset,
      ticker,
      status: 'done',
      rows: 10,
      bytes: reused ? 0 : bytes,
      ...(reused ? { reusedFrom: 'n1' } : { file: `${dataset}/${ticker}` }),
    });
    const tickers = ['AAPL', 'MSFT', 'NVDA'];
    const partsOf = new Map<DatasetName, PartPointer[]>([
      ['facts_full', tickers.map((t) => part('facts_full', t, 5000, t !== 'AAPL'))],
      ['evidence', tickers.map((t) => part('evidence', t, 4000, t !== 'AAPL'))],
      ['series_catalog', tickers.map((t) => part('series_catalog', t, 2000))],
      ['facts_core', tickers.map((t) => part('facts_core', t, 0, true))],
      ['facts_latest', tickers.map((t) => part('facts_latest', t, 0, true))],
    ]);
    expect([...longestFirst(partsOf).keys()]).toEqual([
      'series_catalog',
      'facts_full',
      'evidence',
      'facts_core',
      'facts_latest',
    ]);
  });
});

describe('changes compares rows', () => {
  it('by value where the type is the same: a new value is a change, NULLs and lineage are not', async () => {
    const prev = rowsSql(['1.5::DOUBLE', '2.0::DOUBLE', 'NULL::DOUBLE', '4.0::DOUBLE'], 'one');
    const next = rowsSql(['1.5::DOUBLE', '2.5::DOUBLE', 'NULL::DOUBLE', '4.0::DOUBLE'], 'two');
    expect(await changesOf(prev, 'DOUBLE', next, 'DOUBLE')).toEqual({
      counts: { added: 0, changed: 1, removed: 0 },
      rows: ['changed k1'],
    });
  });

  it('by JSON text where the type changed: the same number is no change, another one is', async () => {
    const prev = rowsSql(['1::BIGINT', '2::BIGINT', 'NULL::BIGINT'], 'one');
    const next = rowsSql(['1::BIGINT', '7::BIGINT', 'NULL::BIGINT'], 'two').replaceAll(
      '::BIGINT',
      '::VARCHAR',
    );
    const c = await changesOf(prev, 'BIGINT', next, 'VARCHAR');
    // 1 (BIGINT) reads 1, '1' (VARCHAR) reads "1": a value that reads differently is a change.
    expect(c.rows).toEqual(['changed k0', 'changed k1']);
  });
});
