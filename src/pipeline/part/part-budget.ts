/**
 * The budget inside a BullMQ part job processor: one child job = one API request. The budget
 * (src/budget) knows only the key: permits, response headers, the quota ledger. This glue maps its
 * decisions onto BullMQ's own mechanisms, per snapshot, so that waiting never spends an attempt:
 * - window spent / 429 hold → `rateLimiter.rateLimit(ms)` holds the whole queue (every worker
 *   process, every machine), then RateLimitError puts the job back at the head of the wait list;
 * - quota spent → `job.moveToDelayed(reset)` + DelayedError: the job sleeps until 00:00 UTC (or
 *   the 1st of next month) and resumes by itself;
 * - a job put back after per-minute 429s more than maxRateLimitRequeues times → UnrecoverableError.
 */
import { DelayedError, RateLimitError, UnrecoverableError } from 'bullmq';
import type { AcquireOutcome, BoundPermit, Budget } from '../../budget/index.js';
import {
  ApiError,
  QuotaExceededError,
  RateLimitedError,
  RequestValidationError,
  coerceError,
} from '../../errors.js';
import { assertNever } from '../../types.js';
import { failureAction } from './failure-policy.js';
import type { SnapshotStore } from '../record/index.js';

/** What withBudget needs of a BullMQ job (a bullmq `Job` satisfies it). */
export interface PartJobLike {
  id?: string | undefined;
  queueName: string;
  moveToDelayed(timestamp: number, token?: string): Promise<void>;
}

/** Something that holds the whole queue: the Worker, or a Queue of the same name. */
export interface RateLimiterLike {
  rateLimit(expireTimeMs: number): Promise<void>;
}

export interface PartJobContext {
  job: PartJobLike;
  /** The processor's second argument (BullMQ's lock token). */
  token: string | undefined;
  /** The Worker processing the job, or a Queue of the same name: holds every worker of the queue. */
  rateLimiter: RateLimiterLike;
  /** Operation path, e.g. `facts/full`. */
  operation: string;
  snapshotId: string;
  /** The part's key within its snapshot (`<dataset>/<company>`): its 429 put-backs are counted under it. */
  part: string;
  /** Where the snapshot's quota waits and put-back counts are kept. */
  store: Pick<SnapshotStore, 'recordQuotaWait' | 'countRequeue' | 'clearRequeues'>;
  /** Names the part in messages, e.g. `facts_full AAPL`. @defaultValue operation and job id */
  label?: string;
  /** The processor's abort signal: a pacing sleep ends early and the job goes back to the queue unsent. */
  signal?: AbortSignal | undefined;
  /** Told each time the part waits for the budget instead of sending (metrics). */
  onWait?: ((reason: 'pace' | 'window' | 'hold' | 'quota') => void) | undefined;
}

/** Longest pacing wait slept inside the processor; longer ones hold the queue instead. */
export const MAX_PACE_SLEEP_MS = 5000;

/**
 * Runs `send` (exactly one API request, plus writing its rows) inside the shared budget.
 * `send` receives the permit; it must call `permit.observe(result.rateLimit)` as soon as the
 * response headers are in. Errors of `send` other than 429s are rethrown unchanged after their
 * rate-limit headers were fed to the gate; BullMQ's control errors must reach BullMQ unwrapped.
 */
export async function withBudget<T>(
  budget: Budget,
  ctx: PartJobContext,
  send: (permit: BoundPermit) => Promise<T>,
): Promise<T> {
  const label = ctx.label ?? `${ctx.operation} (job ${ctx.job.id ?? '?'})`;
  let outcome = await budget.acquire(ctx.operation);
  // A pacing wait of up to a few seconds is slept here rather than by putting the job back, so
  // BullMQ's limiter counts one start per request; a longer one (low rates) holds the queue.
  while (outcome.kind === 'pace' && outcome.waitMs <= MAX_PACE_SLEEP_MS) {
    ctx.onWait?.('pace');
    if (!(await sleep(outcome.waitMs, ctx.signal))) await putBack(ctx, `${label}: put back unsent (aborted)`);
    outcome = await budget.acquire(ctx.operation);
  }
  if (outcome.kind !== 'granted') return await wait(budget, ctx, outcome);

  const permit = outcome.permit;
  const bound: BoundPermit = {
    ...permit,
    observe: (rateLimit) => budget.observe(permit, rateLimit, { succeeded: true }),
  };
  let result: T;
  try {
    result = await send(bound);
  } catch (thrown) {
    const err = coerceError(thrown);
    // The failure policy says which 429 is which; the budget records what the server said.
    const action = failureAction(err);
    if (action === 'hold_queue' && err instanceof RateLimitedError) {
      const hold = await budget.onRateLimited(permit, err);
      const n = await ctx.store.countRequeue(ctx.snapshotId, ctx.part);
      if (n > budget.config.maxRateLimitRequeues) {
        throw new UnrecoverableError(
          `${label}: rate limited (429) ${n} times, more than budget.max_rate_limit_requeues=${budget.config.maxRateLimitRequeues}; ` +
            `another client may be spending this key's limit: lower budget.share or budget.requests_per_minute`,
        );
      }
      await ctx.rateLimiter.rateLimit(hold.waitMs);
      throw new RateLimitError();
    }
    if (action === 'wait_quota_reset' && err instanceof QuotaExceededError) {
      const q = await budget.onQuotaExceeded(permit, err);
      return await wait(budget, ctx, { kind: 'quota', source: 'server', ...q });
    }
    if (err instanceof RequestValidationError) await budget.release(permit, { sent: false });
    else if (err instanceof ApiError) await budget.observe(permit, err.rateLimit);
    else await budget.release(permit);
    throw thrown;
  }
  await budget.release(permit);
  await ctx.store.clearRequeues(ctx.snapshotId, ctx.part);
  return result;
}

async function wait(
  budget: Budget,
  ctx: PartJobContext,
  outcome: Exclude<AcquireOutcome, { kind: 'granted' }>,
): Promise<never> {
  ctx.onWait?.(outcome.kind);
  switch (outcome.kind) {
    case 'pace':
    case 'window':
    case 'hold':
      // Holds the queue for everyone; the job goes back to the head of the wait list, no attempt spent.
      await ctx.rateLimiter.rateLimit(Math.max(1, Math.ceil(outcome.waitMs)));
      throw new RateLimitError();
    case 'quota': {
      await ctx.store.recordQuotaWait(ctx.snapshotId, outcome);
      // BullMQ delays run on real time; the budget's clock may be offset (tests), so convert.
      const delayMs = Math.max(0, outcome.untilMs - budget.clock.now()) + budget.config.safetyMarginMs;
      await ctx.job.moveToDelayed(Date.now() + delayMs, ctx.token);
      throw new DelayedError(outcome.message);
    }
    default:
      return assertNever(outcome, 'budget outcome');
  }
}

/**
 * Puts a job whose request was never sent back in the queue without spending an attempt (the
 * worker is shutting down). Not RateLimitError: BullMQ then waits out its limiter's window before
 * a closing worker finishes (up to 60 s); a job delayed until now closes at once.
 */
export async function putBack(ctx: Pick<PartJobContext, 'job' | 'token'>, message: string): Promise<never> {
  await ctx.job.moveToDelayed(Date.now(), ctx.token);
  throw new DelayedError(message);
}

/** Sleeps `ms`; false when `signal` aborted it first. */
function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = (ok: boolean): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      resolve(ok);
    };
    const onAbort = (): void => done(false);
    const timer = setTimeout(() => done(true), ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
