/**
 * WAIT after the writes that must survive a failover (src/infra/replica-ack.ts), on real
 * redis-server processes: a server without replicas is never sent WAIT; a primary whose only
 * replica is frozen with SIGSTOP has the write refused as not yet safe (and the budget refunds the
 * reservation and holds instead of granting it); once the replica runs again the write is confirmed.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBudget, resolveBudgetConfig } from '../../src/budget/index.js';
import { replicaAck } from '../../src/infra/replica-ack.js';
import { startPrivateRedis, type PrivateRedis } from '../../src/infra/redis-server.js';
import { until } from '../../src/infra/redis-topologies.js';
import { TestClock } from '../helpers/clock.js';

const BUDGET = resolveBudgetConfig({ pacing: 'burst', requestsPerMinute: 1000, dailyQuota: 100 });

async function waits(r: Redis): Promise<number> {
  const stats = await r.info('commandstats');
  return Number(/^cmdstat_wait:calls=(\d+)/m.exec(stats)?.[1] ?? 0);
}

describe('WAIT for a replica', () => {
  let primary: PrivateRedis;
  let replica: PrivateRedis;
  let lone: PrivateRedis;
  const clients: Redis[] = [];
  const open = async (port: number): Promise<Redis> => {
    const r = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: null });
    clients.push(r);
    await r.ping();
    return r;
  };
  beforeAll(async () => {
    lone = await startPrivateRedis();
    primary = await startPrivateRedis();
    replica = await startPrivateRedis({ extraArgs: ['--replicaof', '127.0.0.1', String(primary.port)] });
    const p = await open(primary.port);
    await until('the replica in sync', async () => (await p.info('replication')).includes('state=online'));
  }, 60_000);
  afterAll(async () => {
    if (replica?.pid !== undefined) process.kill(replica.pid, 'SIGCONT');
    for (const c of clients) c.disconnect();
    await Promise.allSettled([lone?.close(), primary?.close(), replica?.close()]);
  });

  it('costs nothing on a server without replicas: no WAIT is sent', async () => {
    const r = await open(lone.port);
    const ack = replicaAck(r);
    await r.set('k', '1');
    expect(await ack.confirm('k')).toBe(true);
    expect(await ack.confirm('k')).toBe(true);
    expect(await waits(r)).toBe(0);
  });

  it('a frozen replica: the write is not confirmed and the reservation is refunded, not granted', async () => {
    const r = await open(primary.port);
    const ack = replicaAck(r, { timeoutMs: 300 });
    await r.set('k', '1');
    // A running replica confirms; a loaded machine may take longer than one 300 ms WAIT to say so.
    await until('the write confirmed with the replica running', () => ack.confirm('k'));
    const clock = new TestClock(Date.UTC(2026, 10, 28, 12)).freeze();
    const budget = createBudget({
      redis: r,
      config: BUDGET,
      keyFingerprint: '0123456789abcdef',
      clock,
      prefix: 'ack',
      confirmWrite: (key) => ack.confirm(key),
    });
    process.kill(replica.pid ?? 0, 'SIGSTOP');
    try {
      await r.set('k', '2');
      expect(await ack.confirm('k')).toBe(false);
      const outcome = await budget.acquire('facts/full');
      expect(outcome.kind).toBe('hold');
      // Refunded: the quota counts no request for a reservation that was never granted.
      expect((await budget.describe()).daily.used).toBe(0);
    } finally {
      process.kill(replica.pid ?? 0, 'SIGCONT');
    }
    await until('the write confirmed once the replica runs', () => ack.confirm('k'));
    const granted = await budget.acquire('facts/full');
    expect(granted.kind).toBe('granted');
    expect((await budget.describe()).daily.used).toBe(1);
    expect(await waits(r)).toBeGreaterThan(0);
  }, 60_000);
});
