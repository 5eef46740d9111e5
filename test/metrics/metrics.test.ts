/**
 * Prometheus metrics (src/metrics/): the endpoint over real HTTP (/metrics, /healthz, /readyz
 * against a real Redis, up and down), and the counters a real snapshot records through real
 * workers, the emulator and Redis, with label sets that stay bounded (never a ticker).
 */
import { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { createMetrics, statusClass } from '../../src/metrics/metrics.js';
import { startMetricsServer, type RunningMetricsServer } from '../../src/metrics/server.js';
import { serveMetrics } from '../../src/pipeline/metrics-endpoint.js';
import { startPipelineHarness, type PipelineHarness } from '../helpers/pipeline.js';

const servers: RunningMetricsServer[] = [];
const harnesses: PipelineHarness[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  for (const h of harnesses.splice(0)) await h.close();
});

/** The value of one sample line of a scrape; throws naming the line when the scrape lacks it. */
function sampleValue(text: string, line: string): number {
  const m = new RegExp(`^${line.replace(/[{}()[\]./*+?^$|\\]/g, '\\$&')} (\\d+(?:\\.\\d+)?)$`, 'm').exec(
    text,
  );
  if (m?.[1] === undefined) throw new Error(`the scrape has no line ${line}`);
  return Number(m[1]);
}

describe('the metrics endpoint', () => {
  it('serves /metrics, /healthz, and /readyz that follows Redis', async () => {
    const redis = new Redis(inject('redisUrl'), { lazyConnect: true, maxRetriesPerRequest: 0 });
    await redis.connect();
    const metrics = createMetrics(new Registry());
    metrics.requests.inc({ operation: 'facts/full', status_class: '2xx' }, 3);
    const server = await startMetricsServer({
      registry: metrics.registry,
      port: 0,
      readiness: async () => void (await redis.ping()),
    });
    servers.push(server);
    const health = await fetch(`${server.url}/healthz`);
    expect(health.status).toBe(200);
    const text = await (await fetch(`${server.url}/metrics`)).text();
    expect(text).toContain('filings_export_requests_total{operation="facts/full",status_class="2xx"} 3');
    expect(text).toContain('# TYPE filings_export_part_duration_seconds histogram');
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    redis.disconnect();
    const notReady = await fetch(`${server.url}/readyz`);
    expect(notReady.status).toBe(503);
    expect(await notReady.text()).toMatch(/^not ready: /);
    expect((await fetch(`${server.url}/nope`)).status).toBe(404);
  });

  it('bounds status labels to classes', () => {
    expect([200, 404, 429, 503, undefined].map(statusClass)).toEqual(['2xx', '4xx', '4xx', '5xx', 'error']);
  });
});

describe('metrics of a snapshot', () => {
  it('count requests, rows, bytes and parts as the snapshot record does, with no ticker label', async () => {
    const h = await startPipelineHarness();
    harnesses.push(h);
    const metrics = createMetrics(new Registry(), {
      async queueDepths() {
        return [{ queue: 'parts', counts: await h.ctx.partsQueue.getJobCounts('waiting', 'completed') }];
      },
    });
    await h.startWorkers(undefined, metrics);
    const spec = h.spec(['AAPL', 'MSFT', 'NOPE'], ['series_catalog', 'issuer_reference'], 'metrics-snap');
    const rec = await h.runToEnd(spec);
    expect(rec.state).toBe('published');
    const text = await metrics.registry.metrics();
    const value = (line: string): number => sampleValue(text, line);
    expect(value('filings_export_requests_total{operation="series/catalog",status_class="2xx"}')).toBe(2);
    expect(value('filings_export_requests_total{operation="series/catalog",status_class="4xx"}')).toBe(1);
    expect(value('filings_export_parts_total{dataset="issuer_reference",outcome="not_found"}')).toBe(1);
    expect(value('filings_export_parts_total{dataset="series_catalog",outcome="done"}')).toBe(2);
    expect(value('filings_export_rows_total{dataset="series_catalog"}')).toBe(
      rec.progress.series_catalog?.rows,
    );
    expect(value('filings_export_staged_bytes_total{dataset="series_catalog"}')).toBeGreaterThan(0);
    expect(value('filings_export_part_duration_seconds_count{dataset="series_catalog"}')).toBe(3);
    expect(value('filings_export_publish_duration_seconds_count')).toBe(1);
    expect(value('filings_export_queue_jobs{queue="parts",state="completed"}')).toBe(
      await h.ctx.partsQueue.getCompletedCount(),
    );
    // Bounded labels: no company or snapshot id ever becomes a label value.
    expect(text).not.toMatch(/AAPL|MSFT|NOPE|metrics-snap/);
  });

  it("a worker's first scrape after a snapshot shows the key's rate and quotas", async () => {
    const h = await startPipelineHarness({ config: { 'budget.requests_per_minute': 300 } });
    harnesses.push(h);
    const served = await serveMetrics(h, { port: 0, host: '127.0.0.1' });
    servers.push(served.server);
    await h.startWorkers(undefined, served.metrics);
    const rec = await h.runToEnd(h.spec(['AAPL', 'MSFT'], ['series_catalog'], 'metrics-first-scrape'));
    expect(rec.state).toBe('published');
    const d = await h.budget.describe();
    expect(d.effectiveRequestsPerMinute).toBeGreaterThan(0);
    // The first scrape of this process: nothing was collected before it.
    const text = await (await fetch(`${served.server.url}/metrics`)).text();
    expect(sampleValue(text, 'filings_export_rate_limit_requests_per_minute')).toBe(
      d.effectiveRequestsPerMinute,
    );
    expect(sampleValue(text, 'filings_export_quota_used_requests{period="daily"}')).toBe(d.daily.used);
    expect(sampleValue(text, 'filings_export_quota_used_requests{period="monthly"}')).toBe(d.monthly.used);
    expect(d.daily.used).toBe(2);
  });
});
