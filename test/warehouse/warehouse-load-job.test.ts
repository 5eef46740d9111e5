/**
 * The load after publish (`output.load_into`): the control worker queues a `load-snapshot` job
 * once a snapshot is published; it loads the warehouse, and its outcome shows in the snapshot's
 * record (status, the status page) and in `filings_export_loads_total`. A failed load leaves the
 * snapshot published; a load that would remove most of a table's companies is refused and shows
 * as refused in status, on the page (headless chromium) and in the metrics. Real Redis, the
 * emulator over HTTP, a DuckDB file and the test PostgreSQL.
 */
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { chromium } from 'playwright-core';
import { describe, expect, inject, it } from 'vitest';
import { startDashboard } from '../../src/dashboard/server.js';
import { createMetrics } from '../../src/metrics/metrics.js';
import { formatStatus, statusReport } from '../../src/pipeline/status-view.js';
import type { SnapshotRecord } from '../../src/pipeline/record/snapshot-states.js';
import { systemClock } from '../../src/types.js';
import { startPipelineHarness, type PipelineHarness } from '../helpers/pipeline.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

async function loadRecorded(h: PipelineHarness, id: string): Promise<SnapshotRecord> {
  for (let i = 0; i < 1200; i++) {
    const rec = await h.ctx.store.get(id);
    if (rec?.load) return rec;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no load recorded for ${id}`);
}

async function counter(metrics: ReturnType<typeof createMetrics>): Promise<Record<string, number>> {
  const m = await metrics.loads.get();
  return Object.fromEntries(m.values.map((v) => [`${v.labels.outcome}/${v.labels.mode}`, v.value]));
}

describe('load after publish', () => {
  it('loads each published snapshot into output.load_into, with history, and shows it in status and metrics', async () => {
    const database = join(tmpdir(), `fx-load-job-${process.pid}.duckdb`);
    const h = await startPipelineHarness({
      config: {
        'output.formats': ['parquet'],
        'output.load_into': `duckdb:${database}`,
        'output.load_history': true,
      },
    });
    try {
      const metrics = createMetrics();
      await h.startWorkers(undefined, metrics);
      const rec = await h.runToEnd(h.spec(['AAPL', 'MSFT'], ['facts_full', 'evidence'], 'job-1'));
      expect(rec.state).toBe('published');
      const after = await loadRecorded(h, 'job-1');
      expect(after.load).toMatchObject({ outcome: 'loaded' });
      expect(after.load?.message).toMatch(
        /job-1 facts_full full \d+ rows \(history: \d+ versions opened, 0 closed\); job-1 evidence full \d+ rows/,
      );
      expect(formatStatus(statusReport(after, null))).toMatch(
        /^warehouse load: loaded at \S+: job-1 facts_full full/m,
      );
      expect(await counter(metrics)).toEqual({ 'loaded/full': 2, 'refused/unknown': 0, 'failed/unknown': 0 });
      expect((await metrics.lastLoad.get()).values[0]?.value).toBeGreaterThan(0);
      const instance = await DuckDBInstance.create(database, { access_mode: 'READ_ONLY' });
      const conn = await instance.connect();
      try {
        const rows = (
          await conn.runAndReadAll(
            'SELECT snapshot_id, dataset, mode FROM filings_export_loads ORDER BY dataset',
          )
        ).getRowObjectsJson();
        expect(rows).toEqual([
          { snapshot_id: 'job-1', dataset: 'evidence', mode: 'full' },
          { snapshot_id: 'job-1', dataset: 'facts_full', mode: 'full' },
        ]);
        const n = (
          await conn.runAndReadAll('SELECT count(*)::INTEGER AS n FROM facts_full')
        ).getRowObjectsJson();
        expect(n).toEqual([{ n: rec.progress.facts_full?.rows }]);
        // output.load_history: every row of the first night opens its first version.
        const open = (
          await conn.runAndReadAll(
            'SELECT count(*)::INTEGER AS n FROM facts_full_history WHERE _valid_to IS NULL',
          )
        ).getRowObjectsJson();
        expect(open).toEqual([{ n: rec.progress.facts_full?.rows }]);
      } finally {
        conn.closeSync();
        instance.closeSync();
      }
    } finally {
      await h.close();
      await rm(database, { force: true });
      await rm(`${database}.wal`, { force: true });
    }
  }, 300_000);

  it('a load refused by the warehouse is recorded as failed, counted, and the snapshot stays published', async () => {
    const wrong = inject('postgres').url.replace(/:[^:@/]+@/, ':wrong-secret-42@');
    const h = await startPipelineHarness({
      config: { 'output.formats': ['parquet'], 'output.load_into': wrong },
    });
    try {
      const metrics = createMetrics();
      await h.startWorkers(undefined, metrics);
      const rec = await h.runToEnd(h.spec(['MSFT'], ['facts_full'], 'job-2'));
      expect(rec.state).toBe('published');
      const after = await loadRecorded(h, 'job-2');
      expect(after.state).toBe('published');
      expect(after.load).toMatchObject({ outcome: 'failed' });
      expect(after.load?.message).toMatch(
        /^WAREHOUSE_REFUSED: postgres:\/\/filings:\*\*\*@.*password authentication failed/,
      );
      expect(after.load?.message).not.toContain('wrong-secret-42');
      expect(await counter(metrics)).toEqual({ 'refused/unknown': 0, 'failed/unknown': 1 });
      const text = (await metrics.registry.metrics())
        .split('\n')
        .filter((l) => l.startsWith('filings_export_loads_total'));
      expect(text).toEqual([
        'filings_export_loads_total{outcome="refused",mode="unknown"} 0',
        'filings_export_loads_total{outcome="failed",mode="unknown"} 1',
      ]);
    } finally {
      await h.close();
    }
  }, 300_000);

  it('a load that would remove most companies is refused, not applied, and shows in status, on the page and in the metrics', async () => {
    const database = join(tmpdir(), `fx-load-refused-${process.pid}.duckdb`);
    const h = await startPipelineHarness({
      config: { 'output.formats': ['parquet'], 'output.load_into': `duckdb:${database}` },
    });
    const dashboard = await startDashboard({ ctx: h.ctx, port: 0, clock: systemClock });
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu'],
    });
    try {
      const metrics = createMetrics();
      await h.startWorkers(undefined, metrics);
      await h.runToEnd(h.spec(['AAPL', 'MSFT', 'NVDA'], ['facts_full'], 'job-3'));
      expect((await loadRecorded(h, 'job-3')).load).toMatchObject({ outcome: 'loaded' });
      // The same request for Apple alone: loading it would drop Microsoft and Nvidia.
      const rec = await h.runToEnd(h.spec(['AAPL'], ['facts_full'], 'job-4'));
      expect(rec.state).toBe('published');
      const after = await loadRecorded(h, 'job-4');
      expect(after.state).toBe('published');
      expect(after.load).toMatchObject({ outcome: 'refused' });
      expect(after.load?.message).toBe(
        `WAREHOUSE_SHRINK_REFUSED: duckdb:${database}: refusing to shrink tables (job-4: facts_full 2 of 3 companies removed (MSFT, NVDA)); nothing was loaded: check the snapshot, or load it anyway with \`filings-export load --into duckdb:${database} --allow-shrink\``,
      );
      expect(formatStatus(statusReport(after, null))).toMatch(
        /^warehouse load: refused at \S+: WAREHOUSE_SHRINK_REFUSED: .*2 of 3 companies removed \(MSFT, NVDA\)/m,
      );
      expect(await counter(metrics)).toEqual({ 'loaded/full': 1, 'refused/unknown': 1, 'failed/unknown': 0 });

      const page = await browser.newPage();
      await page.goto(dashboard.url);
      const line = page.locator('[data-snapshot="job-4"] [data-load]');
      await expect.poll(() => line.getAttribute('data-load'), { timeout: 30_000 }).toBe('refused');
      expect(await line.getAttribute('class')).toBe('banner');
      expect(await line.textContent()).toContain('2 of 3 companies removed (MSFT, NVDA)');

      // Nothing applied: the table still holds the three companies of job-3, and the ledger only job-3.
      const instance = await DuckDBInstance.create(database, { access_mode: 'READ_ONLY' });
      const conn = await instance.connect();
      try {
        const q = async (sql: string) => (await conn.runAndReadAll(sql)).getRowObjectsJson();
        expect(await q('SELECT DISTINCT _requested_ticker AS t FROM facts_full ORDER BY 1')).toEqual([
          { t: 'AAPL' },
          { t: 'MSFT' },
          { t: 'NVDA' },
        ]);
        expect(await q('SELECT DISTINCT snapshot_id AS s FROM filings_export_loads')).toEqual([
          { s: 'job-3' },
        ]);
      } finally {
        conn.closeSync();
        instance.closeSync();
      }
    } finally {
      await browser.close();
      await dashboard.close();
      await h.close();
      await rm(database, { force: true });
      await rm(`${database}.wal`, { force: true });
    }
  }, 300_000);
});
