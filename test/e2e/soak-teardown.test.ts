/**
 * The soak suite leaves nothing behind: what a trial started is stopped in reverse order when it
 * ends, a stop that fails does not keep the others from running, a signal and the trial's own end
 * stop things once; the default topology is a real redis-server with AOF that close() stops.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Held, managed } from '../../scripts/soak/processes.js';
import { startSoakRedis } from '../../scripts/soak/topologies.js';

const dirs: string[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'soak-teardown-'));
  dirs.push(d);
  return d;
}

function alive(pid: number | undefined): boolean {
  try {
    process.kill(pid ?? 0, 0);
    return true;
  } catch {
    return false;
  }
}

describe('what a soak trial started', () => {
  it('is stopped in reverse order, and a stop that fails does not keep the others from running', async () => {
    const dir = await tempDir();
    const held = new Held();
    const order: string[] = [];
    const sleeper = (name: string) =>
      managed(name, 'sleep', ['600'], { env: process.env, cwd: dir, logDir: dir });
    const first = sleeper('first');
    const second = sleeper('second');
    for (const p of [first, second]) await p.start();
    held.add('first', async () => {
      order.push('first');
      await first.stop('SIGTERM', 5000);
    });
    held.add('the broken one', () => {
      order.push('broken');
      throw new Error('no such thing');
    });
    held.add('second', async () => {
      order.push('second');
      await second.stop('SIGTERM', 5000);
    });
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    expect([alive(first.pid), alive(second.pid)]).toEqual([true, true]);
    await held.closeAll();
    expect(order).toEqual(['second', 'broken', 'first']);
    expect([alive(first.pid), alive(second.pid)]).toEqual([false, false]);
    expect(stderr).toHaveBeenCalledWith('soak: could not stop the broken one: Error: no such thing\n');
  }, 30_000);

  it('is stopped once when a signal and the trial’s end both ask', async () => {
    const held = new Held();
    let stops = 0;
    held.add('one', async () => {
      stops++;
      await new Promise((r) => setTimeout(r, 50));
    });
    await Promise.all([held.closeAll(), held.closeAll()]);
    await held.closeAll();
    expect(stops).toBe(1);
  });
});

describe('the soak’s default Redis', () => {
  it('is a redis-server with AOF under the given prefix; it refuses a failover, restarts with its data, and close() stops it', async () => {
    const dir = await tempDir();
    const redis = await startSoakRedis('single', 'soakx', { dir, logDir: dir });
    const client = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: null });
    client.on('error', () => undefined);
    try {
      expect(redis.prefix).toBe('soakx');
      await client.set('soakx:k', 'v');
      await expect(redis.failover()).rejects.toThrow(
        'a failover (no replica to promote) is not a fault of the single topology',
      );
      await redis.restart(100);
      expect(await client.get('soakx:k')).toBe('v');
    } finally {
      client.disconnect();
      await redis.close();
    }
    const probe = new Redis(redis.url, {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    probe.on('error', () => undefined);
    await expect(probe.connect()).rejects.toThrow(/ECONNREFUSED|Connection is closed/);
    probe.disconnect();
  }, 60_000);
});
