/**
 * How `changes` tells a changed row from an unchanged one: columns of the same type on both sides
 * are compared as values (NULLs equal, lineage ignored), a column whose type changed between the
 * snapshots by its JSON text. Real DuckDB over real Parquet files.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Manifest, ManifestFile } from '../../src/output/catalog/index.js';
import { openDuck, type DuckSession } from '../../src/output/convert/index.js';
import { writeChanges } from '../../src/output/publish/changes.js';

let root: string;
let duck: DuckSession;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'changes-compare-'));
  duck = await openDuck({ tempDirectory: join(root, '_tmp'), threads: 1 });
});
afterAll(async () => {
  duck?.close();
  await rm(root, { recursive: true, force: true });
});

type Column = { name: string; type: string };

/** One facts_full Parquet file of a snapshot from a SELECT, and its manifest entry. */
async function snapshotFile(id: string, select: string): Promise<ManifestFile> {
  const rel = `facts_full/snapshot_id=${id}/part-00000.parquet`;
  await mkdir(join(root, 'facts_full', `snapshot_id=${id}`), { recursive: true });
  await duck.run(`COPY (${select}) TO '${join(root, rel)}' (FORMAT parquet)`);
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
    root,
    snapshotId: `${id}-b`,
    snapshotDate: '2026-11-26',
    datasets: ['facts_full'],
    companies: { facts_full: ['AAA'] },
    columns: { facts_full: cols(nextType) },
    files: [now],
    previous: manifest(`${id}-a`, before, cols(prevType)),
  });
  const rows = await duck.all(
    `SELECT change, fact_key FROM read_parquet('${join(root, c!.files[0]!.path)}') ORDER BY change, fact_key`,
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
