/**
 * The shipped rules and dashboard against what a worker really serves, and against a real
 * Prometheus. One worker (real Redis, the emulator over HTTP) serves /metrics as `worker
 * --metrics-port` does; Debian's `prometheus` scrapes it every second during a snapshot.
 *  - Every metric a rule or a Grafana panel queries is served, with the label values its matchers
 *    ask for and the labels it groups by (parsed from the PromQL; no Grafana here).
 *  - Prometheus recorded as many requests as the snapshot's record counts, and loaded the rules.
 */
import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveMetrics, type ServedMetrics } from '../../src/pipeline/metrics-endpoint.js';
import type { SnapshotView } from '../../src/pipeline/record/snapshot-states.js';
import { startPipelineHarness, type PipelineHarness } from '../helpers/pipeline.js';
import { ALERTS_FILE, GRAFANA_FILE, startPrometheus, type RunningPrometheus } from '../helpers/prometheus.js';
import { matches, queryParts, servedSeries } from '../helpers/promql.js';

/** Series Prometheus makes itself, and the target labels it adds to every scraped series. */
const FROM_PROMETHEUS = new Set(['up']);
const TARGET_LABELS = new Set(['job', 'instance']);

let h: PipelineHarness;
let served: ServedMetrics;
let prometheus: RunningPrometheus;
let rec: SnapshotView;

beforeAll(async () => {
  // A configured monthly quota, so the quota gauges carry both periods as the panels show them.
  h = await startPipelineHarness({
    config: { 'budget.monthly_quota': 100_000, 'budget.daily_quota': 10_000 },
  });
  served = await serveMetrics(h, { port: 0 });
  await h.startWorkers(undefined, served.metrics);
  prometheus = await startPrometheus(served.server.url.replace('http://', ''), [ALERTS_FILE]);
  // Prometheus scrapes while the snapshot runs, and the first scrape precedes it.
  for (let i = 0; (await scrapes()) === 0; i++) {
    if (i > 300) throw new Error('prometheus never scraped the worker');
    await new Promise((r) => setTimeout(r, 100));
  }
  const spec = h.spec(['AAPL', 'MSFT', 'NVDA', 'NOPE'], ['series_catalog', 'issuer_reference'], 'prom-1');
  rec = await h.runToEnd(spec);
}, 120_000);

afterAll(async () => {
  await prometheus?.close();
  await served?.close();
  await h?.close();
});

/** Scrapes of the worker Prometheus has recorded so far. */
async function scrapes(): Promise<number> {
  const r = await prometheus.api<{ result: { value: [number, string] }[] }>(
    `query?query=${encodeURIComponent('sum(count_over_time(up{job="filings-export"}[1h]))')}`,
  );
  return r.result.length ? Number(r.result[0]!.value[1]) : 0;
}

interface Query {
  where: string;
  expr: string;
  legend?: string;
}

async function shippedQueries(): Promise<Query[]> {
  const rules = parse(await readFile(ALERTS_FILE, 'utf8')) as {
    groups: { rules: { alert: string; expr: string }[] }[];
  };
  const dashboard = JSON.parse(await readFile(GRAFANA_FILE, 'utf8')) as {
    panels: { title: string; targets: { expr: string; legendFormat?: string }[] }[];
  };
  return [
    ...rules.groups.flatMap((g) => g.rules.map((r) => ({ where: `rule ${r.alert}`, expr: r.expr }))),
    ...dashboard.panels.flatMap((p) =>
      p.targets.map((t) => ({
        where: `panel "${p.title}"`,
        expr: t.expr,
        ...(t.legendFormat ? { legend: t.legendFormat } : {}),
      })),
    ),
  ];
}

/** What is wrong with one query against the served series: missing metrics, labels, values. */
function problems(q: Query, series: Map<string, Record<string, string>[]>): string[] {
  const out: string[] = [];
  const { selectors, grouping } = queryParts(q.expr);
  if (selectors.length === 0) out.push(`${q.where}: no metric in ${q.expr}`);
  const labelsSeen = new Set<string>(TARGET_LABELS);
  for (const s of selectors) {
    if (FROM_PROMETHEUS.has(s.metric)) continue;
    const list = series.get(s.metric);
    if (!list) {
      out.push(`${q.where}: ${s.metric} is not served`);
      continue;
    }
    const hit = list.filter((labels) => s.matchers.every((m) => matches(labels, m)));
    if (hit.length === 0) out.push(`${q.where}: no ${s.metric} series matches ${JSON.stringify(s.matchers)}`);
    for (const labels of hit) for (const l of Object.keys(labels)) labelsSeen.add(l);
  }
  const legend = [...(q.legend ?? '').matchAll(/\{\{\s*(\w+)\s*\}\}/g)].map((m) => m[1]!);
  const onlyPending = selectors.every((s) => FROM_PROMETHEUS.has(s.metric));
  for (const l of [...grouping, ...legend])
    if (!labelsSeen.has(l) && !onlyPending) out.push(`${q.where}: label ${l} is on none of its series`);
  return out;
}

