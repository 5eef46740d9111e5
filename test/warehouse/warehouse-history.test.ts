/**
 * `load --history` into a real PostgreSQL and a DuckDB file, over three nights on the emulator's
 * clock (2025-10-30; 2025-11-05, Apple's 10-K; 2025-11-25, NVIDIA's 10-Q): loaded after night 1,
 * then nights 2 and 3 in one catch-up load. The history read as of each night's `published_at`
 * equals that night's facts_full row for row, the current table equals night 3, a repeated load
 * changes nothing, a loader SIGKILLed while it writes the history leaves nothing half-applied, and
 * a night pruned before it was loaded is named as a gap while the as-of reads around it stay right,
 * and a company that leaves the set on a night built from `changes` has its versions closed there.
 */
import { spawnSync } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import type { Restatement } from '../../src/emulator/index.js';
import { openDuck, type DuckSession } from '../../src/output/convert/duckdb.js';
import type { Manifest } from '../../src/output/catalog/manifest.js';
import { openStorage } from '../../src/output/storage/open-storage.js';
import { incrementalPlanner } from '../../src/pipeline/queue/incremental.js';
import type { DatasetName } from '../../src/types.js';
import { loadSnapshots, openWarehouse, type LoadReport } from '../../src/warehouse/index.js';
import { setEmulatorClock } from '../helpers/emulator.js';
import { CLI_BIN, ended, runCli, startCli } from '../helpers/processes.js';
import { startPipelineHarness, type PipelineHarness } from '../helpers/pipeline.js';

const TICKERS = ['AAPL', 'GOOGL', 'NVDA', 'WMT'];
// series_catalog makes the nights incremental (a night is a full refresh without it).
const DATASETS: DatasetName[] = ['series_catalog', 'facts_full', 'evidence'];
/** Apple's net income restated by a 10-K/A filed between night 2 and night 3 (the emulator's restatements). */
const RESTATED: Restatement = {
  company: 'AAPL',
  metricId: 'us-gaap#NetIncomeLoss',
  value: '1234567000',
  filed: '2025-11-20',
  accession: '0000320193-25-999999',
};
/** The server process of a loader that has written history rows (it holds a *_history table) and waits on a lock. */
const HISTORY_WRITER = `SELECT a.pid FROM pg_stat_activity AS a JOIN pg_locks AS l ON l.pid = a.pid AND l.granted
  JOIN pg_class AS c ON c.oid = l.relation JOIN pg_namespace AS ns ON ns.oid = c.relnamespace
  WHERE a.wait_event_type = 'Lock' AND ns.nspname = 'killed' AND c.relname LIKE '%\\_history' AND l.mode = 'RowExclusiveLock'`;
const BIN = join(import.meta.dirname, '..', '..', 'bin', 'filings-export.mjs');
/** What the history is compared on: the key, the value and where it was filed. */
const FACT = `fact_key || '|' || _requested_ticker || '|' || CAST(value_num AS VARCHAR) || '|' || coalesce(source_accession, '')`;

let h: PipelineHarness;
let duck: DuckSession;
let admin: pg.Client;
let pgUrl: string;
let duckPath: string;
let gapDuckPath: string;
const nights: Manifest[] = [];

beforeAll(async () => {
  h = await startPipelineHarness({
    emulator: { asOf: '2025-10-30', restatements: [RESTATED] },
    // No full refresh in the 26 days the nights span: nights 2 and 3 carry `changes`.
    config: { 'output.formats': ['parquet'], 'incremental.full_refresh_every_days': 60 },
  });
  await h.startWorkers();
  duck = await openDuck({ threads: 1 });
  const base = inject('postgres').url;
  admin = new pg.Client({ connectionString: base });
  await admin.connect();
  const db = `history_${process.pid}`;
  await admin.query(`DROP DATABASE IF EXISTS ${db}`);
  await admin.query(`CREATE DATABASE ${db}`);
  pgUrl = base.replace(/\/postgres$/, `/${db}`);
  duckPath = join(h.outDir, '..', `fx-history-${process.pid}.duckdb`);
  gapDuckPath = join(h.outDir, '..', `fx-history-gap-${process.pid}.duckdb`);
});
afterAll(async () => {
  duck?.close();
  await admin?.end();
  for (const p of [duckPath, gapDuckPath]) if (p !== undefined) await rm(p, { force: true });
  await h?.close();
});

