/**
 * The ledger through a failover that loses writes, on a real Redis: what a promoted replica lacks
 * is played by putting the keys back as they were before the reservation (DUMP/RESTORE), and a
 * command whose answer a dropped connection lost is delivered twice, as ioredis resends it on the
 * new connection. A reservation is counted once either way: a refund takes back only a
 * reservation the server holds, and a replayed acquire grants what it already reserved.
 */
import type { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveBudgetConfig, type Budget, type Permit } from '../../src/budget/index.js';
import { TestClock } from '../helpers/clock.js';
import { redisScope } from './redis-scope.js';

const scope = redisScope(`test:budget-failover:${process.pid}`);
const { prefix } = scope;
const connect = scope.connect;

afterAll(() => scope.close());

/** Every key under `sub` as it is now, and a way to put exactly that back (a replica that missed what came after). */
async function keysNow(redis: Redis, sub: string): Promise<() => Promise<void>> {
  const names = await redis.keys(`${prefix}:${sub}:*`);
  const dumps = await Promise.all(names.map((k) => redis.dumpBuffer(k)));
  return async () => {
    const later = await redis.keys(`${prefix}:${sub}:*`);
    if (later.length) await redis.del(...later);
    for (const [i, k] of names.entries()) {
      const dump = dumps[i];
      if (dump) await redis.restore(k, 0, dump);
    }
  };
}

function budgetOn(
  redis: Redis,
  sub: string,
  confirmWrite?: (key: string) => Promise<boolean>,
  clock = new TestClock(Date.UTC(2026, 10, 21, 12, 0, 0)).freeze(),
): Budget {
  return scope.budget({
    redis,
    apiKey: `ffx_live_b2b_${sub}`,
    config: resolveBudgetConfig({ pacing: 'burst', requestsPerMinute: 1000, dailyQuota: 100 }),
    clock,
    prefix: `${prefix}:${sub}`,
    ...(confirmWrite ? { confirmWrite } : {}),
  });
}

async function grant(budget: Budget): Promise<Permit> {
  const o = await budget.acquire('facts/full');
  if (o.kind !== 'granted') throw new Error(`expected a grant, got ${JSON.stringify(o)}`);
  return o.permit;
}

describe('a failover that loses the last writes', () => {
  it('does not refund a reservation the promoted replica never had', async () => {
    const redis = connect();
    const failover: { restore?: () => Promise<void> } = {};
    // No replica acknowledged the reservation, and the primary died: the replica promoted in its
    // place has the keys as they were before it, and the refund reaches that replica.
    const budget = budgetOn(redis, 'lost', async () => {
      if (failover.restore === undefined) return true;
      await failover.restore();
      return false;
    });
    for (let i = 0; i < 3; i++) await budget.release(await grant(budget));
    expect((await budget.describe()).daily.used).toBe(3);

    failover.restore = await keysNow(redis, 'lost');
    const held = await budget.acquire('facts/full');
    expect(held).toMatchObject({ kind: 'hold' });
    // 3 requests were sent, and 3 are counted: the lost reservation is not taken back a second time.
    expect((await budget.describe()).daily.used).toBe(3);
  });

  it('counts an acquire delivered twice once, in the window it was made in, and gives it back once', async () => {
    const clock = new TestClock(Date.UTC(2026, 10, 21, 12, 0, 0)).freeze();
    // Another worker on the same key, which opens the next window between the two deliveries.
    const other = budgetOn(connect(), 'replay', undefined, clock);
    const between = { once: async (): Promise<void> => undefined };
    // Every EVALSHA reaches Redis twice: sent, its answer lost with the connection, resent.
    const replaying = new Proxy(connect(), {
      get(target, prop, receiver) {
        if (prop !== 'evalsha') return Reflect.get(target, prop, receiver) as unknown;
        return async (...args: Parameters<Redis['evalsha']>) => {
          await target.evalsha(...args);
          const run = between.once;
          between.once = async () => undefined;
          await run();
          return target.evalsha(...args);
        };
      },
    });
    const budget = budgetOn(replaying, 'replay', undefined, clock);
    between.once = async () => {
      clock.advance(61_000);
      await grant(other);
    };
    const permit = await grant(budget);
    let d = await budget.describe();
    expect(d.daily.used).toBe(2);
    expect(d.window?.sent).toBe(1);
    // The refund, delivered twice as well, gives back the first window's reservation only.
    await budget.release(permit, { sent: false });
    d = await budget.describe();
    expect(d.daily.used).toBe(1);
    expect(d.window?.sent).toBe(1);
  });

  it('keeps a reservation only until its request settles', async () => {
    const redis = connect();
    const budget = budgetOn(redis, 'settle');
    const sent = await grant(budget);
    const unsent = await grant(budget);
    const [reservations] = await redis.keys(`${prefix}:settle:*:reservations`);
    expect(await redis.zcard(reservations ?? 'none')).toBe(2);
    await budget.observe(sent, {}, { succeeded: true });
    await budget.release(unsent, { sent: false });
    expect(await redis.zcard(reservations ?? 'none')).toBe(0);
    expect((await budget.describe()).daily.used).toBe(1);
  });
});
