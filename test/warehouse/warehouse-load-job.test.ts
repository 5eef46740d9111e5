/**
 * The load after publish (`output.load_into`): the control worker queues a `load-snapshot` job
 * once a snapshot is published; it loads the warehouse, and its outcome shows in the snapshot's
 * record (status, the status page) and in `filings_export_loads_total`. A failed load leaves the
 * snapshot published. Real Redis, the emulator over HTTP, a DuckDB file and the test PostgreSQL.
 */
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, inject, it } from 'vitest';
import { createMetrics } from '../../src/metrics/metrics.js';
import { formatStatus, statusReport } from '../../src/pipeline/status-view.js';
import type { SnapshotRecord } from '../../src/pipeline/record/snapshot-store.js';
import { startPipelineHarness, type PipelineHarness } from '../helpers/pipeline.js';

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
  it('loads each published snapshot into output.load_into and shows it in status and metrics', async () => {
    const database = join(tmpdir(), `fx-load-job-${process.pid}.duckdb`);
    const h = await startPipelineHarness({
      config: { 'output.formats': ['parquet'], 'output.load_into': `duckdb:${database}` },
    });
    try {
      const metrics = createMetrics();
      await h.startWorkers(undefined, metrics);
      const rec = await h.runToEnd(h.spec(['AAPL', 'MSFT'], ['facts_full', 'evidence'], 'job-1'));
      expect(rec.state).toBe('published');
      const after = await loadRecorded(h, 'job-1');
      expect(after.load).toMatchObject({ outcome: 'loaded' });
      expect(after.load?.message).toMatch(/job-1 facts_full full \d+ rows; job-1 evidence full \d+ rows/);
      expect(formatStatus(statusReport(after, null))).toMatch(
        /^warehouse load: loaded at \S+: job-1 facts_full full/m,
      );
      expect(await counter(metrics)).toEqual({ 'loaded/full': 2, 'failed/unknown': 0 });
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
      expect(await counter(metrics)).toEqual({ 'failed/unknown': 1 });
      const text = (await metrics.registry.metrics())
        .split('\n')
        .filter((l) => l.startsWith('filings_export_loads_total'));
      expect(text).toEqual(['filings_export_loads_total{outcome="failed",mode="unknown"} 1']);
    } finally {
      await h.close();
    }
  }, 300_000);
});