describe('what the rules and the dashboard query', () => {
  it('finds the selectors and groupings of PromQL', () => {
    expect(
      queryParts(
        'histogram_quantile(0.95, sum by (le, dataset) (rate(a_bucket{x=~"p|q",y!="z"}[$__rate_interval]))) > 2 * b offset 1h',
      ),
    ).toEqual({
      selectors: [
        {
          metric: 'a_bucket',
          matchers: [
            { name: 'x', op: '=~', value: 'p|q' },
            { name: 'y', op: '!=', value: 'z' },
          ],
        },
        { metric: 'b', matchers: [] },
      ],
      grouping: ['le', 'dataset'],
    });
  });

  it('is served by a worker after a snapshot, with the labels each query uses', async () => {
    expect(rec.state).toBe('published');
    const text = await (await fetch(`${served.server.url}/metrics`)).text();
    const series = servedSeries(text);
    // The gauges the rules read say what the records say.
    expect(text).toContain('filings_export_newest_snapshot{state="published"} 1\n');
    expect(text).toContain('filings_export_newest_snapshot{state="failed"} 0\n');
    expect(text).toContain(`filings_export_last_published_timestamp_seconds ${rec.finishedAtMs! / 1000}\n`);
    expect(text).toContain('filings_export_api_outage 0\n');
    expect(Number(/^filings_export_workers (\d+)$/m.exec(text)?.[1])).toBeGreaterThanOrEqual(1);
    const queries = await shippedQueries();
    expect(queries.length).toBeGreaterThan(20);
    expect(queries.flatMap((q) => problems(q, series))).toEqual([]);
    // The warehouse-load alert reads a series that exists before any load has run.
    expect(text).toContain('filings_export_loads_total{outcome="failed",mode="unknown"} 0\n');
  });

  it('a query of a metric or label value nobody serves is caught', () => {
    const series = servedSeries('filings_export_parts_total{dataset="a",outcome="done"} 1\n');
    expect(problems({ where: 'x', expr: 'sum(filings_export_nope_total)' }, series)).toEqual([
      'x: filings_export_nope_total is not served',
    ]);
    expect(problems({ where: 'x', expr: 'filings_export_parts_total{outcome="lost"}' }, series)[0]).toMatch(
      /^x: no filings_export_parts_total series matches/,
    );
    expect(
      problems(
        { where: 'x', expr: 'sum by (kind) (filings_export_parts_total)', legend: '{{kind}}' },
        series,
      ),
    ).toEqual(['x: label kind is on none of its series', 'x: label kind is on none of its series']);
  });
});

describe('a real Prometheus scraping the worker', () => {
  it('recorded as many requests as the snapshot sent', async () => {
    expect(rec.requests).toBeGreaterThan(0);
    // The counter's last value must come from a scrape that began after the snapshot ended:
    // wait for two more scrapes (counted, not timed).
    const after = await scrapes();
    await expect.poll(() => scrapes(), { timeout: 30_000, interval: 200 }).toBeGreaterThanOrEqual(after + 2);
    const r = await prometheus.api<{ result: { value: [number, string] }[] }>(
      `query?query=${encodeURIComponent('sum(filings_export_requests_total{job="filings-export"})')}`,
    );
    expect(Number(r.result[0]?.value[1])).toBe(rec.requests);
    const stats = await h.stats();
    expect(stats.total.requests).toBeGreaterThanOrEqual(rec.requests);
  });

  it('loaded the alert rules and evaluates them', async () => {
    interface Rules {
      groups: { name: string; rules: { name: string; health: string; lastError?: string }[] }[];
    }
    await expect
      .poll(
        async () => {
          const { groups } = await prometheus.api<Rules>('rules');
          return groups.flatMap((g) => g.rules.map((r) => `${r.name}: ${r.health}${r.lastError ?? ''}`));
        },
        { timeout: 30_000, interval: 200 },
      )
      .toEqual([
        'FilingsExportSnapshotFailed: ok',
        'FilingsExportNoPublishedSnapshot: ok',
        'FilingsExportMonthlyQuotaRunsOut: ok',
        'FilingsExportApiOutageHold: ok',
        'FilingsExportNoWorker: ok',
        'FilingsExportSlowPublish: ok',
        'FilingsExportWarehouseLoadFailed: ok',
        'FilingsExportWarehouseLoadRefused: ok',
      ]);
    // A worker is up and the snapshot was just published: neither of those fires.
    const { alerts } = await prometheus.api<{ alerts: { labels: { alertname: string } }[] }>('alerts');
    expect(alerts.map((a) => a.labels.alertname)).not.toContain('FilingsExportNoWorker');
    expect(alerts.map((a) => a.labels.alertname)).not.toContain('FilingsExportNoPublishedSnapshot');
  });
});
