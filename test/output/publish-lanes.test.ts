/**
 * An incremental night publishes two datasets at once (dataset-lanes.ts). Each dataset's
 * conversion of several fetched companies concatenates their staged parts into a scratch file:
 * two datasets at once must never share one. Two datasets, two fetched companies each, one reused;
 * the rows of the second night must be exactly the staged ones. Real DuckDB, local root.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDuck, type DuckSession } from '../../src/output/convert/duckdb.js';
import { outputPorts } from '../../src/pipeline/output-adapter.js';
import type { DatasetName, PartPointer } from '../../src/types.js';
import { syntheticFactRow } from '../helpers/synthetic-rows.js';

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

type Ports = Awaited<ReturnType<typeof outputPorts>>;

async function stage(ports: Ports, id: string, dataset: DatasetName, ticker: string, first: number) {
  const w = ports.createWriter({
    root: tmp,
    snapshotId: id,
    dataset,
    ticker,
    fetchedAt: `${date}T01:00:00Z`,
  });
  for (let i = first; i < first + 3000; i++) await w.write(syntheticFactRow(i, { ticker, cik: '7' }));
  return { dataset, ticker, status: 'done', ...(await w.finish()) } as PartPointer;
}

async function publish(ports: Ports, id: string, parts: PartPointer[]): Promise<void> {
  await ports.publish({
    root: tmp,
    snapshotId: id,
    snapshotDate: date,
    formats: ['parquet'],
    datasets: DATASETS,
    parts,
    waits: [],
    startedAt: `${date}T01:00:00Z`,
    requests: parts.length,
    retries: 0,
    rateLimited429: 0,
  });
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
