/**
 * Snapshot flows against real Redis, the real emulator over HTTP, the real client and budget:
 * deterministic ids, the failure policy of section 7, and the BullMQ failure options that keep a
 * parent from waiting for ever.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StreamOperation } from '../../src/api/index.js';
import { datasetDefinition } from '../../src/datasets/index.js';
import { buildSnapshotFlow } from '../../src/pipeline/queue/flow.js';
import { partJobId, publishJobId } from '../../src/pipeline/queue/ids.js';
import type { StatusReport } from '../../src/pipeline/status-view.js';
import type { DatasetName } from '../../src/types.js';
import { startPipelineHarness, type PipelineHarness } from '../helpers/pipeline.js';
import { runToExit, type CliResult } from '../helpers/processes.js';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'filings-export.mjs');

const runCli = (args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> => runToExit(BIN, args, env);

async function countRows(h: PipelineHarness, dataset: DatasetName, ticker: string): Promise<number> {
  const res = await h.client.stream(
    datasetDefinition(dataset).operation as StreamOperation,
    { ticker, ...datasetDefinition(dataset).extraBody } as never,
  );
  let n = 0;
  for await (const _row of res.rows) n++;
  return n;
}

describe('a snapshot flow', () => {
  let h: PipelineHarness;
  beforeAll(async () => {
    h = await startPipelineHarness({});
    await h.startWorkers();
  });
  afterAll(async () => {
    await h?.close();
  });

  it('publishes every part with the row counts the API returns, and enqueueing again does nothing', async () => {
    const spec = h.spec(['AAPL', 'WMT'], ['facts_full', 'series_catalog', 'evidence'], 'flow-basic');
    const rec = await h.runToEnd(spec);
    expect(rec.state).toBe('published');
    expect(rec.manifest).toMatch(/_snapshots\/flow-basic\/manifest\.json$/);
    // The local root's `latest` object names the snapshot once it is published.
    const latest = JSON.parse(await readFile(join(spec.outDir, 'latest'), 'utf8')) as { snapshot_id: string };
    expect(latest.snapshot_id).toBe('flow-basic');

    for (const ds of spec.datasets) {
      const expected = (await countRows(h, ds, 'AAPL')) + (await countRows(h, ds, 'WMT'));
      expect(rec.progress[ds]?.rows, ds).toBe(expected);
      expect(rec.progress[ds]?.done).toBe(2);
    }
    const parts = await h.ctx.store.parts(spec.id);
    expect(parts).toHaveLength(6);
    for (const p of parts)
      expect(p).toMatchObject({ status: 'done', sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });

    const before = (await h.stats()).total.requests;
    const again = await h.ctx.enqueue(spec);
    expect(again.kind).toBe('exists');
    // The BullMQ jobs may be gone (removeOnComplete); the record still holds the id.
    await h.ctx.partsQueue.remove(partJobId(spec.id, 'facts_full', 'AAPL'));
    expect((await h.ctx.enqueue(spec)).kind).toBe('exists');
    // Only a job can send a request: with no job left to run in either queue, none can come later.
    for (const q of [h.ctx.partsQueue, h.ctx.snapshotsQueue])
      expect(
        await q.getJobCounts('waiting', 'active', 'delayed', 'prioritized', 'waiting-children'),
        q.name,
      ).toEqual({ waiting: 0, active: 0, delayed: 0, prioritized: 0, 'waiting-children': 0 });
    expect((await h.stats()).total.requests).toBe(before);
    expect(await h.ctx.partsQueue.getJob(partJobId(spec.id, 'facts_full', 'AAPL'))).toBeUndefined();
  });

  it('bounds what stays in Redis: finished jobs by age and count, the events stream by length', async () => {
    const job = await h.ctx.partsQueue.getJob(partJobId('flow-basic', 'series_catalog', 'WMT'));
    expect(job?.opts).toMatchObject({
      ignoreDependencyOnFailure: true,
      attempts: h.config.retry.attempts,
      removeOnComplete: {
        age: h.config.retention.completed_jobs.age_seconds,
        count: h.config.retention.completed_jobs.count,
      },
      removeOnFail: {
        age: h.config.retention.failed_jobs.age_seconds,
        count: h.config.retention.failed_jobs.count,
      },
    });
    // The publish parent follows the configured retry settings too.
    // Kept by retention.completed_jobs (a day, 20,000 jobs): it must be there to be checked.
    const parent = await h.ctx.snapshotsQueue.getJob(publishJobId('flow-basic'));
    expect(parent, 'the publish job of flow-basic').toBeDefined();
    expect(parent?.opts).toMatchObject({
      attempts: h.config.retry.attempts,
      backoff: { type: 'exponential', delay: h.config.retry.base_delay_ms },
    });
    expect(
      buildSnapshotFlow(h.spec(['AAPL'], ['series_catalog'], 'shape'), h.ctx.flowSettings).opts,
    ).toMatchObject({
      attempts: h.config.retry.attempts,
      backoff: { type: 'exponential', delay: h.config.retry.base_delay_ms },
    });
    for (const q of [h.ctx.partsQueue, h.ctx.snapshotsQueue])
      expect((await q.getMeta()).maxLenEvents).toBe(h.config.retention.events_max_len);
    const ttl = await h.ctx.redis.ttl(`${h.config.redis.prefix}:${h.config.queue.name}:snapshot:flow-basic`);
    expect(ttl).toBeGreaterThan(h.config.retention.snapshot_record_days * 86_400 - 3600);
  });

  it('exports the on-request datasets too (issuer_reference is one plain JSON answer)', async () => {
    const datasets: DatasetName[] = ['facts_core', 'facts_latest', 'dims_catalog', 'issuer_reference'];
    const rec = await h.runToEnd(h.spec(['WMT'], datasets, 'flow-more-datasets'));
    expect(rec.state, rec.message ?? '').toBe('published');
    for (const ds of datasets.slice(0, 3))
      expect(rec.progress[ds]?.rows, ds).toBe(await countRows(h, ds, 'WMT'));
    const issuer = await h.client.issuerReference({ ticker: 'WMT' });
    expect(rec.progress.issuer_reference?.rows).toBe(issuer.data.rows.length);
    expect(issuer.data.rows.length).toBe(1);
  });

  it('records an unknown ticker as not_found and publishes the rest', async () => {
    const spec = h.spec(['WMT', 'ZZZZQ'], ['series_catalog'], 'flow-unknown');
    const rec = await h.runToEnd(spec);
    expect(rec.state).toBe('published');
    expect(rec.progress.series_catalog).toMatchObject({ done: 1, not_found: 1, failed: 0, pending: 0 });
    const nf = await h.ctx.store.getPart(spec.id, 'series_catalog', 'ZZZZQ');
    expect(nf?.status).toBe('not_found');
    expect(nf?.message).toMatch(/ZZZZQ/);
  });

  it('retries a transient 503 and publishes', async () => {
    await h.setFaults([{ operation: 'series/catalog', ticker: 'WMT', fault: '503', times: 2 }]);
    const before = (await h.stats()).total.by_status['503'] ?? 0;
    const rec = await h.runToEnd(h.spec(['WMT'], ['series_catalog'], 'flow-transient'));
    expect(rec.state).toBe('published');
    expect(rec.progress.series_catalog?.done).toBe(1);
    expect(((await h.stats()).total.by_status['503'] ?? 0) - before).toBe(2);
    await h.setFaults([]);
  });

  it('ends a snapshot whose part fails every attempt as failed (the parent does not wait for ever); --retry refetches only that part', async () => {
    await h.setFaults([{ operation: 'series/catalog', ticker: 'WMT', fault: '503', times: 100 }]);
    const spec = h.spec(['AAPL', 'WMT'], ['series_catalog'], 'flow-failing');
    const rec = await h.runToEnd(spec);
    expect(rec.state).toBe('failed');
    expect(rec.message).toMatch(/1 of 2 parts failed \(first: series_catalog WMT: API_UNAVAILABLE/);
    expect(rec.message).toContain('--retry');
    expect(rec.manifest).toBeNull();
    expect(rec.progress.series_catalog).toMatchObject({ done: 1, failed: 1, pending: 0 });
    expect((await h.ctx.store.getPart(spec.id, 'series_catalog', 'WMT'))?.message).toMatch(/attempt 3 of 3/);

    await h.setFaults([]);
    const before = (await h.stats()).total.requests;
    const retried = await h.runToEnd(spec, { retry: true });
    expect(retried.message ?? retried.state).toBe('published');
    expect(retried.retries).toBe(1);
    expect(retried.progress.series_catalog).toMatchObject({ done: 2, failed: 0 });
    expect((await h.stats()).total.requests - before).toBe(1);
  });
});

describe('a refused key', () => {
  let h: PipelineHarness;
  beforeAll(async () => {
    h = await startPipelineHarness({
      key: 'revoked',
      config: { 'worker.concurrency': 1 },
    });
    await h.startWorkers();
  });
  afterAll(async () => {
    await h?.close();
  });

  it('stops the whole snapshot at once with the 403 message, without requests for the other parts', async () => {
    const spec = h.spec(['AAPL', 'WMT', 'NVDA', 'GOOGL'], ['series_catalog', 'facts_full'], 'flow-revoked');
    const rec = await h.runToEnd(spec);
    expect(rec.state).toBe('stopped');
    expect(rec.message).toMatch(/API key has been revoked \(403\)/);
    expect(rec.manifest).toBeNull();
    // One request learned the key is refused; the other seven parts never sent one.
    expect((await h.stats()).total.requests).toBe(1);
    const again = await h.ctx.enqueue(spec);
    expect(again.kind).toBe('exists');
  });
});

describe('a spent daily quota', () => {
  let h: PipelineHarness;
  beforeAll(async () => {
    // quotaLimited: the server allows this key 3 requests a day.
    h = await startPipelineHarness({ key: 'quotaLimited', config: { 'worker.concurrency': 1 } });
    await h.startWorkers();
  });
  afterAll(async () => {
    await h?.close();
  });

  it('pauses the snapshot until the reset, and status says what it waits for and until when', async () => {
    const spec = h.spec(['WMT', 'AAPL', 'TSLA', 'NVDA'], ['series_catalog'], 'flow-quota');
    await h.ctx.enqueue(spec);
    const deadline = Date.now() + 20_000;
    let wait = await h.ctx.store.currentQuotaWait(spec.id);
    while (!wait && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      wait = await h.ctx.store.currentQuotaWait(spec.id);
    }
    expect(wait).not.toBeNull();
    const rec = await h.ctx.store.get(spec.id);
    expect(rec?.state).toBe('running');
    expect(rec?.progress.series_catalog).toMatchObject({ done: 3, pending: 1 });

    const r = await runCli(['status', spec.id, '--json'], h.env);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as StatusReport;
    const midnight = new Date(Math.ceil((Date.now() + 1) / 86_400_000) * 86_400_000).toISOString();
    expect(report.state).toBe('waiting_quota');
    expect(report.waiting?.until).toBe(midnight);
    expect(report.waiting?.reason).toMatch(/daily quota/);
    expect(report.datasets.series_catalog).toMatchObject({ done: 3, pending: 1 });

    const text = await runCli(['status', spec.id], h.env);
    expect(text.stdout).toMatch(/^snapshot flow-quota: WAITING_QUOTA/);
    expect(text.stdout).toContain(`waiting: ${report.waiting?.reason ?? ''} (until ${midnight}`);
    // done, reused, not_found, bad_request, failed, pending, total
    expect(text.stdout).toMatch(/series_catalog +3 +0 +0 +0 +0 +1 +4/);
  });
});
