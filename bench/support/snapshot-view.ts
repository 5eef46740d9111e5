/**
 * The snapshot record at scale (issue 27), one figure of `npm run bench -- operations`: what
 * Redis's one thread spends on each read of a
 * snapshot's view (`SnapshotStore.view`), which every part job of a fixed-schema dataset and
 * every `status` poll makes, for snapshots of 1,000 and 10,000 companies. From Redis's own
 * `INFO commandstats` (µs per EVAL, 2,000 calls per size, after 200 to warm up), so the
 * client's event loop and the box's noise are not in it. The view leaves the company list out;
 * reading it must not grow with that list: target 10,000 ÷ 1,000 ≤ 2.
 */
import { Redis } from 'ioredis';
import { startPrivateRedis } from '../../src/infra/redis-server.js';
import { SnapshotStore } from '../../src/pipeline/record/snapshot-store.js';
import { parseCompany } from '../../src/pipeline/record/index.js';
import type { BenchResult } from './types.js';

const SIZES = [1_000, 10_000] as const;
const CALLS = 2_000;
const WARM_UP = 200;

/** Redis µs per EVAL over `CALLS` views of a snapshot of `companies` companies. */
async function viewMicros(redis: Redis, store: SnapshotStore, companies: number): Promise<number> {
  const id = `bench-record-${companies}`;
  await store.create({
    id,
    date: '2026-11-27',
    trigger: 'manual',
    companies: Array.from({ length: companies }, (_, i) => parseCompany(`T${i}`, 'bench')),
    datasets: ['facts_full', 'evidence'],
    formats: ['parquet'],
    outDir: '/tmp/bench-record',
  });
  for (let i = 0; i < WARM_UP; i++) await store.view(id);
  await redis.config('RESETSTAT');
  for (let i = 0; i < CALLS; i++) await store.view(id);
  const stats = /cmdstat_eval:calls=(\d+),usec=(\d+)/.exec(await redis.info('commandstats'));
  if (stats === null || Number(stats[1]) !== CALLS)
    throw new Error(
      `snapshot view bench: expected ${CALLS} EVAL calls in commandstats, got ${stats?.[1] ?? 'none'}`,
    );
  return Number(stats[2]) / CALLS;
}

export async function snapshotViewCost(): Promise<BenchResult[]> {
  const server = await startPrivateRedis();
  const redis = new Redis(server.url, { maxRetriesPerRequest: null });
  try {
    const store = new SnapshotStore(redis, { prefix: 'fx', queueBase: 'bench', recordTtlSeconds: 3600 });
    const micros: number[] = [];
    for (const n of SIZES) micros.push(await viewMicros(redis, store, n));
    const [small, large] = [micros[0]!, micros[1]!];
    const ratio = large / small;
    return [
      {
        group: 'operations',
        name: `snapshot view: Redis time per read, ${SIZES[1].toLocaleString('en-US')} ÷ ${SIZES[0].toLocaleString('en-US')} companies`,
        value: ratio,
        unit: 'ratio',
        target: '<= 2x',
        ok: ratio <= 2,
        note: `${large.toFixed(1)} µs against ${small.toFixed(1)} µs per EVAL (INFO commandstats, ${CALLS} reads each); every part job of a fixed-schema dataset and every status poll reads it`,
      },
    ];
  } finally {
    redis.disconnect();
    await server.close();
  }
}
