/**
 * The last step of a part whose fetch or staging threw: the failure policy's action for the
 * error (src/pipeline/part/failure-policy.ts), one small function per action. BullMQ's own control
 * errors pass through, and a part cut by the worker's shutdown goes back unspent.
 */
import { DelayedError, RateLimitError, UnrecoverableError, WaitingChildrenError } from 'bullmq';
import { coerceError, errorCode } from '../../src/errors.js';
import { failureAction, putBack, retriedByPolicy } from '../../src/pipeline/index.js';
import { assertNever, type PartPointer } from '../../src/types.js';
import { holdForOutage, recordEnded, type PartAttempt } from './attempt.js';

/** Acts on what the fetch step threw: records, holds, retries or fails the part, per the policy. */
export async function actOnFailure(
  attempt: PartAttempt,
  err: unknown,
  timed: () => void,
): Promise<PartPointer> {
  const e = coerceError(err);
  if (isBullMqControl(e)) throw e;
  if (attempt.signal?.aborted === true) {
    // The worker is shutting down past its deadline: the request was cut by us, not by a fault.
    // Back to the queue without spending an attempt; another worker (or this one, restarted) runs it.
    attempt.log.warn(
      { reason: e.message },
      'part aborted: the worker is shutting down; it goes back to the queue',
    );
    return await putBack(
      { job: attempt.job, token: attempt.token },
      `${attempt.label}: aborted, the worker is shutting down`,
    );
  }
  timed();
  const action = failureAction(e);
  switch (action) {
    case 'record_not_found':
      return recordNotFound(attempt, e);
    case 'record_bad_request':
      return recordBadRequest(attempt, e);
    case 'stop_snapshot':
      return stopSnapshot(attempt, e);
    case 'hold_on_outage':
      return holdOnOutage(attempt, e);
    // withBudget turns 429s into BullMQ holds and delays; one reaching here escaped it
    // (e.g. thrown after the budget released the permit): retried like a transient fault.
    case 'hold_queue':
    case 'wait_quota_reset':
    case 'retry':
    case 'fail':
      return retryOrFail(attempt, e);
    default:
      return assertNever(action, 'failure action');
  }
}

/** 404: the part completes as `not_found`, the snapshot goes on. */
export function recordNotFound(attempt: PartAttempt, e: Error): Promise<PartPointer> {
  attempt.log.warn({ reason: e.message }, 'company not found; part recorded as not_found');
  return recordEnded(attempt, 'not_found', e.message);
}

/** 400 (or refused by the client before sending): the part completes as `bad_request`. */
export function recordBadRequest(attempt: PartAttempt, e: Error): Promise<PartPointer> {
  attempt.log.error({ reason: e.message }, 'request refused as invalid; part recorded as bad_request');
  return recordEnded(attempt, 'bad_request', e.message);
}

/** The key is refused: the part fails and the whole snapshot stops. */
export async function stopSnapshot(attempt: PartAttempt, e: Error): Promise<never> {
  // The client's message names the status and what to do (e.g. rotate the key).
  await recordEnded(attempt, 'failed', e.message);
  attempt.log.error({ reason: e.message }, 'the API refused the key; stopping the snapshot');
  await attempt.helpers.stopSnapshot(attempt.payload.snapshotId, e.message, attempt.job);
  throw new UnrecoverableError(`snapshot stopped: ${e.message}`);
}

/** Several parts in a row failing so means the API is away: hold, keep the attempt; else retry. */
export async function holdOnOutage(attempt: PartAttempt, e: Error): Promise<never> {
  const verdict = await attempt.helpers.outage.failed(
    `${attempt.payload.dataset}/${attempt.key}`,
    `${errorCode(e)}: ${e.message}`,
  );
  if (verdict.kind === 'outage') {
    attempt.log.warn(
      { reason: e.message, since: new Date(verdict.since).toISOString() },
      'API unreachable: the parts queue holds until the next probe',
    );
    return holdForOutage(attempt, verdict.nextProbeMs);
  }
  return retryOrFail(attempt, e);
}

/**
 * Retries while the policy retries this error and attempts remain (BullMQ's backoff); otherwise
 * records the part failed, and an error the policy never retries spends no further attempt.
 */
export async function retryOrFail(attempt: PartAttempt, e: Error): Promise<never> {
  const { job, payload, log } = attempt;
  const attempts = job.opts.attempts ?? 1;
  const retried = retriedByPolicy(e);
  if (!retried || job.attemptsMade + 1 >= attempts) {
    const message = `${errorCode(e)}: ${e.message} (attempt ${job.attemptsMade + 1} of ${attempts})`;
    await recordEnded(attempt, 'failed', message);
    log.error({ reason: message }, 'part failed');
    if (!retried) throw new UnrecoverableError(message);
  } else {
    await attempt.helpers.record.countRetry(payload.snapshotId);
    attempt.helpers.metrics?.retries.inc({ dataset: payload.dataset });
    log.warn({ code: errorCode(e), reason: e.message }, 'part attempt failed; will retry');
  }
  throw e;
}

function isBullMqControl(e: Error): boolean {
  return (
    e instanceof RateLimitError ||
    e instanceof DelayedError ||
    e instanceof UnrecoverableError ||
    e instanceof WaitingChildrenError
  );
}
