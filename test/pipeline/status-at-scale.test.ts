/**
 * `status` at 10,000 companies (issue 27): what it reads stays a few small Redis replies whatever
 * the number of companies and parts: the record without its company list, counters kept as parts
 * end, and the `not reused` lines from their own hash, bounded for the text. `run --wait`'s polls
 * and the status page read the same view, so their bytes per poll do not grow with the company
 * count either. Bytes are counted on the connection (real Redis), never timed.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { silentLogger } from '../../src/log.js';
import { dashboardState } from '../../src/dashboard/state.js';
import { openPipeline, type PipelineContext } from '../../src/pipeline/context.js';
import { followSnapshot } from '../../src/pipeline/queue/follow.js';
import type { SnapshotSpec } from '../../src/pipeline/record/index.js';
import { formatStatus, readStatus } from '../../src/pipeline/status-view.js';
import type { Company } from '../../src/pipeline/record/index.js';
import type { PartPointer } from '../../src/types.js';

const COMPANIES = 10_000;
const NOT_REUSED = 300;

let ctx: PipelineContext;
const opened: PipelineContext[] = [];

/** A pipeline context of its own (a fresh Redis prefix), so its snapshot list holds only what a test puts there. */
async function openContext(): Promise<PipelineContext> {
  const flags = Object.entries({
    'redis.url': inject('redisUrl'),
    'redis.prefix': `t${randomBytes(5).toString('hex')}`,
    'api.url': 'http://127.0.0.1:9',
    'log.level': 'silent',
  }).map(([path, value]) => ({ path, value, flag: `test ${path}` }));
  const config = loadConfig({ env: { FILINGS_API_KEY: 'status-at-scale-test-key-0000000000' }, flags });
  const c = await openPipeline(config, silentLogger());
  opened.push(c);
  return c;
}

beforeAll(async () => {
  ctx = await openContext();
});
afterAll(async () => {
  await Promise.all(opened.map((c) => c.close()));
});

function spec(id: string, companies: number): SnapshotSpec {
  return {
    id,
    date: '2026-11-26',
    trigger: 'nightly',
    companies: Array.from({ length: companies }, (_, i): Company => ({ kind: 'ticker', ticker: `S${i}` })),
    datasets: ['series_catalog', 'dims_catalog'],
    formats: ['parquet'],
    outDir: '/tmp/status-at-scale',
    reuse: { from: 'night-1', fullRefreshDate: '2026-11-20' },
  };
}

function pointer(ticker: string, dataset: 'series_catalog' | 'dims_catalog', fetched: boolean): PartPointer {
  return {
    dataset,
    ticker,
    status: 'done',
    rows: 3,
    bytes: 10,
    ...(fetched
      ? { message: 'fetched, not reused: its catalog fingerprint changed' }
      : { reusedFrom: 'night-1' }),
  };
}

/** Bytes the context's Redis connection received while `fn` ran. */
async function bytesRead<T>(
  fn: () => Promise<T>,
  on: PipelineContext = ctx,
): Promise<{ value: T; bytes: number }> {
  const before = on.redis.stream.bytesRead;
  const value = await fn();
  return { value, bytes: on.redis.stream.bytesRead - before };
}

describe('status of a 10,000-company snapshot', () => {
  it('reads a few KB, not the company list or every part, and says the same', async () => {
    const s = spec('scale-1', COMPANIES);
    expect(await ctx.store.create(s)).toBe(true);
    await ctx.store.transition(s.id, ['enqueuing'], 'running');
    const writes: Promise<boolean>[] = [];
    for (let i = 0; i < COMPANIES; i++)
      for (const ds of s.datasets as ('series_catalog' | 'dims_catalog')[])
        writes.push(
          ctx.store.recordPart(s.id, pointer(`S${i}`, ds, i < NOT_REUSED && ds === 'series_catalog')),
        );
    await Promise.all(writes);

    const text = await bytesRead(() => readStatus(ctx, s.id, { all: false }));
    expect(text.bytes).toBeLessThan(16_000);
    const report = text.value!;
    expect(report.total).toMatchObject({ total: 2 * COMPANIES, done: 2 * COMPANIES, pending: 0 });
    expect(report.total.reused).toBe(2 * COMPANIES - NOT_REUSED);
    expect(report.incremental?.not_reused).toHaveLength(10);
    expect(report.incremental?.not_reused_total).toBe(NOT_REUSED);
    const lines = formatStatus(report).split('\n');
    expect(lines.filter((l) => l.startsWith('  not reused: S'))).toHaveLength(10);
    expect(lines).toContain(`  … and ${NOT_REUSED - 10} more (status --json lists them all)`);

    const json = await readStatus(ctx, s.id, { all: true });
    expect(new Set(json?.incremental?.not_reused)).toEqual(
      new Set(
        Array.from(
          { length: NOT_REUSED },
          (_, i) => `S${i} series_catalog: fetched, not reused: its catalog fingerprint changed`,
        ),
      ),
    );

    const view = await bytesRead(() => ctx.store.view(s.id));
    expect(view.bytes).toBeLessThan(4_000);
    expect(view.value?.spec).not.toHaveProperty('companies');
    expect((await ctx.store.get(s.id))?.spec.companies).toEqual(s.companies);
  });

  it('keeps a not-reused line only while it is the part’s last result', async () => {
    const s = spec('scale-2', 3);
    await ctx.store.create(s);
    await ctx.store.recordPart(s.id, pointer('S1', 'series_catalog', true));
    await ctx.store.recordPart(s.id, pointer('S2', 'series_catalog', true));
    expect((await ctx.store.notReused(s.id)).total).toBe(2);
    await ctx.store.recordPart(s.id, pointer('S1', 'series_catalog', false));
    expect(await ctx.store.notReused(s.id)).toEqual({
      lines: ['S2 series_catalog: fetched, not reused: its catalog fingerprint changed'],
      total: 1,
    });
    // A small snapshot's status text is unchanged: every line, no "… more".
    const text = formatStatus((await readStatus(ctx, s.id, { all: false }))!);
    expect(text).toContain('  not reused: S2 series_catalog: fetched, not reused');
    expect(text).not.toContain('more (status --json');
  });
});

