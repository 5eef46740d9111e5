/**
 * The status page in headless chromium, for a snapshot nobody works on: it says no worker consumes
 * the parts queue and how to start one (queue.no_worker_after_ms is 0 here), then, once the
 * snapshot is cancelled, shows it cancelled with who and when, and the no-worker line is gone.
 * Real Redis, the real dashboard server, the emulator over HTTP; no worker runs.
 */
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDashboard, type RunningDashboard } from '../../src/dashboard/server.js';
import { cancelSnapshot } from '../../src/pipeline/queue/cancel.js';
import { systemClock } from '../../src/types.js';
import { startPipelineHarness, type PipelineHarness } from '../helpers/pipeline.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
let h: PipelineHarness;
let dashboard: RunningDashboard;
let browser: Browser;

beforeAll(async () => {
  h = await startPipelineHarness({ config: { 'queue.no_worker_after_ms': 0 } });
  dashboard = await startDashboard({ ctx: h.ctx, port: 0, clock: systemClock });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
});

afterAll(async () => {
  await browser?.close();
  await dashboard?.close();
  await h?.close();
});

describe('the status page, no worker and cancel', () => {
  it('says no worker consumes the parts queue, then shows the snapshot cancelled by whom', async () => {
    await h.ctx.enqueue(h.spec(['AAPL', 'WMT'], ['series_catalog'], 'dash-cancel'));
    const page = await browser.newPage();
    await page.goto(dashboard.url);
    const box = page.locator('[data-snapshot="dash-cancel"]');
    await box.waitFor({ timeout: 20_000 });
    await expect
      .poll(() => box.locator('.no-worker').textContent(), { timeout: 20_000 })
      .toContain('no worker is consuming the parts queue filings-export-parts');
    expect(await box.locator('.no-worker').textContent()).toContain('`filings-export worker`');

    await cancelSnapshot(h.ctx, 'dash-cancel', 'carol');
    await expect.poll(() => box.locator('.state').textContent(), { timeout: 20_000 }).toBe('cancelled');
    expect(await box.textContent()).toMatch(/cancelled by carol at \d{4}-\d\d-\d\dT/);
    expect(await box.locator('.no-worker').count()).toBe(0);
    await page.close();
  });
});
