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
  budget?(): Promise<BudgetView | null>;
  /** Recent snapshots per state. */
  snapshotStates?(): Promise<Record<string, number>>;
}

/** What the budget gauges show of the key's window and quotas. */
export interface BudgetView {
  windowSent: number | null;
  windowAllowed: number | null;
  effectiveRequestsPerMinute: number;
  quota: { period: 'daily' | 'monthly'; used: number; remaining: number | null }[];
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
  const m = { registry, ...instruments([registry]) };
  // Shared state, read at scrape time. Each gauge collects its own value: prom-client may collect
  // them in any order, so one gauge setting another would show the previous scrape's value.
  const reads: ScrapeReads = { sources, budget: sharedRead(async () => (await sources.budget?.()) ?? null) };
  for (const d of SCRAPED_GAUGES)
    new Gauge({
      name: d.name,
      help: d.help,
      ...(d.labelNames ? { labelNames: d.labelNames } : {}),
      registers: [registry],
      async collect() {
        await d.fill(this, reads);
      },
    });
  registerGlanceGauges(registry, sources);
  startKnownSeries(m);
  collectDefaultMetrics({ register: registry, prefix: 'filings_export_process_' });
  return m;
}

/** The counters, gauges and histograms the exporter's code updates, registered in `r`. */
function instruments(r: Registry[]) {
  return {
    requests: new Counter({
      name: 'filings_export_requests_total',
      help: 'API requests sent by part jobs, by operation and response status class',
      labelNames: ['operation', 'status_class'] as const,
      registers: r,
    }),
    loads: new Counter({
      name: 'filings_export_loads_total',
      help: 'Warehouse loads after publish, per dataset: outcome loaded|refused|failed, mode full|changes (unknown when it was refused or failed before planning)',
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
}

/** What a scraped gauge reads: the sources, and the budget read once per scrape for all its gauges. */
interface ScrapeReads {
  sources: MetricSources;
  budget(): Promise<BudgetView | null>;
}

/** A gauge of shared state: `fill` reads its source, then resets and sets the gauge. */
interface ScrapedGauge {
  name: string;
  help: string;
  labelNames?: readonly string[];
  fill(gauge: Gauge, reads: ScrapeReads): Promise<void>;
}

/** The gauges read at scrape time; each resets after its read so it never mixes two scrapes. */
const SCRAPED_GAUGES: readonly ScrapedGauge[] = [
  {
    name: 'filings_export_rate_limit_requests_per_minute',
    help: "The budget's effective per-minute rate (the key's learned limit times share)",
    async fill(g, { budget }) {
      const b = await budget();
      g.reset();
      if (b) g.set(b.effectiveRequestsPerMinute);
    },
  },
  {
    name: 'filings_export_quota_used_requests',
    help: 'Requests counted against the daily and monthly quota',
    labelNames: ['period'],
    async fill(g, { budget }) {
      const b = await budget();
      g.reset();
      for (const q of b?.quota ?? []) g.set({ period: q.period }, q.used);
    },
  },
  {
    name: 'filings_export_quota_remaining_requests',
    help: 'Requests left in the daily and monthly quota (absent when no quota is known)',
    labelNames: ['period'],
    async fill(g, { budget }) {
      const b = await budget();
      g.reset();
      for (const q of b?.quota ?? []) if (q.remaining !== null) g.set({ period: q.period }, q.remaining);
    },
  },
  {
    name: 'filings_export_queue_jobs',
    help: 'BullMQ jobs per queue and state',
    labelNames: ['queue', 'state'],
    async fill(g, { sources }) {
      const depths = (await sources.queueDepths?.()) ?? [];
      g.reset();
      for (const d of depths)
        for (const [state, n] of Object.entries(d.counts)) g.set({ queue: d.queue, state }, n);
    },
  },
  {
    name: 'filings_export_window_requests',
    help: "Requests of the key's current rate window: sent, and allowed",
    labelNames: ['kind'],
    async fill(g, { budget }) {
      const b = await budget();
      g.reset();
      if (!b) return;
      if (b.windowSent !== null) g.set({ kind: 'sent' }, b.windowSent);
      if (b.windowAllowed !== null) g.set({ kind: 'allowed' }, b.windowAllowed);
    },
  },
  {
    name: 'filings_export_snapshots',
    help: 'Recent snapshots per state',
    labelNames: ['state'],
    async fill(g, { sources }) {
      const states = (await sources.snapshotStates?.()) ?? {};
      g.reset();
      for (const [state, n] of Object.entries(states)) g.set({ state }, n);
    },
  },
];

/**
 * Label sets known in advance start at 0, so rules see the first increase (a series that
 * appears at 1 has no increase to Prometheus) and dashboards show 0 rather than "no data".
 */
function startKnownSeries(m: ReturnType<typeof instruments>): void {
  for (const kind of ['rate', 'quota']) m.rateLimited.inc({ kind }, 0);
  for (const reason of ['pace', 'window', 'hold', 'quota']) m.budgetWaits.inc({ reason }, 0);
  // A refused or failed load is counted before its mode is known (jobs/load-snapshot.ts).
  for (const outcome of ['refused', 'failed']) m.loads.inc({ outcome, mode: 'unknown' }, 0);
}

export type Metrics = ReturnType<typeof createMetrics>;
