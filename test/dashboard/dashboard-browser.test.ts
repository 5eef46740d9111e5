/**
 * The status page in a real headless browser (Debian's chromium, driven by playwright-core; the
 * test setup installs it the way it installs redis-server): the page loads, shows a running
 * snapshot's progress moving and a published one's row counts; Bull Board answers beside it and
 * refuses every action it offers, leaving Redis as it was; the retry action needs the token even on
 * loopback, and another address needs a token to start.
 * Real Redis, real workers, the emulator over HTTP.
 */
import type { Queue } from 'bullmq';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Secret } from '../../src/config/secret.js';
import { startDashboard, type RunningDashboard } from '../../src/dashboard/server.js';
import { systemClock } from '../../src/types.js';
import { partJobId, publishJobId } from '../../src/pipeline/queue/ids.js';
import { startPipelineHarness, type PipelineHarness } from '../helpers/pipeline.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
let h: PipelineHarness;
let dashboard: RunningDashboard;
let browser: Browser;

beforeAll(async () => {
  // Slow answers, one part at a time: the progress moves while the page watches.
  h = await startPipelineHarness({ emulator: { latencyMs: 250 }, config: { 'worker.concurrency': 1 } });
  dashboard = await startDashboard({
    ctx: h.ctx,
    port: 0,
    clock: systemClock,
    token: new Secret('s3cret-token'),
  });
  // playwright-core starts it with a fresh temporary profile of its own.
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
});

afterAll(async () => {
  await browser?.close();
  await dashboard?.close();
  await h?.close();
});

/** What an action could change: each queue's paused flag, counts, limits, and every job's state and data. */
async function queueState(queues: Queue[]): Promise<{
  queues: unknown[];
  jobs: { id: string; state: string; data: string; attemptsMade: number; delay: number; priority: number }[];
}> {
  const out: Awaited<ReturnType<typeof queueState>> = { queues: [], jobs: [] };
  for (const q of queues) {
    out.queues.push({
      name: q.name,
      paused: await q.isPaused(),
      counts: await q.getJobCounts(),
      // The meta hash holds the queue-wide concurrency and rate limit (the hold's TTL only ticks down).
      meta: await q.getMeta(),
    });
    for (const job of await q.getJobs()) {
      out.jobs.push({
        id: `${q.name}/${job.id ?? ''}`,
        state: await job.getState(),
        data: JSON.stringify(job.data),
        attemptsMade: job.attemptsMade,
        delay: job.delay,
        priority: job.priority,
      });
    }
  }
  out.jobs.sort((a, b) => a.id.localeCompare(b.id));
  return out;
}

