import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { hashTag, parseRedisUrl, redactUrl } from '../../src/config/redis-url.js';
import { ConfigError } from '../../src/errors.js';

const CLUSTER = 'redis+cluster://127.0.0.1:7000,127.0.0.1:7001';

function configError(env: Record<string, string>): string {
  try {
    loadConfig({ env });
  } catch (err: unknown) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
  throw new Error('loadConfig accepted the config');
}

describe('REDIS_URL forms', () => {
  it('parses a cluster’s seed nodes, credentials and TLS', () => {
    expect(parseRedisUrl('rediss+cluster://app:p%40ss@10.0.0.1:6379,[::1]:6380')).toEqual({
      kind: 'cluster',
      nodes: [
        { host: '10.0.0.1', port: 6379 },
        { host: '::1', port: 6380 },
      ],
      username: 'app',
      password: 'p@ss',
      tls: true,
    });
  });

  it('parses Sentinels and the master name', () => {
    expect(parseRedisUrl('redis+sentinel://:secret@s1:26379,s2:26379/mymaster')).toEqual({
      kind: 'sentinel',
      sentinels: [
        { host: 's1', port: 26379 },
        { host: 's2', port: 26379 },
      ],
      masterName: 'mymaster',
      password: 'secret',
      tls: false,
    });
  });

  it('keeps a single server’s URL as ioredis reads it', () => {
    expect(parseRedisUrl('rediss://:pw@host:6380/2')).toEqual({
      kind: 'single',
      url: 'rediss://:pw@host:6380/2',
    });
  });

  it('names what is wrong with a multi-node URL', () => {
    expect(parseRedisUrl('redis+sentinel://s1:26379')).toMatch(/ends with \/MASTER_NAME/);
    expect(parseRedisUrl('redis+cluster://h1:6379,h2')).toBe('names node "h2", which is not host:port');
    expect(parseRedisUrl('redis+cluster://h1:6379/0')).toMatch(/takes no path/);
  });

  it('takes the Sentinels’ own password as ?sentinel_password= and refuses other parameters', () => {
    expect(parseRedisUrl('redis+sentinel://:data@s1:1,s2:2/m?sentinel_password=se%2Fcret')).toEqual({
      kind: 'sentinel',
      sentinels: [
        { host: 's1', port: 1 },
        { host: 's2', port: 2 },
      ],
      masterName: 'm',
      password: 'data',
      sentinelPassword: 'se/cret',
      tls: false,
    });
    expect(parseRedisUrl('redis+sentinel://s1:1/m?sentinel_pasword=x')).toBe(
      'has query parameter "sentinel_pasword"; a redis+sentinel:// URL takes only ?sentinel_password=',
    );
    expect(parseRedisUrl('redis+cluster://h:1?sentinel_password=x')).toBe(
      'a redis+cluster:// URL takes no ?query',
    );
    expect(redactUrl('redis+sentinel://:data@s1:1/m?sentinel_password=se%2Fcret')).toBe(
      'redis+sentinel://:redacted@s1:1/m?sentinel_password=redacted',
    );
  });

  it('redacts the password of every form', () => {
    expect(redactUrl('redis+cluster://u:hunter2@h1:1,h2:2')).toBe('redis+cluster://u:redacted@h1:1,h2:2');
    expect(redactUrl('rediss+sentinel://:hunter2@s:1/m')).toBe('rediss+sentinel://:redacted@s:1/m');
    expect(redactUrl('redis://:hunter2@h:1/0')).toBe('redis://:redacted@h:1/0');
  });
});

describe('the prefix on a cluster', () => {
  it('is {fx} by default, so every key shares one slot', () => {
    const c = loadConfig({ env: { REDIS_URL: CLUSTER } });
    expect(c.redis.prefix).toBe('{fx}');
    expect(hashTag(`${c.redis.prefix}:nightly-parts:wait`)).toBe('fx');
    expect(c.redis.prefixNote).toBeNull();
    expect(c.redis.target.kind).toBe('cluster');
  });

  it('wraps a prefix given without a hash tag, and says so', () => {
    const c = loadConfig({ env: { REDIS_URL: CLUSTER, FILINGS_EXPORT_PREFIX: 'acme' } });
    expect(c.redis.prefix).toBe('{acme}');
    expect(c.redis.prefixNote).toBe(
      'redis.prefix "acme" has no hash tag: using "{acme}" so every key of the queue shares one cluster slot',
    );
  });

  it('keeps a prefix that has a tag, and every prefix off a cluster', () => {
    expect(loadConfig({ env: { REDIS_URL: CLUSTER, FILINGS_EXPORT_PREFIX: 'acme{x}' } }).redis.prefix).toBe(
      'acme{x}',
    );
    expect(loadConfig({ env: { REDIS_URL: 'redis+sentinel://s:1/m' } }).redis.prefix).toBe('fx');
  });

  it('refuses a prefix whose braces hold no tag, naming the setting', () => {
    expect(configError({ REDIS_URL: CLUSTER, FILINGS_EXPORT_PREFIX: 'acme{}' })).toBe(
      'config.redis.prefix: redis.prefix "acme{}" would spread the queue\'s keys over several cluster slots: its braces hold no hash tag; use a tag such as "{acme}" or a name without braces in environment FILINGS_EXPORT_PREFIX',
    );
  });
});