async function night(id: string, date: string, tickers = TICKERS): Promise<Manifest> {
  await setEmulatorClock(h.emulator.url, date);
  const { spec } = await incrementalPlanner(h.config)({ ...h.spec(tickers, DATASETS, id), date }, {});
  const rec = await h.runToEnd(spec);
  expect(rec.state, rec.message ?? '').toBe('published');
  return JSON.parse(await readFile(join(h.outDir, '_snapshots', id, 'manifest.json'), 'utf8')) as Manifest;
}

async function load(into: string, o: { schema?: string; snapshot?: string } = {}): Promise<LoadReport> {
  const warehouse = await openWarehouse(into, o.schema !== undefined ? { schema: o.schema } : {});
  try {
    return await loadSnapshots({
      storage: openStorage(h.outDir),
      warehouse,
      history: true,
      ...(o.snapshot !== undefined ? { snapshot: o.snapshot } : {}),
    });
  } finally {
    await warehouse.close();
  }
}

/** The night's facts_full as published: one text per row. */
async function published(m: Manifest): Promise<string[]> {
  const files = m.files.filter((f) => f.dataset === 'facts_full').map((f) => `'${join(h.outDir, f.path)}'`);
  const rows = await duck.all(`SELECT ${FACT} AS r FROM read_parquet([${files.join(', ')}]) ORDER BY r`);
  return rows.map((r) => String(r.r));
}

const asOf = (t: string): string =>
  `_valid_from <= CAST('${t}' AS TIMESTAMPTZ) AND (_valid_to IS NULL OR _valid_to > CAST('${t}' AS TIMESTAMPTZ))`;

async function pgRows(sql: string, schema = 'public'): Promise<Record<string, unknown>[]> {
  const c = new pg.Client({ connectionString: pgUrl });
  await c.connect();
  try {
    await c.query(`SET search_path TO ${schema}`);
    return (await c.query(sql)).rows as Record<string, unknown>[];
  } finally {
    await c.end();
  }
}

async function duckRows(path: string, sql: string): Promise<Record<string, unknown>[]> {
  await duck.run(`ATTACH '${path}' AS wh (READ_ONLY)`);
  try {
    await duck.run('USE wh');
    return await duck.all(sql);
  } finally {
    await duck.run('USE memory');
    await duck.run('DETACH wh');
  }
}

/** The facts_full history as of `t` (and the current table when `t` is undefined), in both warehouses. */
async function readBoth(
  t: string | undefined,
  o: { schema?: string; duckPath?: string } = {},
): Promise<string[][]> {
  const sql = `SELECT ${FACT} AS r FROM ${t === undefined ? 'facts_full' : `facts_full_history WHERE ${asOf(t)}`} ORDER BY r`;
  const inPg = (await pgRows(sql, o.schema)).map((r) => String(r.r));
  const inDuck = (await duckRows(o.duckPath ?? duckPath, sql)).map((r) => String(r.r));
  return [inPg, inDuck];
}

function historyOf(r: LoadReport, dataset: DatasetName): string[] {
  return r.snapshots.map((s) => {
    const hl = s.datasets.find((d) => d.dataset === dataset)?.history;
    return `${s.snapshotId}:${hl?.builtFrom}:${hl?.gaps.map((g) => g.snapshotId).join(',')}`;
  });
}