describe('the dashboard', () => {
  it('shows a running snapshot moving, then the published row counts', async () => {
    await h.startWorkers();
    const spec = h.spec(['AAPL', 'MSFT', 'NVDA', 'TSLA', 'AMZN', 'META'], ['series_catalog'], 'dash-1');
    await h.ctx.enqueue(spec);
    const page = await browser.newPage();
    await page.goto(dashboard.url);
    const box = page.locator('[data-snapshot="dash-1"]');
    await box.waitFor({ timeout: 20_000 });
    const doneCell = box.locator('tr', { hasText: 'series_catalog' }).locator('td').nth(1);
    const readDone = async (): Promise<number> => Number((await doneCell.textContent()) ?? 'NaN');
    await expect.poll(() => box.locator('.state').textContent(), { timeout: 20_000 }).toBe('running');
    const first = await readDone();
    await expect.poll(readDone, { timeout: 30_000 }).toBeGreaterThan(first);
    await expect.poll(() => box.locator('.state').textContent(), { timeout: 60_000 }).toBe('published');

    const rec = await h.ctx.store.get('dash-1');
    const rowsCell = box.locator('tr', { hasText: 'series_catalog' }).locator('td').nth(7);
    await expect
      .poll(async () => (await rowsCell.textContent())?.replace(/,/g, ''))
      .toBe(String(rec?.progress.series_catalog?.rows));
    expect(rec?.progress.series_catalog?.rows).toBeGreaterThan(0);
    // The budget section shows the key's rate as learned from X-RateLimit-Limit.
    await expect.poll(() => page.locator('#budget').textContent()).toContain('rate (requests/min)');
    // Published last under the root: the page marks it as latest, as status and the latest object do.
    await expect.poll(() => box.locator('.latest').textContent()).toBe(' · latest');
    const state = (await (await fetch(`${dashboard.url}api/state`)).json()) as { latest: string | null };
    expect(state.latest).toBe('dash-1');

    // A company the API does not know is named under its snapshot, as typed, with the API's answer.
    await h.ctx.enqueue(h.spec(['AAPL', 'zzzzq'], ['series_catalog'], 'dash-missing'));
    const missing = page.locator('[data-snapshot="dash-missing"] .not-found');
    await expect
      .poll(() => missing.allTextContents(), { timeout: 60_000 })
      .toEqual([expect.stringMatching(/^not found: zzzzq: .*404 Unknown ticker: ZZZZQ/)]);
    await page.close();
  });

  it('mounts Bull Board at /queues, read-only', async () => {
    const page = await browser.newPage();
    const res = await page.goto(`${dashboard.url}queues`);
    expect(res?.status()).toBe(200);
    await expect.poll(() => page.title(), { timeout: 15_000 }).toMatch(/bull/i);
    await page.close();

    // Every action Bull Board offers, with a valid body, tried on both queues and on real jobs of
    // dash-1: each is refused (405, the queue is read-only) and Redis holds the same jobs in the
    // same states after.
    const queues = [h.ctx.partsQueue, h.ctx.snapshotsQueue];
    const jobIds = [partJobId('dash-1', 'series_catalog', 'AAPL'), publishJobId('dash-1')];
    const before = await queueState(queues);
    expect(before.jobs.map((j) => j.id)).toEqual(
      expect.arrayContaining([`${queues[0]!.name}/${jobIds[0]!}`, `${queues[1]!.name}/${jobIds[1]!}`]),
    );
    const api = `${dashboard.url}queues/api/queues`;
    const perQueue: [string, string, unknown?][] = [
      ['POST', 'add', { name: 'x', data: {} }],
      ['PUT', 'retry/failed'],
      ['PUT', 'retry/completed'],
      ['PUT', 'promote'],
      ['PUT', 'clean/completed'],
      ['PUT', 'clean/failed'],
      ['PUT', 'pause'],
      ['PUT', 'resume'],
      ['PUT', 'concurrency', { concurrency: 1 }],
      ['PUT', 'rate-limit', { max: 1, duration: 60_000 }],
      ['PUT', 'rate-limit/release'],
      ['PUT', 'empty'],
      ['PUT', 'obliterate', { force: true }],
    ];
    const perJob: [string, string, unknown?][] = [
      ['PUT', 'retry'],
      ['PUT', 'clean'],
      ['PUT', 'promote'],
      ['PUT', 'remove-unprocessed-children'],
      ['PATCH', 'update-data', { jobData: { x: 1 } }],
      ['PATCH', 'delay', { runAt: Date.now() + 60_000 }],
      ['PATCH', 'priority', { priority: 1 }],
    ];
    const send = async (method: string, url: string, body?: unknown): Promise<number> =>
      (
        await fetch(url, {
          method,
          headers: { 'content-type': 'application/json' },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        })
      ).status;
    const refused: string[] = [];
    for (const q of queues) {
      for (const [method, path, body] of perQueue)
        refused.push(
          `${method} ${path} ${await send(method, `${api}/${encodeURIComponent(q.name)}/${path}`, body)}`,
        );
      for (const id of jobIds)
        for (const [method, path, body] of perJob)
          refused.push(
            `${method} :job/${path} ${await send(method, `${api}/${encodeURIComponent(q.name)}/${encodeURIComponent(id)}/${path}`, body)}`,
          );
    }
    expect(refused.filter((r) => !r.endsWith(' 405'))).toEqual([]);
    expect(refused).toHaveLength(2 * (perQueue.length + 2 * perJob.length));
    // The board-wide pause and resume skip read-only queues (they answer 200 and touch nothing).
    await send('PUT', `${api}/pause`);
    expect(await Promise.all(queues.map((q) => q.isPaused()))).toEqual([false, false]);
    await send('PUT', `${api}/resume`);
    expect(await queueState(queues)).toEqual(before);
  });

  it('a state-changing action needs the token, even on loopback', async () => {
    const url = `${dashboard.url}api/snapshots/dash-1/retry`;
    expect((await fetch(url, { method: 'POST' })).status).toBe(401);
    expect((await fetch(url, { method: 'POST', headers: { authorization: 'Bearer wrong' } })).status).toBe(
      401,
    );
    const ok = await fetch(url, { method: 'POST', headers: { authorization: 'Bearer s3cret-token' } });
    expect(ok.status).toBe(200);
    // Published snapshots are final: a retry of one changes nothing.
    expect(await ok.json()).toEqual({ snapshot: 'dash-1', outcome: 'exists' });
  });

  it('refuses to listen off loopback without a token, and refuses actions when it has none', async () => {
    await expect(
      startDashboard({ ctx: h.ctx, port: 0, host: '0.0.0.0', clock: systemClock }),
    ).rejects.toThrow(
      'dashboard: listening on 0.0.0.0 (not loopback) needs a token: set FILINGS_EXPORT_DASHBOARD_TOKEN',
    );
    const open = await startDashboard({ ctx: h.ctx, port: 0, clock: systemClock });
    try {
      expect((await fetch(`${open.url}api/state`)).status).toBe(200);
      expect((await fetch(`${open.url}api/snapshots/dash-1/retry`, { method: 'POST' })).status).toBe(403);
    } finally {
      await open.close();
    }
  });
});
