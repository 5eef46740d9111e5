/**
 * Incremental nights against the emulator over real HTTP with real Redis. The emulator's clock
 * plays the night of 2025-10-31, on which only Apple filed (its FY2025 10-K): the second night
 * sends one series_catalog request per company plus Apple's facts_full and evidence, carries every
 * other part over from the first night, and holds exactly the rows a full snapshot of that night
 * holds (DuckDB, row for row). An altered archive is never reused.
 */
import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ddl } from '../../src/output/readers/ddl.js';
import { openDuck, type DuckSession } from '../../src/output/convert/duckdb.js';
import type { Manifest } from '../../src/output/catalog/manifest.js';
import { formatVerifyReport, verifySnapshot } from '../../src/output/readers/verify.js';
import { incrementalPlanner, planIncremental } from '../../src/pipeline/queue/incremental.js';
import { formatStatus, readStatus, statusReport } from '../../src/pipeline/status-view.js';
import type { SnapshotSpec, SnapshotView } from '../../src/pipeline/record/snapshot-states.js';
import { outputPorts } from '../../src/pipeline/output-adapter.js';
import type { DatasetName } from '../../src/types.js';
import { startPipelineHarness, type PipelineHarness } from '../helpers/pipeline.js';

const TICKERS = ['AAPL', 'AMZN', 'GOOGL', 'META', 'MSFT', 'NVDA', 'TSLA', 'WMT'];
const DATASETS: DatasetName[] = ['series_catalog', 'facts_full', 'evidence'];

let h: PipelineHarness;
let duck: DuckSession;

beforeAll(async () => {
  h = await startPipelineHarness({
    emulator: { asOf: '2025-10-30' },
    config: { 'output.formats': ['parquet'] },
    // Files of ~512 KB: several per dataset, so a quiet night reuses some whole and rebuilds Apple's.
    output: await outputPorts({ targetFileBytes: 512 * 1024, rowGroupRows: 4096 }),
  });
  await h.startWorkers();
  duck = await openDuck({ threads: 1 });
});
afterAll(async () => {
  duck?.close();
  await h?.close();
});

async function setClock(asOf: string): Promise<void> {
  const res = await fetch(`${h.emulator.url}/_emulator/clock`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ as_of: asOf }),
  });
  expect(res.status).toBe(200);
}

/** Plans like `run` does, runs to the end, and returns the record, the requests it cost and the plan's note. */
async function night(
  id: string,
  date: string,
  o: { fullRefresh?: boolean } = {},
): Promise<{ rec: SnapshotView; requests: number; note: string; manifest: Manifest }> {
  const asked: SnapshotSpec = { ...h.spec(TICKERS, DATASETS, id), date };
  const { spec, note } = await incrementalPlanner(h.config)(asked, o);
  const before = (await h.stats()).total.requests;
  const rec = await h.runToEnd(spec);
  expect(rec.state, rec.message ?? '').toBe('published');
  const manifest = JSON.parse(
    await readFile(join(h.outDir, '_snapshots', id, 'manifest.json'), 'utf8'),
  ) as Manifest;
  return { rec, requests: (await h.stats()).total.requests - before, note, manifest };
}

/** The dataset's rows of one snapshot without its lineage, as sorted JSON text. */
async function rowsOf(dataset: DatasetName, id: string): Promise<string[]> {
  const rows = await duck.all(
    `SELECT to_json(t)::VARCHAR AS j FROM (SELECT * EXCLUDE (_snapshot_id, _fetched_at, snapshot_date, snapshot_id) FROM read_parquet('${h.outDir}/${dataset}/*/snapshot_id=${id}/*.parquet', hive_partitioning = true)) t`,
  );
  return rows.map((r) => String(r.j)).sort();
}

