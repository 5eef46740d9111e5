/**
 * Job `export-part`: one part of a snapshot = one (company, dataset) = exactly one API request per
 * attempt. Streams the rows from the client into the part writer (staging) and returns a pointer
 * (file, rows, bytes, sha256), never the rows. Failure policy (interface section 7):
 *   404           -> part recorded not_found, the snapshot goes on
 *   400           -> part recorded bad_request, no retry
 *   401/403       -> the whole snapshot stops at once (no retries burned, siblings skip)
 *   5xx/transport -> thrown: BullMQ retries with exponential backoff + jitter up to `attempts`
 *   429           -> the budget puts the job back (rate) or delays it to the reset (quota), no attempt spent
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { DelayedError, RateLimitError, UnrecoverableError, WaitingChildrenError, type Job } from 'bullmq';
import { z } from 'zod';
import { putBack, withBudget, type Budget, type RateLimiterLike } from '../src/budget/index.js';
import {
  AuthenticationError,
  BadRequestError,
  ForbiddenError,
  NotFoundError,
  QuotaExceededError,
  RateLimitedError,
  RequestValidationError,
  TransportError,
  coerceError,
  errorCode,
  isRetryable,
} from '../src/errors.js';
import type { Logger } from '../src/log.js';
import { CIK_PATTERN_10, TICKER_PATTERN } from '../src/config/schema.js';
import { DATASET_SPECS } from '../src/pipeline/datasets.js';
import { SNAPSHOT_ID_PATTERN } from '../src/pipeline/ids.js';
import { parsePayload } from '../src/pipeline/payload.js';
import type { PartFetcher, PartResponse, PartWriter, PartWriterFactory } from '../src/pipeline/ports.js';
import type { SnapshotStore } from '../src/pipeline/snapshot-store.js';
import { companyKey } from '../src/pipeline/universe.js';
import { DATASETS, type Clock, type PartPointer } from '../src/types.js';

export const name = 'export-part';

const companySchema = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('ticker'),
    ticker: z.string().regex(TICKER_PATTERN, 'must be an upper-case ticker'),
  }),
  z.strictObject({ kind: z.literal('cik'), cik: z.string().regex(CIK_PATTERN_10, 'must be a 10-digit CIK') }),
]);

const payloadSchema = z.strictObject({
  v: z.literal(1, 'must be 1 (payload version)'),
  snapshotId: z.string().regex(SNAPSHOT_ID_PATTERN, 'must be a snapshot id'),
  snapshotDate: z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date YYYY-MM-DD'),
  dataset: z.enum(DATASETS, `must be one of ${DATASETS.join(', ')}`),
  company: companySchema,
  outDir: z.string().min(1, 'must be the output root'),
});

export type ExportPartPayload = z.infer<typeof payloadSchema>;

/** Checks the job data of an export-part job; throws an InputError naming the bad field. */
export function parseExportPartPayload(data: unknown): ExportPartPayload {
  return parsePayload(payloadSchema, data, name);
}

export interface ExportPartDeps {
  fetcher: PartFetcher;
  createWriter: PartWriterFactory;
  store: SnapshotStore;
  budget: Budget;
  /** Holds the whole parts queue on a 429 (a Queue of the parts queue, or the Worker). */
  rateLimiter: RateLimiterLike;
  /** Marks the snapshot stopped and removes its parts that have not started. */
  stopSnapshot(snapshotId: string, message: string, job: Job): Promise<void>;
  /**
   * Aborted when the worker starts shutting down: a part still waiting for its rate-limit slot
   * (a pacing sleep) goes back to the queue at once instead of sending its request. Requests
   * already sent are left to finish. @defaultValue none (only the job's own signal)
   */
  closing?: AbortSignal;
  clock: Clock;
  logger: Logger;
}

