import { describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { inject } from 'vitest';
import {
  BackendUnavailableError,
  ForbiddenError,
  RateLimitedError,
  TransportError,
  coerceError,
  errorCode,
  isRetryable,
} from '../../src/errors.js';

describe('error hierarchy', () => {
  it('keeps a stable code and retryability per class', () => {
    const ctx = { operation: 'facts/full', status: 403 };
    const revoked = new ForbiddenError('API_KEY_REVOKED', 'API key has been revoked', ctx);
    expect(revoked.code).toBe('API_KEY_REVOKED');
    expect(revoked.retryable).toBe(false);
    expect(revoked.name).toBe('ForbiddenError');
    expect(
      new BackendUnavailableError('Facts backend unavailable', { operation: 'x', status: 503 }).retryable,
    ).toBe(true);
    const limited = new RateLimitedError('Rate limit exceeded', {
      operation: 'x',
      status: 429,
      retryAfterMs: 5000,
    });
    expect(limited.windowMs).toBe(60_000);
    expect(new TransportError('TRANSPORT_ABORTED', 'aborted', { operation: 'x' }).retryable).toBe(false);
    expect(new TransportError('TRANSPORT_RESET', 'reset', { operation: 'x' }).retryable).toBe(true);
  });

  it('coerces anything thrown', () => {
    expect(coerceError('boom').message).toBe('boom');
    expect(coerceError({ a: 1 }).message).toContain('{"a":1}');
    expect(errorCode(new Error('x'))).toBe('INTERNAL');
    expect(isRetryable(new Error('x'))).toBe(true);
  });
});

describe('test harness', () => {
  it('provides a real redis-server', async () => {
    const redis = new Redis(inject('redisUrl'));
    try {
      expect(await redis.ping()).toBe('PONG');
      expect(await redis.config('GET', 'maxmemory-policy')).toEqual(['maxmemory-policy', 'noeviction']);
    } finally {
      redis.disconnect();
    }
  });
});
