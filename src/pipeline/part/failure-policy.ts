/**
 * The failure policy of a part, as data: one row per error code, the one source of what a part
 * does when its request or its writing fails. jobs/export-part.ts and the part budget act on
 * `failureAction(err)`; docs/architecture.md's "Failures" table is rendered from FAILURE_POLICY
 * (`npm run docs:failures`) and a test keeps the two equal.
 */
import { errorCode, isRetryable, type ErrorCode } from '../../errors.js';

/**
 * What a part does with a failure, each with its meaning: the one list of actions. The type below
 * is derived from it, so adding an action means adding a case to every switch over FailureAction
 * (jobs/export-part.ts ends its switch with assertNever), and a test checks the table uses each.
 */
export const FAILURE_ACTIONS = {
  record_not_found:
    'The company is unknown to the API: the part completes as `not_found`, the snapshot goes on.',
  record_bad_request:
    'The API (or the client, before sending) refused the request as invalid: part `bad_request`.',
  stop_snapshot:
    'The key is refused: no part can succeed, so the snapshot stops and unstarted parts are removed.',
  hold_queue:
    'Per-minute 429: the whole parts queue waits out Retry-After; the job goes back, no attempt spent.',
  wait_quota_reset: 'Quota 429 (daily/monthly): the job is delayed until the quota resets, no attempt spent.',
  hold_on_outage:
    'Transient and possibly global (the API is away): retried per part, but several in a row across parts hold the whole queue and probe until the API answers (src/pipeline/record/outage.ts).',
  retry:
    'Transient: BullMQ retries with backoff while attempts remain (for a code marked "only if transient", only when the error says so).',
  fail: 'Permanent: the part fails at once, no further attempt.',
} as const;

export type FailureAction = keyof typeof FAILURE_ACTIONS;

/**
 * Whether a part is attempted again after the action (while attempts remain). The holds and
 * delays of 429s and outages are done by the part budget and the outage guard; one reaching the
 * part job's failure step is retried like any transient fault.
 */
export const RETRIED_ACTIONS: Readonly<Record<FailureAction, boolean>> = {
  record_not_found: false,
  record_bad_request: false,
  stop_snapshot: false,
  hold_queue: true,
  wait_quota_reset: true,
  hold_on_outage: true,
  retry: true,
  fail: false,
};

export interface FailureRule {
  action: FailureAction;
  /** Why, in a few words (rendered into the docs). */
  why: string;
  /**
   * Retried only when the error says this occurrence is transient (its `retryable`: a 5xx among
   * unlisted statuses, a storage fault that is not a refusal), for codes that cover both.
   * @defaultValue false: the action alone decides
   */
  onlyIfTransient?: true;
}