/** The part processor: `new Worker(partsQueue, createExportPartProcessor(deps), …)`. */
export function createExportPartProcessor(deps: ExportPartDeps) {
  const { store, logger } = deps;

  return async function processExportPart(
    job: Job,
    token?: string,
    signal?: AbortSignal,
  ): Promise<PartPointer> {
    let p: ExportPartPayload;
    try {
      p = parseExportPartPayload(job.data);
    } catch (err: unknown) {
      throw new UnrecoverableError(coerceError(err).message);
    }
    const key = companyKey(p.company);
    const label = `${p.dataset} ${key}`;
    const base = { dataset: p.dataset, ticker: key };
    const log = logger.child({ snapshot: p.snapshotId, part: label, attempt: job.attemptsMade + 1 });

    const state = await store.state(p.snapshotId);
    if (state === undefined)
      throw new UnrecoverableError(`snapshot ${p.snapshotId} has no record in Redis (expired or removed)`);
    if (state === 'stopped') {
      const pointer: PartPointer = {
        ...base,
        status: 'failed',
        rows: 0,
        bytes: 0,
        message: 'not fetched: the snapshot was stopped',
      };
      await store.recordPart(p.snapshotId, pointer);
      return pointer;
    }

    // A retried snapshot keeps what it already has: a finished part is not fetched again.
    const previous = await store.getPart(p.snapshotId, p.dataset, key);
    if (previous && (await stillValid(previous, p.outDir))) {
      log.debug('part already exported; reusing it');
      return previous;
    }

    const spec = DATASET_SPECS[p.dataset];
    try {
      const pointer = await withBudget(
        deps.budget,
        {
          job,
          token,
          rateLimiter: deps.rateLimiter,
          operation: spec.operation,
          snapshotId: p.snapshotId,
          label,
          // A part still waiting for its slot goes back to the queue when the worker shuts down.
          signal: waitSignal(signal, deps.closing),
        },
        async (permit) => {
          const fetchedAt = new Date(deps.clock.now()).toISOString();
          let res: PartResponse;
          try {
            res = await deps.fetcher.fetch(p.dataset, p.company, signal);
          } catch (err: unknown) {
            // Counted once the answer is known; a request the client refused to send is not one.
            if (!(err instanceof RequestValidationError))
              await store.countRequest(p.snapshotId, {
                rateLimited: err instanceof RateLimitedError || err instanceof QuotaExceededError,
              });
            throw err;
          }
          await store.countRequest(p.snapshotId, {});
          await permit.observe(res.rateLimit);
          const writer = deps.createWriter({
            root: p.outDir,
            snapshotId: p.snapshotId,
            dataset: p.dataset,
            ticker: key,
            fetchedAt,
          });
          return streamToWriter(res.rows, () => res.envelope(), writer, spec.operation, base);
        },
      );
      await store.recordPart(p.snapshotId, pointer);
      log.debug({ rows: pointer.rows, bytes: pointer.bytes }, 'part exported');
      return pointer;
    } catch (err: unknown) {
      const e = coerceError(err);
      if (isBullMqControl(e)) throw e;
      if (signal?.aborted === true) {
        // The worker is shutting down past its deadline: the request was cut by us, not by a fault.
        // Back to the queue without spending an attempt; another worker (or this one, restarted) runs it.
        log.warn(
          { reason: e.message },
          'part aborted: the worker is shutting down; it goes back to the queue',
        );
        return await putBack({ job, token }, `${label}: aborted, the worker is shutting down`);
      }
      if (e instanceof NotFoundError) {
        const pointer: PartPointer = { ...base, status: 'not_found', rows: 0, bytes: 0, message: e.message };
        await store.recordPart(p.snapshotId, pointer);
        log.warn({ reason: e.message }, 'company not found; part recorded as not_found');
        return pointer;
      }
      if (e instanceof BadRequestError || e instanceof RequestValidationError) {
        const pointer: PartPointer = {
          ...base,
          status: 'bad_request',
          rows: 0,
          bytes: 0,
          message: e.message,
        };
        await store.recordPart(p.snapshotId, pointer);
        log.error({ reason: e.message }, 'request refused as invalid; part recorded as bad_request');
        return pointer;
      }
      if (e instanceof AuthenticationError || e instanceof ForbiddenError) {
        // The client's message names the status and what to do (e.g. rotate the key).
        const message = e.message;
        await store.recordPart(p.snapshotId, { ...base, status: 'failed', rows: 0, bytes: 0, message });
        log.error({ reason: message }, 'the API refused the key; stopping the snapshot');
        await deps.stopSnapshot(p.snapshotId, message, job);
        throw new UnrecoverableError(`snapshot stopped: ${message}`);
      }
      const attempts = job.opts.attempts ?? 1;
      const retryable = isRetryable(e);
      if (!retryable || job.attemptsMade + 1 >= attempts) {
        const message = `${errorCode(e)}: ${e.message} (attempt ${job.attemptsMade + 1} of ${attempts})`;
        await store.recordPart(p.snapshotId, { ...base, status: 'failed', rows: 0, bytes: 0, message });
        log.error({ reason: message }, 'part failed');
        if (!retryable) throw new UnrecoverableError(message);
      } else {
        await store.countRetry(p.snapshotId);
        log.warn({ code: errorCode(e), reason: e.message }, 'part attempt failed; will retry');
      }
      throw e;
    }
  };
}

async function streamToWriter(
  rows: AsyncIterable<Record<string, unknown>>,
  envelope: () => Promise<Record<string, unknown>>,
  writer: PartWriter,
  operation: string,
  base: Pick<PartPointer, 'dataset' | 'ticker'>,
): Promise<PartPointer> {
  try {
    let n = 0;
    for await (const row of rows) {
      await writer.write(row);
      n++;
    }
    const env = await envelope();
    // The envelope's count is the server's own statement of how many rows it sent.
    if (typeof env.count === 'number' && env.count !== n)
      throw new TransportError(
        'TRANSPORT_TRUNCATED',
        `${operation}: envelope count ${env.count} but ${n} rows received`,
        {
          operation,
        },
      );
    const staged = await writer.finish();
    const pointer: PartPointer = {
      ...base,
      status: 'done',
      file: staged.file,
      rows: staged.rows,
      bytes: staged.bytes,
      sha256: staged.sha256,
    };
    if (env.truncated === true)
      pointer.message = `the API capped this answer: ${n} of ${String(env.total_available ?? '?')} rows (${operation} returns at most 500 rows per company)`;
    return pointer;
  } catch (err: unknown) {
    await writer.abort();
    throw err;
  }
}

/** A recorded part that needs no new request: definitive answers, or a done part whose file is intact. */
async function stillValid(prev: PartPointer, outDir: string): Promise<boolean> {
  if (prev.status === 'not_found' || prev.status === 'bad_request') return true;
  if (prev.status !== 'done' || !prev.file) return false;
  try {
    return (await stat(join(outDir, prev.file))).size === prev.bytes;
  } catch {
    return false;
  }
}

/** Aborts when either signal does (the job's own: cancelled; the worker's: shutting down). */
function waitSignal(job: AbortSignal | undefined, closing: AbortSignal | undefined): AbortSignal | undefined {
  if (job === undefined) return closing;
  if (closing === undefined) return job;
  return AbortSignal.any([job, closing]);
}

function isBullMqControl(e: Error): boolean {
  return (
    e instanceof RateLimitError ||
    e instanceof DelayedError ||
    e instanceof UnrecoverableError ||
    e instanceof WaitingChildrenError
  );
}