describe('incremental nights', () => {
  it('a night on which only Apple filed costs one catalog request per company plus Apple’s two parts', async () => {
    const first = await night('inc-1', '2025-10-30');
    expect(first.note).toMatch(/^full: no earlier published snapshot/);
    expect(first.requests).toBe(TICKERS.length * DATASETS.length);
    expect(first.manifest.incremental).toMatchObject({
      reused_from: null,
      full_refresh_date: '2025-10-30',
      reused_parts: 0,
    });

    await setClock('2025-11-05');
    const second = await night('inc-2', '2025-11-05');
    expect(second.note).toMatch(/^incremental from inc-1: /);
    expect(second.requests).toBe(TICKERS.length + 2);
    const reused = second.manifest.parts.filter((p) => p.reused === true);
    expect(reused.map((p) => `${p.dataset}/${p.ticker}`).sort()).toEqual(
      TICKERS.filter((t) => t !== 'AAPL')
        .flatMap((t) => [`evidence/${t}`, `facts_full/${t}`])
        .sort(),
    );
    expect(reused.every((p) => p.reused_from === 'inc-1')).toBe(true);
    // On a local root a file holding only unchanged companies is a hard link of the earlier file;
    // the file holding Apple is rebuilt, and nothing is staged for a reused part.
    const holding = (m: Manifest, t: string) =>
      m.files.filter((f) => f.dataset === 'facts_full' && f.companies?.some((c) => c.ticker === t));
    const msft = holding(second.manifest, 'MSFT');
    expect(msft.length).toBeGreaterThan(0);
    for (const f of msft) {
      expect(f.reused_from?.snapshot_id).toBe('inc-1');
      expect((await stat(join(h.outDir, f.path))).ino).toBe(
        (await stat(join(h.outDir, f.reused_from!.path))).ino,
      );
    }
    expect(holding(second.manifest, 'AAPL').every((f) => f.reused_from === undefined)).toBe(true);
    expect(second.manifest.parts.every((p) => p.archive === undefined)).toBe(true);
    expect(second.rec.progress.facts_full).toMatchObject({ done: 8, reused: 7 });
    expect(second.rec.progress.series_catalog).toMatchObject({ done: 8, reused: 0 });
    const status = formatStatus(statusReport(second.rec, null));
    expect(status).toMatch(
      /incremental: 14 parts carried over from inc-1 \(requests saved\); last full refresh 2025-10-30/,
    );
    expect(status).toMatch(/^dataset\s+done\s+reused\s+not_found/m);
    expect(second.manifest.incremental).toMatchObject({
      reused_from: 'inc-1',
      full_refresh_date: '2025-10-30',
      reused_parts: 14,
      fetched_parts: 10,
    });

    // The same night in full: exactly the same rows, row for row, in every dataset.
    const full = await night('inc-2-full', '2025-11-05', { fullRefresh: true });
    expect(full.note).toBe('full refresh (--full-refresh)');
    expect(full.requests).toBe(TICKERS.length * DATASETS.length);
    for (const d of DATASETS) {
      const [a, b] = [await rowsOf(d, 'inc-2'), await rowsOf(d, 'inc-2-full')];
      expect(a.length, d).toBeGreaterThan(0);
      expect(a.length, d).toBe(b.length);
      expect(a, d).toEqual(b);
    }
    // The changes dataset against inc-1: only Apple's rows moved; the printed MERGE brings inc-1 to inc-2.
    expect(second.manifest.changes?.against).toBe('inc-1');
    expect(second.manifest.changes?.counts.added).toBeGreaterThan(0);
    const changed = await duck.all(
      `SELECT DISTINCT _requested_ticker AS t FROM read_parquet('${h.outDir}/changes/*/snapshot_id=inc-2/*.parquet')`,
    );
    expect(changed).toEqual([{ t: 'AAPL' }]);
    expect(full.manifest.changes).toMatchObject({
      against: 'inc-2',
      counts: { added: 0, changed: 0, removed: 0 },
    });
    const sql = await ddl(h.outDir, 'inc-2', 'duckdb');
    const merge = /MERGE INTO facts_full_current[\s\S]*?;\n/.exec(sql)?.[0];
    expect(merge).toBeDefined();
    await duck.run(
      `CREATE TABLE facts_full_current AS SELECT * FROM read_parquet('${h.outDir}/facts_full/*/snapshot_id=inc-1/*.parquet', hive_partitioning = false)`,
    );
    await duck.run(merge!);
    const merged = await duck.all(
      `SELECT to_json(t)::VARCHAR AS j FROM (SELECT * EXCLUDE (_snapshot_id, _fetched_at) FROM facts_full_current) t`,
    );
    expect(merged.map((r) => String(r.j)).sort()).toEqual(await rowsOf('facts_full', 'inc-2'));
    for (const dialect of ['bigquery', 'snowflake', 'spark'] as const) {
      const text = await ddl(h.outDir, 'inc-2', dialect);
      expect(text, dialect).toContain(
        "MERGE INTO facts_full_current AS t\nUSING (SELECT * FROM changes WHERE source_dataset = 'facts_full') AS c",
      );
      expect(text, dialect).toContain("WHEN MATCHED AND c.change = 'removed' THEN DELETE");
    }

    // Apple's new 10-K is there, exported by this snapshot; a reused row keeps the snapshot that exported it.
    const ids = await duck.all(
      `SELECT _requested_ticker AS t, any_value(_snapshot_id) AS id, count(DISTINCT _snapshot_id)::INT AS n FROM read_parquet('${h.outDir}/facts_full/*/snapshot_id=inc-2/*.parquet') GROUP BY ALL ORDER BY t`,
    );
    expect(ids).toEqual(TICKERS.map((t) => ({ t, id: t === 'AAPL' ? 'inc-2' : 'inc-1', n: 1 })));

    // verify re-reads the changes files too: sound as published, caught once altered.
    const sound = await verifySnapshot(h.outDir, 'inc-2');
    const changesCheck = sound.files.find((f) => f.path.startsWith('changes/'));
    expect(changesCheck).toMatchObject({ ok: true, rows: second.manifest.changes?.files[0]?.rows });
    expect(sound.ok, formatVerifyReport(sound)).toBe(true);
    const changesFile = join(h.outDir, changesCheck!.path);
    const original = await readFile(changesFile);
    await writeFile(changesFile, Buffer.concat([original, Buffer.from('x')]));
    try {
      const altered = await verifySnapshot(h.outDir, 'inc-2');
      expect(altered.ok).toBe(false);
      expect(altered.files.find((f) => f.path === changesCheck!.path)?.problems.join('; ')).toMatch(
        /size \d+ bytes, manifest says \d+; sha256 [0-9a-f]{64} differs/,
      );
    } finally {
      await writeFile(changesFile, original);
    }
  }, 300_000);

  it('never reuses a published file removed or altered behind its back: its companies are fetched and say why', async () => {
    const source = JSON.parse(
      await readFile(join(h.outDir, '_snapshots', 'inc-2-full', 'manifest.json'), 'utf8'),
    ) as Manifest;
    const holding = (d: DatasetName, t: string) =>
      source.files.find((f) => f.dataset === d && f.companies?.some((c) => c.ticker === t))!;
    const removed = holding('facts_full', 'MSFT');
    const altered = holding('evidence', 'NVDA');
    await rm(join(h.outDir, removed.path));
    await writeFile(join(h.outDir, altered.path), 'not the rows');
    const hit = removed.companies!.length + altered.companies!.length;
    const third = await night('inc-3', '2025-11-06');
    expect(third.note).toMatch(/^incremental from inc-2-full: /);
    expect(third.requests).toBe(TICKERS.length + hit);
    const status = formatStatus((await readStatus(h.ctx, 'inc-3', { all: false }))!);
    expect(status).toMatch(
      / {2}not reused: MSFT facts_full: fetched, not reused: .*part-\d+\.parquet is missing/,
    );
    const part = third.manifest.parts.find((p) => p.dataset === 'evidence' && p.ticker === 'NVDA');
    expect(part?.reused).toBeUndefined();
    expect(part?.message).toMatch(
      /fetched, not reused: .*part-\d+\.parquet holds 12 bytes, its manifest says \d+/,
    );
    for (const d of ['facts_full', 'evidence'] as const)
      expect(await rowsOf(d, 'inc-3'), d).toEqual(await rowsOf(d, 'inc-2'));
    const verified = await verifySnapshot(h.outDir, 'inc-3');
    expect(verified.ok, formatVerifyReport(verified)).toBe(true);
  });
});

