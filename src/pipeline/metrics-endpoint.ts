/**
 * Serves an exporter's Prometheus metrics (`worker --metrics-port`, `run --local --metrics-port`):
 * the per-process counters the job processors record, plus shared state read at scrape time
 * (queue depths, the key's window and quotas, recent snapshot states) and `/readyz` = Redis answers.
 */
import { createMetrics, type MetricSources, type Metrics } from '../metrics/metrics.js';
import { startMetricsServer, type RunningMetricsServer } from '../metrics/server.js';
import type { Exporter } from './exporter.js';
import { SNAPSHOT_STATES } from './record/index.js';

const JOB_STATES = [
  'waiting',
  'active',
  'delayed',
  'prioritized',
  'waiting-children',
  'completed',
  'failed',
] as const;

/** Snapshots the state gauges look at, newest first. */
const RECENT_SNAPSHOTS = 50;

export interface ServedMetrics {
  metrics: Metrics;
  server: RunningMetricsServer;
  close(): Promise<void>;
}

/** The shared state a worker's metrics read at scrape time: queues, budget, snapshots, outage. */
export function pipelineMetricSources(exporter: Pick<Exporter, 'ctx' | 'budget'>): MetricSources {
  const { ctx } = exporter;
  return {
    snapshotStateNames: SNAPSHOT_STATES,
    async queueDepths() {
      const [parts, snapshots] = await Promise.all([
        ctx.partsQueue.getJobCounts(...JOB_STATES),
        ctx.snapshotsQueue.getJobCounts(...JOB_STATES),
      ]);
      return [
        { queue: 'parts', counts: parts },
        { queue: 'snapshots', counts: snapshots },
      ];
    },
    async budget() {
      const d = await exporter.budget.describe();
      return {
        windowSent: d.window?.sent ?? null,
        windowAllowed: d.window?.allowed ?? null,
        effectiveRequestsPerMinute: d.effectiveRequestsPerMinute,
        quota: [
          { period: 'daily', used: d.daily.used, remaining: d.daily.remaining },
          { period: 'monthly', used: d.monthly.used, remaining: d.monthly.remaining },
        ],
      };
    },
    async snapshotStates() {
      const states: Record<string, number> = {};
      for (const id of await ctx.store.list(RECENT_SNAPSHOTS)) {
        const state = await ctx.store.state(id);
        if (state) states[state] = (states[state] ?? 0) + 1;
      }
      return states;
    },
    async snapshotGlance() {
      const ids = await ctx.store.list(RECENT_SNAPSHOTS);
      const newestState = ids[0] === undefined ? null : ((await ctx.store.state(ids[0])) ?? null);
      // Newest first: the first published one is the last publication on record.
      for (const id of ids) {
        // view(): the record without its company list (~0.35 MB at 10,000 companies), per scrape.
        const rec = await ctx.store.view(id);
        if (rec?.state === 'published') return { newestState, lastPublishedMs: rec.finishedAtMs };
      }
      return { newestState, lastPublishedMs: null };
    },
    workersAlive: () => ctx.partsQueue.getWorkersCount(),
    apiOutage: async () => (await ctx.outage.describe()) !== null,
  };
}

export async function serveMetrics(
  exporter: Pick<Exporter, 'ctx' | 'budget'>,
  opts: { port: number; host?: string },
): Promise<ServedMetrics> {
  const { ctx } = exporter;
  const metrics = createMetrics(undefined, pipelineMetricSources(exporter));
  const server = await startMetricsServer({
    registry: metrics.registry,
    port: opts.port,
    portSetting: '--metrics-port, or worker.metrics_port in the config',
    ...(opts.host !== undefined ? { host: opts.host } : {}),
    readiness: async () => {
      const pong = await ctx.redis.ping();
      if (pong !== 'PONG') throw new Error(`Redis answered ${pong}`);
    },
  });
  return { metrics, server, close: () => server.close() };
}
