/** The budget tests' share of the test Redis: their connections, budgets and keys, closed together. */
import { Redis } from 'ioredis';
import { inject } from 'vitest';
import { createBudget, type Budget, type BudgetOptions } from '../../src/budget/index.js';

/** What a test file opens on the shared test Redis under one key prefix; `close()` removes it all. */
export interface RedisScope {
  readonly prefix: string;
  /** A new connection to the test Redis, closed by `close()`. */
  connect(): Redis;
  /** A budget closed by `close()`: on a new connection unless `opts.redis` is given. */
  budget(opts: Omit<BudgetOptions, 'redis'> & { redis?: Redis }): Budget;
  /** Deletes every key under the prefix, then closes the budgets and connections. */
  close(): Promise<void>;
}

export function redisScope(prefix: string): RedisScope {
  const connections: Redis[] = [];
  const budgets: Budget[] = [];
  const connect = (): Redis => {
    const r = new Redis(inject('redisUrl'), { maxRetriesPerRequest: null });
    connections.push(r);
    return r;
  };
  return {
    prefix,
    connect,
    budget(opts) {
      const b = createBudget({ ...opts, redis: opts.redis ?? connect() });
      budgets.push(b);
      return b;
    },
    async close() {
      const r = connect();
      const keys = await r.keys(`${prefix}:*`);
      if (keys.length) await r.del(...keys);
      await Promise.all(budgets.map((b) => b.close()));
      await Promise.all(connections.map((c) => c.quit()));
    },
  };
}