describe('point-in-time history in DuckDB and PostgreSQL', () => {
  it('loads night 1, then nights 2 and 3 in one catch-up load, each night in turn', async () => {
    nights.push(await night('hs-1', '2025-10-30'));
    const cli = spawnSync(process.execPath, [BIN, 'load', '--into', `duckdb:${duckPath}`, '--history'], {
      env: h.env,
      encoding: 'utf8',
    });
    expect(cli.status, cli.stderr).toBe(0);
    expect(cli.stdout).toMatch(
      /facts_full\s+full\s+\d+ rows; first load; history: \d+ versions opened, 0 closed/,
    );
    expect(historyOf(await load(pgUrl), 'facts_full')).toEqual(['hs-1:compared:']);

    nights.push(await night('hs-2', '2025-11-05'));
    nights.push(await night('hs-3', '2025-11-25'));
    for (const into of [pgUrl, `duckdb:${duckPath}`]) {
      const r = await load(into);
      // Night 2 and night 3 each from its own `changes`: the history has both nights' versions.
      expect(historyOf(r, 'facts_full'), into).toEqual(['hs-2:changes:', 'hs-3:changes:']);
      expect(historyOf(r, 'evidence'), into).toEqual(['hs-2:compared:', 'hs-3:compared:']);
    }
  }, 600_000);

  it('reads each night back as of its published_at, row for row; the current table is night 3', async () => {
    const [n1, n2, n3] = nights as [Manifest, Manifest, Manifest];
    // The nights differ: Apple's 10-K on night 2, NVIDIA's 10-Q on night 3.
    expect(await published(n2)).not.toEqual(await published(n1));
    expect(await published(n3)).not.toEqual(await published(n2));
    for (const m of nights) {
      const want = await published(m);
      const [inPg, inDuck] = await readBoth(m.published_at);
      expect(inPg, `postgres as of ${m.snapshot_id}`).toEqual(want);
      expect(inDuck, `duckdb as of ${m.snapshot_id}`).toEqual(want);
    }
    const [pgNow, duckNow] = await readBoth(undefined);
    expect(pgNow).toEqual(await published(n3));
    expect(duckNow).toEqual(await published(n3));
    // Before the first night the history knew nothing.
    const [before] = await readBoth('2000-01-01T00:00:00Z');
    expect(before).toEqual([]);
  }, 300_000);

  it('the restatement view shows the fact Apple restated, with both values, alike in both warehouses', async () => {
    const cols = (v: string): string =>
      `SELECT column_name AS c FROM information_schema.columns WHERE table_name = '${v}' ORDER BY ordinal_position`;
    const pgCols = (await pgRows(cols('facts_full_restatements'))).map((r) => r.c);
    expect(pgCols).toContain('old_value_num');
    expect((await duckRows(duckPath, cols('facts_full_restatements'))).map((r) => r.c)).toEqual(pgCols);
    const text = [
      'fact_key',
      '_requested_ticker',
      'old_value_num',
      'new_value_num',
      'old_accession',
      'new_accession',
      'old_filed_at',
      'new_filed_at',
      'old_from_snapshot',
      'seen_in_snapshot',
    ].map((c) => `CAST(${c} AS VARCHAR) AS ${c}`);
    const all = `SELECT ${text.join(', ')} FROM facts_full_restatements ORDER BY fact_key, _requested_ticker, seen_at`;
    const inPg = await pgRows(all);
    expect(await duckRows(duckPath, all)).toEqual(inPg);
    const restated = inPg.filter((r) => r.new_accession === RESTATED.accession);
    expect(restated).toHaveLength(1);
    const r = restated[0]!;
    expect(r).toMatchObject({
      _requested_ticker: 'AAPL',
      new_value_num: RESTATED.value,
      new_filed_at: RESTATED.filed,
      seen_in_snapshot: 'hs-3',
    });
    // The old value is the one night 2 published for that fact.
    const n2 = nights[1]!;
    const files = n2.files
      .filter((f) => f.dataset === 'facts_full')
      .map((f) => `'${join(h.outDir, f.path)}'`);
    const before = await duck.all(
      `SELECT value_num, source_accession, CAST(source_filed_at AS VARCHAR) AS filed FROM read_parquet([${files.join(', ')}]) WHERE fact_key = '${String(r.fact_key)}' AND _requested_ticker = 'AAPL'`,
    );
    expect(before).toEqual([
      { value_num: r.old_value_num, source_accession: r.old_accession, filed: r.old_filed_at },
    ]);
    expect(r.old_value_num).not.toBe(RESTATED.value);
  }, 300_000);

  it('a repeated load is a no-op', async () => {
    const count = 'SELECT count(*)::BIGINT AS n, count(_valid_to)::BIGINT AS closed FROM facts_full_history';
    const pgBefore = await pgRows(count);
    const duckBefore = await duckRows(duckPath, count);
    for (const into of [pgUrl, `duckdb:${duckPath}`]) expect((await load(into)).snapshots).toEqual([]);
    expect(await pgRows(count)).toEqual(pgBefore);
    expect(await duckRows(duckPath, count)).toEqual(duckBefore);
    const nightsRows = await pgRows(
      `SELECT dataset, snapshot_id, built_from FROM filings_export_history_nights ORDER BY dataset, published_at`,
    );
    expect(nightsRows.map((r) => `${r.dataset}/${r.snapshot_id}/${r.built_from}`)).toEqual([
      'evidence/hs-1/compared',
      'evidence/hs-2/compared',
      'evidence/hs-3/compared',
      'facts_full/hs-1/compared',
      'facts_full/hs-2/changes',
      'facts_full/hs-3/changes',
      'series_catalog/hs-1/compared',
      'series_catalog/hs-2/compared',
      'series_catalog/hs-3/compared',
    ]);
  }, 300_000);

  it('a loader SIGKILLed while it writes the history leaves nothing half-applied; the next load completes it', async () => {
    await load(pgUrl, { schema: 'killed', snapshot: 'hs-1' });
    const blocker = new pg.Client({ connectionString: pgUrl });
    await blocker.connect();
    let loader: number | undefined;
    try {
      // The kill point: this transaction holds the nights table against writes (reads go through),
      // so the loader writes a night's history rows, then waits to record the night.
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE killed.filings_export_history_nights IN EXCLUSIVE MODE');
      const cli = startCli(CLI_BIN, ['load', '--into', pgUrl, '--schema', 'killed', '--history'], h.env);
      // Watched from another session: pg_stat_activity stays as first read within a transaction.
      loader = await vi.waitUntil(
        async () => {
          if (cli.child.exitCode !== null)
            throw new Error(`load ended before the kill point: ${cli.stderr()}`);
          return (await pgRows(HISTORY_WRITER))[0]?.pid as number | undefined;
        },
        { timeout: 120_000, interval: 100 },
      );
      cli.child.kill('SIGKILL');
      expect(await ended(cli.child)).toBe('SIGKILL');
    } finally {
      await blocker.query('ROLLBACK').catch(() => undefined);
      await blocker.end();
    }
    // Its server process ends when it finds the client gone, rolling its transaction back.
    const gone = `SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = ${loader}`;
    await vi.waitUntil(async () => (await pgRows(gone))[0]?.n === 0, { timeout: 60_000, interval: 50 });
    for (const d of DATASETS)
      expect(
        await pgRows(
          `SELECT count(*)::int AS n FROM ${d}_history WHERE _from_snapshot <> 'hs-1' OR _valid_to IS NOT NULL`,
          'killed',
        ),
        d,
      ).toEqual([{ n: 0 }]);
    const ledger = `SELECT snapshot_id, dataset, count(*)::int AS n FROM filings_export_loads GROUP BY 1, 2 ORDER BY 1, 2`;
    expect((await pgRows(ledger, 'killed')).map((r) => r.snapshot_id)).toEqual(DATASETS.map(() => 'hs-1'));

    const again = await runCli(['load', '--into', pgUrl, '--schema', 'killed', '--history'], {
      env: h.env,
      timeoutMs: 300_000,
    });
    expect(again.code, again.stderr).toBe(0);
    // Row for row what the load that was never killed (schema public) holds, versions and all.
    const whole = (t: string, schema: string): Promise<Record<string, unknown>[]> =>
      pgRows(`SELECT to_jsonb(t)::text AS r FROM ${schema}.${t} AS t ORDER BY r`);
    for (const d of DATASETS)
      for (const t of [d, `${d}_history`])
        expect(await whole(t, 'killed'), t).toEqual(await whole(t, 'public'));
    const ran = `SELECT dataset, snapshot_id, built_from, opened, closed FROM filings_export_history_nights ORDER BY 1, 2`;
    expect(await pgRows(ran, 'killed')).toEqual(await pgRows(ran, 'public'));
    // The ledger says each night of each dataset once.
    const once = await pgRows(ledger, 'killed');
    expect(once.map((r) => `${r.snapshot_id}/${r.dataset}/${r.n}`)).toEqual(
      ['hs-1', 'hs-2', 'hs-3'].flatMap((n) => [...DATASETS].sort().map((d) => `${n}/${d}/1`)),
    );
  }, 600_000);

  it('a night pruned before it was loaded is a gap, named; the as-of reads around it stay right', async () => {
    const [n1, n2, n3] = nights as [Manifest, Manifest, Manifest];
    // Warehouses that loaded night 1 only, before night 2 was pruned.
    for (const into of [`${pgUrl}`, `duckdb:${gapDuckPath}`])
      await load(into, { ...(into === pgUrl ? { schema: 'gap' } : {}), snapshot: 'hs-1' });
    await rm(join(h.outDir, '_snapshots', 'hs-2'), { recursive: true, force: true });
    for (const d of [...DATASETS, 'changes'])
      await rm(join(h.outDir, d, 'snapshot_date=2025-11-05'), { recursive: true, force: true });
    const cli = spawnSync(process.execPath, [BIN, 'load', '--into', `duckdb:${gapDuckPath}`, '--history'], {
      env: h.env,
      encoding: 'utf8',
    });
    expect(cli.status, cli.stderr).toBe(0);
    expect(cli.stdout).toMatch(
      /facts_full\s+full\s+.*; history: \d+ versions? opened, \d+ closed; history gap: hs-2 \(pruned before it was loaded\), versions joined here/,
    );
    expect(historyOf(await load(pgUrl, { schema: 'gap' }), 'facts_full')).toEqual(['hs-3:compared:hs-2']);
    const gaps = `SELECT dataset, missing_snapshot_id, why, after_snapshot_id, joined_at_snapshot_id FROM filings_export_history_gaps ORDER BY dataset`;
    const want = DATASETS.map((d) => ({
      dataset: d,
      missing_snapshot_id: 'hs-2',
      why: 'pruned before it was loaded',
      after_snapshot_id: 'hs-1',
      joined_at_snapshot_id: 'hs-3',
    })).sort((a, b) => a.dataset.localeCompare(b.dataset));
    expect(await pgRows(gaps, 'gap')).toEqual(want);
    expect(await duckRows(gapDuckPath, gaps)).toEqual(want);
    const at = { schema: 'gap', duckPath: gapDuckPath };
    // As of night 2 the warehouse knew night 1: night 2 was never seen.
    for (const [t, m] of [
      [n1.published_at, n1],
      [n2.published_at, n1],
      [n3.published_at, n3],
    ] as const) {
      const [inPg, inDuck] = await readBoth(t, at);
      expect(inPg, `postgres as of ${t}`).toEqual(await published(m));
      expect(inDuck, `duckdb as of ${t}`).toEqual(await published(m));
    }
  }, 300_000);

  it('a company that leaves the set on a night built from changes has its versions closed there, the others kept', async () => {
    const n3 = nights[2]!;
    // Night 4 without Walmart: its changes (against night 3) name no key of Walmart's.
    const n4 = await night('hs-4', '2025-11-26', ['AAPL', 'GOOGL', 'NVDA']);
    expect(n4.changes?.against).toBe('hs-3');
    for (const into of [pgUrl, `duckdb:${duckPath}`])
      expect(historyOf(await load(into), 'facts_full'), into).toEqual(['hs-4:changes:']);
    const [inPg, inDuck] = await readBoth(n4.published_at);
    const want = await published(n4);
    expect(want.some((r) => r.includes('|WMT|'))).toBe(false);
    expect(inPg).toEqual(want);
    expect(inDuck).toEqual(want);
    // As of night 3 Walmart's versions are still there, closed at night 4.
    const [pg3, duck3] = await readBoth(n3.published_at);
    expect(pg3).toEqual(await published(n3));
    expect(duck3).toEqual(await published(n3));
    const wmt = `SELECT count(*)::INTEGER AS n, count(*) FILTER (WHERE _to_snapshot = 'hs-4')::INTEGER AS closed FROM facts_full_history WHERE _requested_ticker = 'WMT' AND _from_snapshot <> 'hs-4' AND (_valid_to IS NULL OR _to_snapshot = 'hs-4')`;
    const [pgWmt] = await pgRows(wmt);
    expect(pgWmt?.n).toBeGreaterThan(0);
    expect(pgWmt).toEqual({ n: pgWmt?.n, closed: pgWmt?.n });
    expect(await duckRows(duckPath, wmt)).toEqual([pgWmt]);
  }, 600_000);
});
