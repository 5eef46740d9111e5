/**
 * Gauges the alert rules (deploy/prometheus/alerts.yml) read, from shared state at scrape time:
 * the newest snapshot's state, when a snapshot was last published, whether an API outage hold is
 * in force, and how many workers are connected. Every worker reports the same values: aggregate
 * them with `max`. Each gauge has its own collect, and a source that fails (Redis away) leaves
 * its gauge unknown instead of failing the whole scrape (`/readyz` reports Redis): a labelled
 * gauge without series, a plain one at NaN (prom-client always serves a plain gauge, and NaN
 * compares false, so no rule fires on a value nobody knows).
 */
import type { Gauge, Registry } from 'prom-client';
import { Gauge as PromGauge } from 'prom-client';

/** Reads shared state at scrape time; a missing source leaves its gauge without a value. */
export interface GlanceSources {
  /**
   * Every snapshot state (the record's list: src/pipeline/record/snapshot-states.ts), each a label
   * of `filings_export_newest_snapshot`. @defaultValue the newest snapshot's state alone
   */
  snapshotStateNames?: readonly string[];
  /** The newest snapshot's state and the finish time (ms) of the newest published one. */
  snapshotGlance?(): Promise<{ newestState: string | null; lastPublishedMs: number | null }>;
  /** BullMQ workers connected to the parts queue (every process, not only this one). */
  workersAlive?(): Promise<number>;
  /** Whether an API outage hold is in force (parts wait for the API to answer again). */
  apiOutage?(): Promise<boolean>;
}

/** The source's answer, or undefined when there is no source or it failed. */
async function read<T>(source: () => Promise<T> | undefined): Promise<T | undefined> {
  try {
    return await source();
  } catch {
    return undefined;
  }
}

export function registerGlanceGauges(registry: Registry, sources: GlanceSources): void {
  const r = [registry];
  new PromGauge({
    name: 'filings_export_newest_snapshot',
    help: "The newest snapshot's state: 1 for its state, 0 for the others",
    labelNames: ['state'] as const,
    registers: r,
    async collect(this: Gauge<'state'>) {
      const g = await read(() => sources.snapshotGlance?.());
      this.reset();
      if (!g || g.newestState === null) return;
      for (const state of sources.snapshotStateNames ?? [g.newestState])
        this.set({ state }, state === g.newestState ? 1 : 0);
    },
  });
  new PromGauge({
    name: 'filings_export_last_published_timestamp_seconds',
    help: 'When the newest published snapshot was published (Unix seconds; NaN when none is on record)',
    registers: r,
    async collect(this: Gauge) {
      const g = await read(() => sources.snapshotGlance?.());
      this.set(g && g.lastPublishedMs !== null ? g.lastPublishedMs / 1000 : NaN);
    },
  });
  new PromGauge({
    name: 'filings_export_workers',
    help: 'BullMQ workers connected to the parts queue, over every process',
    registers: r,
    async collect(this: Gauge) {
      const n = await read(() => sources.workersAlive?.());
      this.set(n ?? NaN);
    },
  });
  new PromGauge({
    name: 'filings_export_api_outage',
    help: 'Whether an API outage hold is in force: 1 while parts wait for the API to answer again, else 0',
    registers: r,
    async collect(this: Gauge) {
      const held = await read(() => sources.apiOutage?.());
      this.set(held === undefined ? NaN : held ? 1 : 0);
    },
  });
}
