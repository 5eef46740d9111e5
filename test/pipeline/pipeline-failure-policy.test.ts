/**
 * The failure policy as data (src/pipeline/part/failure-policy.ts): every error of the hierarchy maps
 * to exactly one action, foreign errors are INTERNAL, and docs/architecture.md shows the table
 * exactly as the code has it. No Redis: the table is pure data.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import {
  AuthenticationError,
  BadRequestError,
  ForbiddenError,
  NotFoundError,
  OutputError,
  QuotaExceededError,
  RateLimitedError,
  RequestValidationError,
  ServerError,
  StorageError,
  TransportError,
  UnexpectedStatusError,
} from '../../src/errors.js';
import {
  FAILURE_ACTIONS,
  FAILURE_POLICY,
  RETRIED_ACTIONS,
  failureAction,
  renderFailurePolicy,
  retriedByPolicy,
} from '../../src/pipeline/part/failure-policy.js';
import { FAILURE_DOC, withPolicyTable } from '../../scripts/render-failure-policy.js';

const ctx = { operation: 'facts/full', status: 0, rateLimit: {} };

describe('failure policy', () => {
  it('maps each kind of failure to the action the pipeline takes', () => {
    expect(failureAction(new NotFoundError('no such company', { ...ctx, status: 404 }))).toBe(
      'record_not_found',
    );
    expect(failureAction(new BadRequestError('bad', { ...ctx, status: 400 }))).toBe('record_bad_request');
    expect(failureAction(new RequestValidationError('facts/full', 'ticker', 'bad'))).toBe(
      'record_bad_request',
    );
    expect(
      failureAction(new AuthenticationError('API_KEY_INVALID', 'invalid key', { ...ctx, status: 401 })),
    ).toBe('stop_snapshot');
    expect(failureAction(new ForbiddenError('API_KEY_REVOKED', 'revoked', { ...ctx, status: 403 }))).toBe(
      'stop_snapshot',
    );
    expect(
      failureAction(new RateLimitedError('slow down', { ...ctx, status: 429, retryAfterMs: 1000 })),
    ).toBe('hold_queue');
    expect(
      failureAction(
        new QuotaExceededError('daily quota', { ...ctx, status: 429, quota: 'daily', scope: 'api_key' }),
      ),
    ).toBe('wait_quota_reset');
    expect(failureAction(new ServerError('boom', { ...ctx, status: 500 }))).toBe('hold_on_outage');
    expect(failureAction(new TransportError('TRANSPORT_RESET', 'ECONNREFUSED', ctx))).toBe('hold_on_outage');
    expect(failureAction(new TransportError('TRANSPORT_TRUNCATED', 'short body', ctx))).toBe('retry');
    expect(failureAction(new TransportError('TRANSPORT_ABORTED', 'aborted', ctx))).toBe('fail');
    expect(failureAction(new OutputError('OUTPUT_FAILED', 'ENOSPC: /out'))).toBe('fail');
    // An unlisted status is retried under the 'retry' row only when the error itself is retryable.
    const teapot = new UnexpectedStatusError('418', { ...ctx, status: 418 });
    expect(failureAction(teapot)).toBe('retry');
    expect(teapot.retryable).toBe(false);
  });

  it('says whether a part is retried: the action decides, the error only for "only if transient" codes', () => {
    expect(retriedByPolicy(new ServerError('boom', { ...ctx, status: 500 }))).toBe(true);
    expect(retriedByPolicy(new TransportError('TRANSPORT_TRUNCATED', 'short', ctx))).toBe(true);
    expect(retriedByPolicy(new Error('socket hang up'))).toBe(true);
    expect(retriedByPolicy(new TransportError('TRANSPORT_ABORTED', 'aborted', ctx))).toBe(false);
    expect(retriedByPolicy(new NotFoundError('gone', { ...ctx, status: 404 }))).toBe(false);
    expect(retriedByPolicy(new UnexpectedStatusError('418', { ...ctx, status: 418 }))).toBe(false);
    expect(retriedByPolicy(new UnexpectedStatusError('502', { ...ctx, status: 502 }))).toBe(true);
    expect(retriedByPolicy(new StorageError('STORAGE_UNAVAILABLE', 'refused', false))).toBe(false);
    expect(retriedByPolicy(new StorageError('STORAGE_UNAVAILABLE', 'timed out', true))).toBe(true);
    // Only a retried action can depend on the error; the flag is meaningless elsewhere.
    for (const rule of Object.values(FAILURE_POLICY))
      if (rule.onlyIfTransient === true) expect(RETRIED_ACTIONS[rule.action]).toBe(true);
  });

  it('treats foreign errors and non-errors as INTERNAL (retried, attempts bound it)', () => {
    expect(failureAction(new Error('socket hang up'))).toBe('retry');
    expect(failureAction('a string')).toBe('retry');
    expect(FAILURE_POLICY.INTERNAL.action).toBe('retry');
  });

  it('every rule has a reason, and every action of the job appears in the table', () => {
    for (const rule of Object.values(FAILURE_POLICY)) expect(rule.why.length).toBeGreaterThan(3);
    const used = new Set(Object.values(FAILURE_POLICY).map((r) => r.action));
    // The actions are one declaration (the type is derived from it): the table uses each of them.
    expect([...used].sort()).toEqual(Object.keys(FAILURE_ACTIONS).sort());
  });

  it("the part job's switch has exactly one case per action, and ends in assertNever", async () => {
    // The compiler holds the switch to FailureAction (assertNever); this holds it to the list, so
    // a case added or dropped in the job, or an action added to the list, fails here too.
    const job = await readFile(new URL('../../jobs/export-part/on-failure.ts', import.meta.url), 'utf8');
    const start = job.indexOf('switch (action) {');
    expect(start, 'the switch over the failure action').toBeGreaterThan(0);
    const body = job.slice(start, job.indexOf("assertNever(action, 'failure action')", start));
    const cases = [...body.matchAll(/case '([a-z_]+)':/g)].map((m) => m[1]);
    expect(cases.sort()).toEqual(Object.keys(FAILURE_ACTIONS).sort());
  });

  it('docs/architecture.md shows the table exactly as the code has it (npm run docs:failures)', async () => {
    const doc = await readFile(FAILURE_DOC, 'utf8');
    expect(withPolicyTable(doc)).toBe(doc);
    for (const code of Object.keys(FAILURE_POLICY)) expect(renderFailurePolicy()).toContain(`\`${code}\``);
  });
});
