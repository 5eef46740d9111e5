/**
 * Synthetic snapshots for the output tests: facts_core parts of a few made-up companies, staged
 * and published through the real output ports (local directory or s3:// root).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDuck, type DuckSession } from '../../src/output/convert/duckdb.js';
import type { outputPorts } from '../../src/pipeline/output-adapter.js';
import type { DatasetName, OutputFormat, PartPointer } from '../../src/types.js';
import { startS3, type TestS3 } from './s3.js';
import { syntheticFactRow } from './synthetic-rows.js';

/** The output ports the pipeline hands the part and publish jobs (src/pipeline/output-adapter.ts). */
export type OutputPorts = Awaited<ReturnType<typeof outputPorts>>;

/** What a reuse test publishes into and reads back with: an S3-compatible server, DuckDB, a temp dir. */
export interface PublishFixture {
  s3: TestS3;
  duck: DuckSession;
  tmp: string;
  close(): Promise<void>;
}

/** Starts s3rver (bucket `name`), a one-thread DuckDB session and a fresh temp dir. */
export async function openPublishFixture(name: string): Promise<PublishFixture> {
  const s3 = await startS3(name);
  const duck = await openDuck({ threads: 1 });
  const tmp = await mkdtemp(join(tmpdir(), `fx-${name}-`));
  return {
    s3,
    duck,
    tmp,
    close: async () => {
      duck.close();
      await s3.close();
      await rm(tmp, { recursive: true, force: true });
    },
  };
}

/** One made-up company's part: `rows` synthetic facts, numbered from `firstRow` (default 0). */
export interface SyntheticCompanyPart {
  ticker: string;
  cik: string;
  rows: number;
  firstRow?: number;
}

/** Stages each company's facts_core part of snapshot `id`, fetched on `date`, under `root`. */
export async function stageFactParts(
  ports: OutputPorts,
  at: { root: string; id: string; date: string },
  companies: readonly SyntheticCompanyPart[],
): Promise<PartPointer[]> {
  const parts: PartPointer[] = [];
  for (const c of companies) {
    const w = ports.staged.createWriter({
      root: at.root,
      snapshotId: at.id,
      dataset: 'facts_core',
      ticker: c.ticker,
      fetchedAt: `${at.date}T01:00:00Z`,
    });
    const first = c.firstRow ?? 0;
    for (let i = first; i < first + c.rows; i++)
      await w.write(syntheticFactRow(i, { ticker: c.ticker, cik: c.cik }));
    parts.push({ dataset: 'facts_core', ticker: c.ticker, status: 'done', ...(await w.finish()) });
  }
  return parts;
}

/**
 * Publishes staged parts as snapshot `id`: facts_core in Parquet and NDJSON unless `at` names
 * other formats or datasets.
 */
export async function publishFactParts(
  ports: OutputPorts,
  at: { root: string; id: string; date: string; formats?: OutputFormat[]; datasets?: DatasetName[] },
  parts: PartPointer[],
): Promise<void> {
  await ports.publish({
    root: at.root,
    snapshotId: at.id,
    snapshotDate: at.date,
    formats: at.formats ?? ['parquet', 'ndjson'],
    datasets: at.datasets ?? ['facts_core'],
    parts,
    waits: [],
    startedAt: `${at.date}T01:00:00Z`,
    requests: parts.length,
    retries: 0,
    rateLimited429: 0,
  });
}
