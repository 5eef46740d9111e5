/**
 * The gauges the alert rules read (src/metrics/glance-gauges.ts): their values from the sources,
 * and a failing source (Redis away) that leaves its gauge empty without failing the scrape.
 */
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/metrics/metrics.js';
import { SNAPSHOT_STATES } from '../../src/pipeline/record/index.js';

describe('the glance gauges', () => {
  it('show the newest state as 1 among the states, the last publish in seconds, workers and outage', async () => {
    const m = createMetrics(new Registry(), {
      snapshotStateNames: SNAPSHOT_STATES,
      snapshotGlance: () => Promise.resolve({ newestState: 'failed', lastPublishedMs: 1_700_000_000_500 }),
      workersAlive: () => Promise.resolve(3),
      apiOutage: () => Promise.resolve(true),
    });
    const text = await m.registry.metrics();
    expect(text).toContain('filings_export_newest_snapshot{state="failed"} 1\n');
    // Every state of the record is a label: one at 1, the others at 0.
    for (const state of SNAPSHOT_STATES)
      expect(text).toContain(
        `filings_export_newest_snapshot{state="${state}"} ${state === 'failed' ? 1 : 0}\n`,
      );
    expect(text).toContain('filings_export_last_published_timestamp_seconds 1700000000.5\n');
    expect(text).toContain('filings_export_workers 3\n');
    expect(text).toContain('filings_export_api_outage 1\n');
    // Known label sets start at 0.
    expect(text).toContain('filings_export_rate_limited_total{kind="quota"} 0\n');
  });

  it('leave a gauge unknown when its source fails, and still serve the others', async () => {
    const m = createMetrics(new Registry(), {
      snapshotGlance: () => Promise.reject(new Error('Redis is away')),
      workersAlive: () => Promise.resolve(1),
    });
    const text = await m.registry.metrics();
    expect(text).not.toMatch(/^filings_export_newest_snapshot\{/m);
    // prom-client spells NaN "Nan"; Prometheus parses it (`promtool check metrics` accepts it).
    expect(text).toContain('filings_export_last_published_timestamp_seconds Nan\n');
    expect(text).toContain('filings_export_api_outage Nan\n'); // no source at all
    expect(text).toContain('filings_export_workers 1\n');
  });
});
