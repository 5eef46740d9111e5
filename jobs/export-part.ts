/**
 * Job `export-part`: one part of a snapshot = one (company, dataset) = exactly one API request per
 * attempt. Streams the rows from the client into the part writer (staging) and returns a pointer
 * (file, rows, bytes, sha256), never the rows. What a failure does is the failure policy's row for
 * its error code (src/pipeline/failure-policy.ts, rendered in docs/architecture.md "Failures").
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { DelayedError, RateLimitError, UnrecoverableError, WaitingChildrenError, type Job } from 'bullmq';
import {
  ApiError,
  RequestValidationError,
  TransportError,
  coerceError,
  errorCode,
  isRetryable,
} from '../src/errors.js';
import { statusClass } from '../src/metrics/metrics.js';
import { baseSchema, datasetDefinition } from '../src/datasets/index.js';
import { failureAction } from '../src/pipeline/failure-policy.js';
import {
  EXPORT_PART_JOB,
  parseExportPartPayload,
  type ExportPartPayload,
} from '../src/pipeline/job-payloads.js';
import type { ExportPartDeps, ExportPartProcessor } from '../src/pipeline/job-processors.js';
import { putBack, withBudget } from '../src/pipeline/part-budget.js';
import type { PartResponse, PartWriter, ReusePorts } from '../src/pipeline/ports.js';
import { companyKey } from '../src/pipeline/universe.js';
import { SegmentAnnouncer } from '../src/pipeline/segment-announcer.js';
import { CatalogFingerprint } from '../src/pipeline/catalog-fingerprint.js';
import { CHANGE_DATASET, decideReuse } from '../src/pipeline/reuse-decision.js';
import { stagedPartRelPath, toPosix } from '../src/output/paths.js';
import { isAbsent, retryRead } from '../src/output/storage/read-retry.js';
import { assertNever, type PartPointer } from '../src/types.js';

export { EXPORT_PART_JOB, parseExportPartPayload, type ExportPartPayload, type ExportPartDeps };

/** The part processor: `new Worker(partsQueue, createExportPartProcessor(deps), …)`. */
export function createExportPartProcessor(deps: ExportPartDeps): ExportPartProcessor {
  const { store, logger } = deps;
  const answered = async (): Promise<void> => {
    const lasted = await deps.outage.answered();
    if (lasted !== null) logger.info({ outageMs: lasted }, 'API reachable again; the parts queue resumes');
  };

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
    if (previous && (await stillValid(previous, p.outDir, deps.stagedBytes))) {
      log.debug('part already exported; reusing it');
      return previous;
    }

    const spec = datasetDefinition(p.dataset);
    const m = deps.metrics;
    // Incremental night: an unchanged company's part is carried over instead of fetched.
    let fetchNote: string | undefined;
    if (p.reuse !== undefined && deps.reuse !== undefined && p.dataset !== CHANGE_DATASET) {
      const outcome = await carryOver(deps.reuse, p, key, store);
      if (outcome.kind === 'wait') {
        // The company's catalog part has not ended: back in a second, without spending an attempt.
        await job.moveToDelayed(Date.now() + CATALOG_WAIT_MS, token);
        throw new DelayedError(`${label}: waiting for the ${CHANGE_DATASET} part of ${key}`);
      }
      if (outcome.kind === 'reused') {
        await store.recordPart(p.snapshotId, outcome.pointer);
        m?.parts.inc({ dataset: p.dataset, outcome: 'reused' });
        log.debug({ from: p.reuse.from, rows: outcome.pointer.rows }, 'part carried over');
        return outcome.pointer;
      }
      fetchNote = outcome.note;
    }
    /** Records the part's result in the snapshot (status, counts) and in the metrics. */
    const record = async (pointer: PartPointer): Promise<PartPointer> => {
      await store.recordPart(p.snapshotId, pointer);
      m?.parts.inc({ dataset: p.dataset, outcome: pointer.status });
      if (pointer.status === 'done') {
        m?.rows.inc({ dataset: p.dataset }, pointer.rows);
        m?.bytes.inc({ dataset: p.dataset }, pointer.bytes);
      }
      return pointer;
    };
    const holdForOutage = async (untilMs: number): Promise<never> => {
      m?.outageHolds.inc();
      await deps.rateLimiter.rateLimit(Math.max(1, untilMs - deps.clock.now()));
      throw new RateLimitError();
    };
    // During an API outage the queue holds; one part at a time is let through as the probe.
    const gate = await deps.outage.gate();
    switch (gate.kind) {
      case 'open':
      case 'probe':
        break;
      case 'hold':
        return holdForOutage(gate.untilMs);
      case 'expired': {
        const message =
          `API unreachable since ${new Date(gate.since).toISOString()}, longer than ` +
          `retry.outage_max_ms=${deps.maxOutageMs} ms (${gate.lastError}); not fetched. ` +
          `Resume with: filings-export run --snapshot-id ${p.snapshotId} --retry`;
        await record({ ...base, status: 'failed', rows: 0, bytes: 0, message });
        throw new UnrecoverableError(message);
      }
      default:
        return assertNever(gate, 'outage gate');
    }
    const startedAt = performance.now();
    const timed = (): void =>
      m?.partDuration.observe({ dataset: p.dataset }, (performance.now() - startedAt) / 1000);
    try {
      const pointer = await withBudget(
        deps.budget,
        {
          job,
          token,
          rateLimiter: deps.rateLimiter,
          operation: spec.operation,
          snapshotId: p.snapshotId,
          part: `${p.dataset}/${key}`,
          store,
          label,
          // A part still waiting for its slot goes back to the queue when the worker shuts down.
          signal: waitSignal(signal, deps.closing),
          onWait: (reason) => m?.budgetWaits.inc({ reason }),
        },
        async (permit) => {
          const fetchedAt = new Date(deps.clock.now()).toISOString();
          let res: PartResponse;
          try {
            res = await deps.fetcher.fetch(p.dataset, p.company, signal);
          } catch (err: unknown) {
            // Counted once the answer is known; a request the client refused to send is not one.
            if (!(err instanceof RequestValidationError)) {
              const action = failureAction(err);
              m?.requests.inc({ operation: spec.operation, status_class: statusClass(errorStatus(err)) });
              if (action === 'hold_queue') m?.rateLimited.inc({ kind: 'rate' });
              if (action === 'wait_quota_reset') m?.rateLimited.inc({ kind: 'quota' });
              await store.countRequest(p.snapshotId, {
                rateLimited: action === 'hold_queue' || action === 'wait_quota_reset',
              });
              // Any status but a 5xx is an answer: the API is there.
              if (action !== 'hold_on_outage' && action !== 'retry') await answered();
            }
            throw err;
          }
          try {
            m?.requests.inc({ operation: spec.operation, status_class: statusClass(res.status) });
            await answered();
            await store.countRequest(p.snapshotId, {});
            await permit.observe(res.rateLimit);
            const writer = deps.createWriter({
              root: p.outDir,
              snapshotId: p.snapshotId,
              dataset: p.dataset,
              ticker: key,
              fetchedAt,
            });
            const fingerprint = p.dataset === CHANGE_DATASET ? new CatalogFingerprint() : undefined;
            // Big parts of fixed-schema datasets are converted in segments while they are staged.
            const segments =
              deps.earlyConversion !== undefined &&
              writer.written !== undefined &&
              !baseSchema(p.dataset).inferred
                ? new SegmentAnnouncer({
                    early: deps.earlyConversion,
                    writer,
                    snapshotId: p.snapshotId,
                    outDir: p.outDir,
                    dataset: p.dataset,
                    logger: log,
                  })
                : undefined;
            const pointer = await streamToWriter(
              res.rows,
              res.rawText?.bind(res),
              () => res.envelope(),
              writer,
              spec.operation,
              base,
              fingerprint === undefined ? undefined : (row) => fingerprint.add(row),
              segments === undefined ? undefined : () => segments.poll(),
            );
            const queued = await segments?.settle();
            if (queued) log.debug({ segments: queued }, 'segments queued while staging');
            const digest = fingerprint?.digest();
            if (digest !== undefined && digest !== null) pointer.fingerprint = digest;
            if (fetchNote !== undefined && pointer.message === undefined) pointer.message = fetchNote;
            return pointer;
          } catch (err: unknown) {
            // Whatever failed after the headers (the writer, Redis), the body must not stay unread.
            await res.cancel();
            throw err;
          }
        },
      );
      timed();
      await record(pointer);
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
      timed();
      const action = failureAction(e);
      if (action === 'hold_on_outage') {
        // Several parts in a row failing so means the API is away: hold, keep the attempt.
        const verdict = await deps.outage.failed(`${p.dataset}/${key}`, `${errorCode(e)}: ${e.message}`);
        if (verdict.kind === 'outage') {
          log.warn(
            { reason: e.message, since: new Date(verdict.since).toISOString() },
            'API unreachable: the parts queue holds until the next probe',
          );
          return holdForOutage(verdict.nextProbeMs);
        }
      }
      /** A part that ends without a file: failed, or an answer that is final (404, 400). */
      const ended = async (
        status: 'failed' | 'not_found' | 'bad_request',
        message: string,
      ): Promise<PartPointer> => record({ ...base, status, rows: 0, bytes: 0, message });
      const failed = (message: string): Promise<PartPointer> => ended('failed', message);
      switch (action) {
        case 'record_not_found': {
          log.warn({ reason: e.message }, 'company not found; part recorded as not_found');
          return ended('not_found', e.message);
        }
        case 'record_bad_request': {
          log.error({ reason: e.message }, 'request refused as invalid; part recorded as bad_request');
          return ended('bad_request', e.message);
        }
        case 'stop_snapshot': {
          // The client's message names the status and what to do (e.g. rotate the key).
          await failed(e.message);
          log.error({ reason: e.message }, 'the API refused the key; stopping the snapshot');
          await deps.stopSnapshot(p.snapshotId, e.message, job);
          throw new UnrecoverableError(`snapshot stopped: ${e.message}`);
        }
        // withBudget turns 429s into BullMQ holds and delays; one reaching here escaped it
        // (e.g. thrown after the budget released the permit): retried like a transient fault.
        case 'hold_queue':
        case 'wait_quota_reset':
        case 'hold_on_outage':
        case 'retry':
        case 'fail': {
          const attempts = job.opts.attempts ?? 1;
          const retryable = action !== 'fail' && isRetryable(e);
          if (!retryable || job.attemptsMade + 1 >= attempts) {
            const message = `${errorCode(e)}: ${e.message} (attempt ${job.attemptsMade + 1} of ${attempts})`;
            await failed(message);
            log.error({ reason: message }, 'part failed');
            if (!retryable) throw new UnrecoverableError(message);
          } else {
            await store.countRetry(p.snapshotId);
            m?.retries.inc({ dataset: p.dataset });
            log.warn({ code: errorCode(e), reason: e.message }, 'part attempt failed; will retry');
          }
          throw e;
        }
        default:
          return assertNever(action, 'failure action');
      }
    }
  };
}

