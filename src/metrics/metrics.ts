/**
 * The exporter's Prometheus metrics (prom-client), one set per process, on an injected registry
 * (no module singleton). Names follow Prometheus conventions: a `filings_export_` prefix, base
 * units in the name (`_seconds`, `_bytes`), `_total` on counters, and labels only from small fixed
 * sets (operation, status class, dataset, kind, state): never a ticker, a snapshot id or a message,
 * whose values are unbounded. Gauges that describe shared state (queue depths, the key's window
 * and quota, snapshot states) are read when scraped, through the injected `collect` sources.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { registerGlanceGauges, type GlanceSources } from './glance-gauges.js';

/** Reads shared state at scrape time; each returns null when it has nothing to say. */
export interface MetricSources extends GlanceSources {
  /** BullMQ job counts per queue and state (`getJobCounts`). */
  queueDepths?(): Promise<{ queue: 'parts' | 'snapshots'; counts: Record<string, number> }[]>;
  /** The key's current window and quotas (the budget's `describe()`). */
  budget?(): Promise<{
    windowSent: number | null;
    windowAllowed: number | null;
    effectiveRequestsPerMinute: number;
    quota: { period: 'daily' | 'monthly'; used: number; remaining: number | null }[];
  } | null>;
  /** Recent snapshots per state. */
  snapshotStates?(): Promise<Record<string, number>>;
}

/** HTTP status as a bounded label: `2xx`, `4xx`, `5xx`, or `error` when no status came back. */
export function statusClass(status: number | undefined): string {
  if (status === undefined || !Number.isFinite(status) || status < 100) return 'error';
  return `${Math.floor(status / 100)}xx`;
}

/**
 * One read shared by every caller while it is in flight: the gauges of one scrape start their
 * collects together, so they see the same values from one read; the next scrape reads again.
 */
function sharedRead<T>(read: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | undefined;
  return () => {
    pending ??= read().finally(() => {
      pending = undefined;
    });
    return pending;
  };
}