describe('planIncremental', () => {
  const spec: SnapshotSpec = {
    id: 'nightly-2026-11-24',
    date: '2026-11-24',
    trigger: 'nightly',
    companies: [],
    datasets: ['series_catalog', 'facts_full'],
    formats: ['parquet'],
    outDir: '/x',
  };
  const prev = (date: string, fullRefreshDate?: string): Manifest =>
    ({
      snapshot_id: `nightly-${date}`,
      snapshot_date: date,
      ...(fullRefreshDate ? { incremental: { full_refresh_date: fullRefreshDate } } : {}),
    }) as Manifest;
  const settings = { enabled: true, fullRefreshEveryDays: 7 };
  const plan = (m: Manifest | undefined, o: Partial<typeof settings> = {}, fullRefresh = false) =>
    planIncremental(spec, { ...settings, ...o }, { fullRefresh, latestPublished: async () => m });

  it('reuses from the newest published snapshot until a full refresh is due', async () => {
    expect((await plan(prev('2026-11-23', '2026-11-18'))).spec.reuse).toEqual({
      from: 'nightly-2026-11-23',
      fullRefreshDate: '2026-11-18',
    });
    const due = await plan(prev('2026-11-23', '2026-11-17'));
    expect(due.spec.reuse).toBeUndefined();
    expect(due.note).toMatch(/full refresh due: the last one was 2026-11-17 \(7 days ago/);
    expect((await plan(prev('2026-11-23'))).spec.reuse?.fullRefreshDate).toBe('2026-11-23');
  });

  it('is full when asked, disabled, without a catalog, or with nothing before it', async () => {
    expect((await plan(prev('2026-11-23'), {}, true)).note).toBe('full refresh (--full-refresh)');
    expect((await plan(prev('2026-11-23'), { enabled: false })).spec.reuse).toBeUndefined();
    expect((await plan(undefined)).note).toMatch(/no earlier published snapshot/);
    const noCatalog = await planIncremental({ ...spec, datasets: ['facts_full', 'evidence'] }, settings, {
      fullRefresh: false,
      latestPublished: async () => prev('2026-11-23'),
    });
    expect(noCatalog.note).toMatch(/need series_catalog among the datasets/);
  });
});