/** Every error code of src/errors.ts maps to exactly one rule (the type makes a missing code a compile error). */
export const FAILURE_POLICY: Readonly<Record<ErrorCode, FailureRule>> = {
  API_NOT_FOUND: { action: 'record_not_found', why: '404: the company is not in the API' },
  API_BAD_REQUEST: { action: 'record_bad_request', why: '400: the same request fails again' },
  REQUEST_INVALID: { action: 'record_bad_request', why: 'refused by the client before sending' },
  API_KEY_REQUIRED: { action: 'stop_snapshot', why: '401: no part can succeed' },
  API_KEY_INVALID: { action: 'stop_snapshot', why: '401: no part can succeed' },
  API_ACCOUNT_DISABLED: { action: 'stop_snapshot', why: '403: no part can succeed' },
  API_KEY_REVOKED: { action: 'stop_snapshot', why: '403: no part can succeed' },
  API_KEY_DISABLED: { action: 'stop_snapshot', why: '403: no part can succeed' },
  API_KEY_EXPIRED: { action: 'stop_snapshot', why: '403: no part can succeed' },
  API_NOT_ENTITLED: { action: 'stop_snapshot', why: '403: the key lacks the operation' },
  API_FORBIDDEN: { action: 'stop_snapshot', why: '403: no part can succeed' },
  API_RATE_LIMITED: { action: 'hold_queue', why: 'per-minute 429: wait Retry-After' },
  API_QUOTA_EXCEEDED: { action: 'wait_quota_reset', why: 'quota 429: only the reset helps' },
  BUDGET_EXHAUSTED: { action: 'wait_quota_reset', why: 'the configured quota is spent' },
  API_SERVER_ERROR: { action: 'hold_on_outage', why: '500/5xx: transient, or the API is down' },
  API_UNAVAILABLE: { action: 'hold_on_outage', why: '503: transient, or the API is down' },
  API_UNEXPECTED_STATUS: {
    action: 'retry',
    why: 'unlisted status: retried only when 5xx',
    onlyIfTransient: true,
  },
  TRANSPORT_TIMEOUT: { action: 'hold_on_outage', why: 'no answer in time' },
  TRANSPORT_RESET: { action: 'hold_on_outage', why: 'connection refused or reset, DNS failure' },
  TRANSPORT_TRUNCATED: { action: 'retry', why: 'body ended early or count mismatch' },
  TRANSPORT_MALFORMED: { action: 'retry', why: 'body not the documented JSON' },
  INTERNAL: { action: 'retry', why: 'unknown error: retried, attempts bound it' },
  REDIS_UNAVAILABLE: { action: 'retry', why: 'Redis away: BullMQ waits for it' },
  STORAGE_UNAVAILABLE: {
    action: 'retry',
    why: 'the bucket did not take the object after the SDK retries; a refusal (credentials, no bucket) is not retried',
    onlyIfTransient: true,
  },
  STORAGE_NOT_FOUND: { action: 'fail', why: 'an object the snapshot needs is missing' },
  TRANSPORT_ABORTED: { action: 'fail', why: 'aborted by us: retrying ignores that' },
  CONFIG_INVALID: { action: 'fail', why: 'fix the configuration' },
  INPUT_INVALID: { action: 'fail', why: 'fix the input (payload, ticker)' },
  DATA_INVALID: { action: 'fail', why: 'the data breaks an invariant' },
  PLAN_DOES_NOT_FIT: { action: 'fail', why: 'the plan cannot fit the quota' },
  SNAPSHOT_STOPPED: { action: 'fail', why: 'the snapshot was stopped' },
  OUTPUT_FAILED: { action: 'fail', why: 'local output fault (path named)' },
  REUSE_SOURCE_CHANGED: {
    action: 'fail',
    why: 'a reused published file went missing or changed: run --retry decides its parts again',
  },
  VERIFY_FAILED: { action: 'fail', why: 'written files do not match' },
  ICEBERG_COMMIT_FAILED: {
    action: 'retry',
    why: 'an Iceberg table commit failed (the snapshot stays published): retried when its cause is transient',
    onlyIfTransient: true,
  },
  WAREHOUSE_UNAVAILABLE: { action: 'retry', why: 'the warehouse is unreachable or another load holds it' },
  WAREHOUSE_REFUSED: { action: 'fail', why: 'the warehouse refused the login or a table no longer fits' },
  WAREHOUSE_SHRINK_REFUSED: {
    action: 'fail',
    why: 'the load would empty a table or remove most of its companies: load --allow-shrink decides',
  },
};

/** The rule for any thrown value; foreign errors count as INTERNAL. */
export function failureRule(err: unknown): FailureRule {
  return FAILURE_POLICY[errorCode(err)];
}

/** The action for any thrown value. */
export function failureAction(err: unknown): FailureAction {
  return failureRule(err).action;
}

/**
 * Whether the part job attempts a part again after this error (attempts allowing): the action's
 * row of RETRIED_ACTIONS, and for an `onlyIfTransient` code also the error's own `retryable`.
 */
export function retriedByPolicy(err: unknown): boolean {
  const rule = failureRule(err);
  if (!RETRIED_ACTIONS[rule.action]) return false;
  return rule.onlyIfTransient !== true || isRetryable(err);
}

/** The policy as a Markdown table, grouped by action (docs/architecture.md, "Failures"). */
export function renderFailurePolicy(): string {
  const byAction = new Map<FailureAction, string[]>();
  for (const [code, rule] of Object.entries(FAILURE_POLICY) as [ErrorCode, FailureRule][]) {
    const list = byAction.get(rule.action) ?? [];
    list.push(`\`${code}\` (${rule.why})`);
    byAction.set(rule.action, list);
  }
  const lines = ['| action | error codes |', '|---|---|'];
  for (const [action, codes] of byAction) lines.push(`| \`${action}\` | ${codes.join('; ')} |`);
  return lines.join('\n');
}
