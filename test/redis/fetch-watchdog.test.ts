/**
 * The fetch watchdog on a real Redis: a worker that does not fetch while jobs wait in the queue it
 * is watched over is reported stuck once, after the idle time on the injected clock, and never
 * while the queue is paused or has nothing waiting. (The stuck worker is stood in for by a worker
 * of another, empty queue: its fetch loop runs, it just never sees the watched queue's jobs.)
 */
import { randomBytes } from 'node:crypto';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { shouldFetch, watchFetching, type FetchReading } from '../../src/pipeline/fetch-watchdog.js';
import { TestClock } from '../helpers/clock.js';

let redis: Redis;
const prefix = `fw${randomBytes(4).toString('hex')}`;
const closers: (() => Promise<unknown>)[] = [];

beforeAll(() => {
  redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: null });
});
afterAll(async () => {
  for (const c of closers.reverse()) await c();
  redis.disconnect();
});

const until = async (check: () => boolean): Promise<void> => {
  for (let i = 0; i < 400 && !check(); i++) await new Promise((r) => setTimeout(r, 25));
};

/** A watched queue with `jobs` waiting, and an idle worker of another queue standing in for a stuck one. */
async function setup(name: string, jobs: number): Promise<{ queue: Queue; worker: Worker }> {
  const queue = new Queue(`${name}-watched`, { connection: redis, prefix });
  const worker = new Worker(`${name}-other`, async () => undefined, {
    connection: redis,
    prefix,
    name: `stuck-${name}`,
  });
  closers.push(
    () => worker.close(),
    () => queue.close(),
  );
  await worker.waitUntilReady();
  for (let i = 0; i < jobs; i++) await queue.add('j', { i });
  return { queue, worker };
}

describe('the fetch watchdog', () => {
  it('reports a worker stuck once, after the idle time, while jobs wait and nothing holds it', async () => {
    const { queue, worker } = await setup('stuck', 2);
    const clock = new TestClock().freeze();
    const stuck: FetchReading[] = [];
    const dog = watchFetching({
      worker,
      queue,
      clock,
      everyMs: 20,
      stuckAfterMs: 30_000,
      onStuck: (_ms, r) => stuck.push(r),
    });
    closers.push(async () => dog.close());
    clock.advance(29_000);
    await new Promise((r) => setTimeout(r, 200));
    expect(stuck).toHaveLength(0);
    clock.advance(2_000);
    await until(() => stuck.length > 0);
    await new Promise((r) => setTimeout(r, 200));
    expect(stuck).toEqual([{ waiting: 2, activeHere: 0, concurrency: 1, held: false }]);
  });

  it('never while the queue is paused or has nothing waiting', async () => {
    const paused = await setup('paused', 1);
    await paused.queue.pause();
    const empty = await setup('empty', 0);
    const clock = new TestClock().freeze();
    const calls: string[] = [];
    for (const [label, s] of [
      ['paused', paused],
      ['empty', empty],
    ] as const) {
      const dog = watchFetching({
        ...s,
        clock,
        everyMs: 20,
        stuckAfterMs: 1_000,
        onStuck: () => calls.push(label),
      });
      closers.push(async () => dog.close());
    }
    for (let i = 0; i < 10; i++) {
      clock.advance(5_000);
      await new Promise((r) => setTimeout(r, 60));
    }
    expect(calls).toEqual([]);
  });

  it('says a worker should fetch only with jobs waiting, a free slot and nothing holding it', () => {
    const free: FetchReading = { waiting: 1, activeHere: 0, concurrency: 1, held: false };
    expect(shouldFetch(free)).toBe(true);
    expect(shouldFetch({ ...free, waiting: 0 })).toBe(false);
    expect(shouldFetch({ ...free, activeHere: 1 })).toBe(false);
    expect(shouldFetch({ ...free, held: true })).toBe(false);
  });
});
