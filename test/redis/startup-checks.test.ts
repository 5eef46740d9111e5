/**
 * The start-up checks of a replicated Redis, through the real CLI: seed nodes or Sentinels that
 * cannot be reached, a master name no Sentinel monitors, a prefix that would spread the queue over
 * several cluster slots, and an eviction policy that would drop jobs each end the command with one
 * line naming the node or the setting.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startPrivateRedis, type PrivateRedis } from '../../src/infra/redis-server.js';
import { startPrivateSentinelGroup, type PrivateSentinelGroup } from '../../src/infra/redis-topologies.js';
import { runCli } from '../helpers/processes.js';

/** The one line `status` prints on stderr, and that it failed. */
async function statusError(env: NodeJS.ProcessEnv): Promise<string> {
  const r = await runCli(['status'], { env, unset: ['FILINGS_EXPORT_PREFIX'] });
  expect(r.code, r.stdout).toBe(1);
  const lines = r.stderr.trim().split('\n');
  expect(lines, r.stderr).toHaveLength(1);
  return lines[0] ?? '';
}

describe('start-up checks of a replicated Redis', () => {
  let sentinels: PrivateSentinelGroup;
  let guarded: PrivateSentinelGroup;
  let evicting: PrivateRedis;
  beforeAll(async () => {
    [sentinels, guarded, evicting] = await Promise.all([
      startPrivateSentinelGroup(),
      startPrivateSentinelGroup('fxguarded', { sentinelPassword: 's3ntinel/pw' }),
      startPrivateRedis({ extraArgs: ['--maxmemory-policy', 'allkeys-lru'] }),
    ]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([sentinels?.close(), guarded?.close(), evicting?.close()]);
  });

  it('reaches Sentinels that require a password through ?sentinel_password=, and never prints it', async () => {
    expect(guarded.url).toContain('?sentinel_password=s3ntinel%2Fpw');
    const ok = await runCli(['status'], {
      env: { REDIS_URL: guarded.url },
      unset: ['FILINGS_EXPORT_PREFIX'],
    });
    expect(ok.code, ok.stderr).toBe(0);
    expect(`${ok.stdout}${ok.stderr}`).not.toContain('s3ntinel');
    // Without it the Sentinels refuse, and the line says so without a password in it.
    const bare = guarded.url.replace(/\?.*$/, '');
    const line = await statusError({ REDIS_URL: bare });
    expect(line).toContain(`cannot connect to Redis master "fxguarded" through the Sentinels at ${bare}`);
    expect(line).toMatch(/NOAUTH|Authentication required/);
  });

  it('names every cluster seed node that cannot be reached', async () => {
    const [a, b] = [await freePort(), await freePort()];
    const url = `redis+cluster://app:hunter2@127.0.0.1:${a},127.0.0.1:${b}`;
    expect(await statusError({ REDIS_URL: url })).toBe(
      `filings-export: cannot connect to the Redis Cluster at redis+cluster://app:redacted@127.0.0.1:${a},127.0.0.1:${b}: no seed node answered: 127.0.0.1:${a} (connect ECONNREFUSED), 127.0.0.1:${b} (connect ECONNREFUSED) (set REDIS_URL or redis.url) [REDIS_UNAVAILABLE]`,
    );
  });

  it('names every Sentinel that cannot be reached', async () => {
    const a = await freePort();
    expect(await statusError({ REDIS_URL: `redis+sentinel://127.0.0.1:${a}/fxprimary` })).toBe(
      `filings-export: cannot connect to Redis master "fxprimary" through the Sentinels at redis+sentinel://127.0.0.1:${a}/fxprimary: no Sentinel answered: 127.0.0.1:${a} (connect ECONNREFUSED) (set REDIS_URL or redis.url) [REDIS_UNAVAILABLE]`,
    );
  });

  it('says no Sentinel monitors a mistyped master name', async () => {
    const url = sentinels.url.replace(/\/fxprimary$/, '/fxprimray');
    expect(await statusError({ REDIS_URL: url })).toBe(
      `filings-export: cannot connect to Redis master "fxprimray" through the Sentinels at ${url}: no Sentinel monitors a master named "fxprimray" (check the name after the last "/" of the URL; SENTINEL MASTERS lists them) (set REDIS_URL or redis.url) [REDIS_UNAVAILABLE]`,
    );
  });

  it('refuses a prefix that would spread the queue over several cluster slots', async () => {
    const env = { REDIS_URL: 'redis+cluster://127.0.0.1:1', FILINGS_EXPORT_PREFIX: 'fx{}' };
    const r = await runCli(['status'], { env });
    expect(r.code, r.stderr).toBe(2); // a config error
    expect(r.stderr).toContain(
      'config.redis.prefix: redis.prefix "fx{}" would spread the queue\'s keys over several cluster slots',
    );
  });

  it('refuses a Redis whose maxmemory-policy evicts keys, naming the node and the setting', async () => {
    expect(await statusError({ REDIS_URL: evicting.url })).toBe(
      `filings-export: Redis at ${evicting.url}: node 127.0.0.1:${evicting.port} has maxmemory-policy allkeys-lru, which evicts queued jobs under memory pressure; set maxmemory-policy noeviction (a parameter group on ElastiCache, the instance's configuration on Memorystore) [REDIS_UNAVAILABLE]`,
    );
  });
});