describe('run --wait and the status page at 10,000 companies', () => {
  /** A context holding one running snapshot of `companies` companies, a tenth of its parts done. */
  async function withSnapshot(companies: number): Promise<PipelineContext> {
    const c = await openContext();
    const s = spec('scale-poll', companies);
    await c.store.create(s);
    await c.store.transition(s.id, ['enqueuing'], 'running');
    for (let i = 0; i < companies; i += 10)
      await c.store.recordPart(s.id, pointer(`S${i}`, 'dims_catalog', false));
    return c;
  }

  it('reads the same few KB per poll at 3 companies and at 10,000', async () => {
    const small = await withSnapshot(3);
    const big = await withSnapshot(COMPANIES);
    // The company list alone is ~0.3 MB here: a poll reading it would differ by that much.
    const listBytes = JSON.stringify(spec('x', COMPANIES).companies).length;
    expect(listBytes).toBeGreaterThan(150_000);

    const page = async (c: PipelineContext): Promise<number> =>
      (await bytesRead(() => dashboardState(c, Date.parse('2026-11-26T12:00:00Z')), c)).bytes;
    const [pageSmall, pageBig] = [await page(small), await page(big)];
    const shown = (await dashboardState(big, Date.parse('2026-11-26T12:00:00Z'))).snapshots;
    expect(shown.map((x) => [x.id, x.total.total])).toEqual([['scale-poll', 2 * COMPANIES]]);
    expect(pageBig).toBeLessThan(16_000);
    expect(Math.abs(pageBig - pageSmall)).toBeLessThan(200);

    // `run --wait`: a poll per record until it ends; a stopped snapshot ends after one.
    const follow = async (c: PipelineContext): Promise<{ bytes: number; polls: number }> => {
      await c.store.stop('scale-poll', 'test');
      let polls = 0;
      const { value, bytes } = await bytesRead(
        () => followSnapshot(c.store, 'scale-poll', { onUpdate: () => void polls++ }),
        c,
      );
      expect(value.state).toBe('stopped');
      return { bytes, polls };
    };
    const [followSmall, followBig] = [await follow(small), await follow(big)];
    expect([followSmall.polls, followBig.polls]).toEqual([1, 1]);
    expect(followBig.bytes).toBeLessThan(4_000);
    expect(Math.abs(followBig.bytes - followSmall.bytes)).toBeLessThan(200);
  });
  it('reads the record inside Redis field by field, never copying the company list there', async () => {
    const s = spec('scale-fields', COMPANIES);
    expect(await ctx.store.create(s)).toBe(true);
    // MONITOR shows the commands a script runs too: what the view's EVAL reads of the record.
    const monitor = await new Redis(inject('redisUrl')).monitor();
    const seen: string[][] = [];
    const key = `:snapshot:${s.id}`;
    monitor.on('monitor', (_time: string, args: string[]) => {
      if (args[1]?.endsWith(key) === true) seen.push(args);
    });
    try {
      const view = await ctx.store.view(s.id);
      expect(view?.total).toBe(2 * COMPANIES);
      expect(view?.progress.series_catalog?.total).toBe(COMPANIES);
      for (let i = 0; i < 100 && !seen.some((a) => a[0]?.toUpperCase() === 'HMGET'); i++)
        await new Promise((r) => setTimeout(r, 20));
    } finally {
      monitor.disconnect();
    }
    const commands = seen.map((a) => a[0]!.toUpperCase());
    expect(commands).toContain('HMGET');
    // The list is the hash's one big field: no command of the view returns it.
    expect(commands.filter((c) => c === 'HGETALL' || c === 'HVALS')).toEqual([]);
    const fields = seen.filter((a) => a[0]?.toUpperCase() === 'HMGET').flatMap((a) => a.slice(2));
    expect(fields).toContain('spec');
    expect(fields).not.toContain('companies');
  });
});
