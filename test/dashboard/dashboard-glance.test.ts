/**
 * The status page's glance blocks in a real headless browser (Debian's chromium, as in
 * dashboard-browser.test.ts): after two snapshots the timeline shows two nights with their charts
 * and numbers; during a third the progress bar moves (read from the DOM: increasing values, no
 * timing); the budget shows the month's burn-down against a configured quota. Real Redis, real
 * workers, the emulator over HTTP. With FX_UPDATE_SCREENSHOT=1 it refreshes docs/img/status-page.png.
 */
import { copyFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { counted } from '../../src/counted.js';
import { startDashboard, type RunningDashboard } from '../../src/dashboard/server.js';
import { dashboardState } from '../../src/dashboard/state.js';
import { systemClock } from '../../src/types.js';
import { startPipelineHarness, type PipelineHarness } from '../helpers/pipeline.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SCREENSHOT = fileURLToPath(new URL('../../docs/img/status-page.png', import.meta.url));
const TICKERS = ['AAPL', 'MSFT', 'NVDA', 'TSLA', 'AMZN', 'META'];
let h: PipelineHarness;
let dashboard: RunningDashboard;
let browser: Browser;
let shots: string;

beforeAll(async () => {
  // Slow answers, one part at a time: the third snapshot's progress moves while the page watches.
  h = await startPipelineHarness({
    emulator: { latencyMs: 300 },
    config: { 'worker.concurrency': 1, 'budget.monthly_quota': 5000 },
  });
  dashboard = await startDashboard({ ctx: h.ctx, port: 0, clock: systemClock });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-sync',
    ],
  });
  shots = await mkdtemp(join(tmpdir(), 'fx-glance-'));
});

afterAll(async () => {
  await browser?.close();
  await dashboard?.close();
  await h?.close();
  if (shots) await rm(shots, { recursive: true, force: true });
});

describe('the nights at a glance', () => {
  it('shows two nights after two snapshots, then a third one moving', async () => {
    await h.startWorkers();
    const first = await h.runToEnd(h.spec(TICKERS.slice(0, 2), ['series_catalog'], 'glance-1'));
    const second = await h.runToEnd(h.spec(TICKERS.slice(0, 3), ['series_catalog'], 'glance-2'));
    expect([first.state, second.state]).toEqual(['published', 'published']);

    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(dashboard.url);
    const nights = page.locator('#timeline tr[data-night]');
    await expect.poll(() => nights.count(), { timeout: 20_000 }).toBe(2);
    expect(await nights.evaluateAll((trs) => trs.map((t) => t.getAttribute('data-night')))).toEqual([
      'glance-1',
      'glance-2',
    ]);
    // The table under the charts carries the numbers the records hold.
    const requestsCell = nights.nth(1).locator('td').nth(4);
    expect((await requestsCell.textContent())?.replace(/,/g, '')).toBe(String(second.requests));
    // Three bar charts, one bar per night, each bar titled with its value.
    expect(await page.locator('#timeline svg').count()).toBe(3);
    expect(await page.locator('#timeline svg rect.bar').count()).toBe(6);
    expect(await page.locator('#timeline svg rect.bar title').first().textContent()).toMatch(
      /^glance-1 \(published\): /,
    );
    // The caption words the server's projection: used, quota, days left, the month's end at this pace.
    const { burnDown } = await dashboardState(h.ctx, Date.now());
    expect(burnDown).toMatchObject({ limit: 5000, runsOutFirst: false });
    const num = (n: number): string => n.toLocaleString('en-US');
    await expect
      .poll(() => page.locator('#burndown figcaption').textContent())
      .toContain(
        `${num(burnDown.used)} requests used of 5,000 (${num(5000 - burnDown.used)} left), ` +
          `${counted(burnDown.daysLeft, 'day')} left; at this pace ${num(burnDown.projected)} by the month's end`,
      );
    await expect.poll(() => page.locator('#timeline').textContent()).toContain('no nightly schedule set up');

    // A third snapshot: its progress bar's value increases across DOM reads.
    await h.ctx.enqueue(h.spec(TICKERS, ['series_catalog', 'issuer_reference'], 'glance-3'));
    const bar = page.locator('[data-running="glance-3"] progress');
    await bar.waitFor({ timeout: 20_000 });
    const value = async (): Promise<number> => Number(await bar.getAttribute('value'));
    // The value and max attributes reflect the element's properties.
    expect(await bar.getAttribute('max')).toBe('12');
    const seen: number[] = [await value()];
    for (let step = 0; step < 2; step++) {
      const before = seen.at(-1)!;
      await expect.poll(value, { timeout: 30_000, interval: 100 }).toBeGreaterThan(before);
      seen.push(await value());
    }
    expect(seen[2]).toBeGreaterThan(seen[1]!);
    expect(seen[1]).toBeGreaterThan(seen[0]!);
    await expect
      .poll(() => page.locator('[data-running="glance-3"]').textContent())
      .toMatch(/ of 12 parts \(\d+ %\) · ETA .* · \d+\.\d requests\/min/);
    const shot = join(shots, 'status-page.png');
    await page.screenshot({ path: shot, fullPage: true });
    expect((await readFile(shot)).subarray(1, 4).toString()).toBe('PNG');
    if (process.env.FX_UPDATE_SCREENSHOT === '1') await copyFile(shot, SCREENSHOT);

    // When it ends, it joins the timeline and leaves the running block.
    await expect.poll(() => nights.count(), { timeout: 60_000 }).toBe(3);
    await expect
      .poll(() => page.locator('#running').textContent(), { timeout: 60_000 })
      .toBe('nothing running');
    await page.close();
  });
});