/** Rows between two looks at what the writer has on disk (a few per gzip member). */
const TICK_ROWS = 2048;

async function streamToWriter(
  rows: AsyncIterable<Record<string, unknown>>,
  rawText: ((row: Record<string, unknown>) => Uint8Array | undefined) | undefined,
  envelope: () => Promise<Record<string, unknown>>,
  writer: PartWriter,
  operation: string,
  base: Pick<PartPointer, 'dataset' | 'ticker'>,
  observe?: (row: Record<string, unknown>) => void,
  /** Called every TICK_ROWS rows (segments to announce). */
  tick?: () => void,
): Promise<PartPointer> {
  try {
    let n = 0;
    for await (const row of rows) {
      // Awaited only under backpressure: a microtask per row is measurable at a million rows.
      const pending = writer.write(row, rawText?.(row));
      if (pending) await pending;
      observe?.(row);
      n++;
      if (tick !== undefined && n % TICK_ROWS === 0) tick();
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

/** How long a part waits for its company's catalog part before it looks again. */
const CATALOG_WAIT_MS = 1000;

type CarryOutcome =
  { kind: 'wait' } | { kind: 'reused'; pointer: PartPointer } | { kind: 'fetch'; note?: string };

/**
 * Decides (reuse-decision.ts) and, for an unchanged company, copies the previous snapshot's archived
 * part into this snapshot's staging. A previous snapshot that cannot be read, or an archive that is
 * missing or fails its checksum, means a fetch, and the part's message says why.
 */
async function carryOver(
  reuse: ReusePorts,
  p: ExportPartPayload,
  key: string,
  store: ExportPartDeps['store'],
): Promise<CarryOutcome> {
  const from = p.reuse!.from;
  let previous;
  try {
    previous = await reuse.previousManifest(p.outDir, from);
  } catch (err: unknown) {
    return {
      kind: 'fetch',
      note: `fetched: previous snapshot ${from} cannot be read (${coerceError(err).message})`,
    };
  }
  const catalog = await store.getPart(p.snapshotId, CHANGE_DATASET, key);
  const decision = decideReuse(p.dataset, key, catalog, previous);
  switch (decision.kind) {
    case 'wait':
      return decision;
    case 'fetch':
      return { kind: 'fetch' };
    case 'reuse': {
      const prev = decision.previous;
      const pointer: PartPointer = {
        dataset: p.dataset,
        ticker: key,
        status: 'done',
        rows: prev.rows,
        bytes: 0,
        reusedFrom: from,
      };
      if (prev.rows === 0) return { kind: 'reused', pointer };
      const to = toPosix(stagedPartRelPath(p.snapshotId, p.dataset, key));
      const copied = await reuse.carryOver(p.outDir, {
        archive: prev.archive!,
        bytes: prev.bytes!,
        sha256: prev.sha256!,
        to,
      });
      if (!copied.ok) return { kind: 'fetch', note: `fetched, not reused: ${copied.reason}` };
      return { kind: 'reused', pointer: { ...pointer, file: to, bytes: prev.bytes!, sha256: prev.sha256! } };
    }
    default:
      return assertNever(decision, 'reuse decision');
  }
}

/** A recorded part that needs no new request: definitive answers, or a done part whose file is intact. */
async function stillValid(
  prev: PartPointer,
  outDir: string,
  stagedBytes: ExportPartDeps['stagedBytes'],
): Promise<boolean> {
  if (prev.status === 'not_found' || prev.status === 'bad_request') return true;
  if (prev.status !== 'done' || !prev.file) return false;
  // A file that is gone is fetched again; one that cannot be read fails this attempt with its cause.
  if (stagedBytes) return (await stagedBytes(outDir, prev.file)) === prev.bytes;
  const path = join(outDir, prev.file);
  try {
    return (await retryRead(path, () => stat(path))).size === prev.bytes;
  } catch (err: unknown) {
    if (isAbsent(err)) return false;
    throw err;
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

/** The HTTP status an API error came with, if any. */
function errorStatus(err: unknown): number | undefined {
  return err instanceof ApiError ? err.status : undefined;
}