export function createMetrics(registry: Registry = new Registry(), sources: MetricSources = {}) {
  const r = [registry];
  const m = {
    registry,
    requests: new Counter({
      name: 'filings_export_requests_total',
      help: 'API requests sent by part jobs, by operation and response status class',
      labelNames: ['operation', 'status_class'] as const,
      registers: r,
    }),
    loads: new Counter({
      name: 'filings_export_loads_total',
      help: 'Warehouse loads after publish, per dataset: outcome loaded|failed, mode full|changes (unknown when it failed before planning)',
      labelNames: ['outcome', 'mode'] as const,
      registers: r,
    }),
    lastLoad: new Gauge({
      name: 'filings_export_last_load_timestamp_seconds',
      help: 'When the last successful warehouse load finished (Unix seconds)',
      registers: r,
    }),
    rateLimited: new Counter({
      name: 'filings_export_rate_limited_total',
      help: 'API 429 answers, by kind (rate: per-minute window; quota: daily or monthly)',
      labelNames: ['kind'] as const,
      registers: r,
    }),
    retries: new Counter({
      name: 'filings_export_part_retries_total',
      help: 'Part attempts that failed and will be retried, by dataset',
      labelNames: ['dataset'] as const,
      registers: r,
    }),
    outageHolds: new Counter({
      name: 'filings_export_outage_holds_total',
      help: 'Times a part held the parts queue because the API was unreachable',
      registers: r,
    }),
    budgetWaits: new Counter({
      name: 'filings_export_budget_waits_total',
      help: 'Parts that waited for the budget instead of sending, by reason (pace, window, hold, quota)',
      labelNames: ['reason'] as const,
      registers: r,
    }),
    rows: new Counter({
      name: 'filings_export_rows_total',
      help: 'Rows staged by part jobs, by dataset',
      labelNames: ['dataset'] as const,
      registers: r,
    }),
    bytes: new Counter({
      name: 'filings_export_staged_bytes_total',
      help: 'Bytes of staged part files (gzip NDJSON), by dataset',
      labelNames: ['dataset'] as const,
      registers: r,
    }),
    parts: new Counter({
      name: 'filings_export_parts_total',
      help: 'Part jobs finished, by dataset and outcome (done, not_found, bad_request, failed)',
      labelNames: ['dataset', 'outcome'] as const,
      registers: r,
    }),
    partDuration: new Histogram({
      name: 'filings_export_part_duration_seconds',
      help: 'Duration of a part job attempt that sent its request (request, stream, staging)',
      labelNames: ['dataset'] as const,
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 180],
      registers: r,
    }),
    publishDuration: new Histogram({
      name: 'filings_export_publish_duration_seconds',
      help: 'Duration of publishing a snapshot (typed files, manifest, marker)',
      buckets: [0.5, 1, 2.5, 5, 10, 30, 60, 180, 600, 1800],
      registers: r,
    }),
  };

  // Shared state, read at scrape time. Each gauge collects its own value: prom-client may collect
  // them in any order, so one gauge setting another would show the previous scrape's value.
  const budget = sharedRead(async () => (await sources.budget?.()) ?? null);
  new Gauge({
    name: 'filings_export_rate_limit_requests_per_minute',
    help: "The budget's effective per-minute rate (the key's learned limit times share)",
    registers: r,
    async collect() {
      const b = await budget();
      this.reset();
      if (b) this.set(b.effectiveRequestsPerMinute);
    },
  });
  new Gauge({
    name: 'filings_export_quota_used_requests',
    help: 'Requests counted against the daily and monthly quota',
    labelNames: ['period'] as const,
    registers: r,
    async collect() {
      const b = await budget();
      this.reset();
      for (const q of b?.quota ?? []) this.set({ period: q.period }, q.used);
    },
  });
  new Gauge({
    name: 'filings_export_quota_remaining_requests',
    help: 'Requests left in the daily and monthly quota (absent when no quota is known)',
    labelNames: ['period'] as const,
    registers: r,
    async collect() {
      const b = await budget();
      this.reset();
      for (const q of b?.quota ?? []) if (q.remaining !== null) this.set({ period: q.period }, q.remaining);
    },
  });
  new Gauge({
    name: 'filings_export_queue_jobs',
    help: 'BullMQ jobs per queue and state',
    labelNames: ['queue', 'state'] as const,
    registers: r,
    async collect() {
      const depths = (await sources.queueDepths?.()) ?? [];
      this.reset();
      for (const d of depths)
        for (const [state, n] of Object.entries(d.counts)) this.set({ queue: d.queue, state }, n);
    },
  });
  new Gauge({
    name: 'filings_export_window_requests',
    help: "Requests of the key's current rate window: sent, and allowed",
    labelNames: ['kind'] as const,
    registers: r,
    async collect() {
      const b = await budget();
      this.reset();
      if (!b) return;
      if (b.windowSent !== null) this.set({ kind: 'sent' }, b.windowSent);
      if (b.windowAllowed !== null) this.set({ kind: 'allowed' }, b.windowAllowed);
    },
  });
  new Gauge({
    name: 'filings_export_snapshots',
    help: 'Recent snapshots per state',
    labelNames: ['state'] as const,
    registers: r,
    async collect() {
      const states = (await sources.snapshotStates?.()) ?? {};
      this.reset();
      for (const [state, n] of Object.entries(states)) this.set({ state }, n);
    },
  });
  registerGlanceGauges(registry, sources);
  // Label sets known in advance start at 0, so rules see the first increase (a series that
  // appears at 1 has no increase to Prometheus) and dashboards show 0 rather than "no data".
  for (const kind of ['rate', 'quota']) m.rateLimited.inc({ kind }, 0);
  for (const reason of ['pace', 'window', 'hold', 'quota']) m.budgetWaits.inc({ reason }, 0);
  // A failed load is counted before its mode is known (jobs/load-snapshot.ts).
  m.loads.inc({ outcome: 'failed', mode: 'unknown' }, 0);
  collectDefaultMetrics({ register: registry, prefix: 'filings_export_process_' });
  return m;
}

export type Metrics = ReturnType<typeof createMetrics>;
