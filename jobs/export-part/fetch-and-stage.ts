/**
 * The second step of a part: exactly one request, under the budget, its rows streamed into the
 * part writer (staging). Returns the staged part's pointer, never the rows. A failed request is
 * counted here (once its answer is known) and rethrown for the failure step.
 */
import { ApiError, RequestValidationError, TransportError } from '../../src/errors.js';
import { statusClass } from '../../src/metrics/metrics.js';
import {
  CatalogFingerprint,
  CHANGE_DATASET,
  type EarlyConversion,
  failureAction,
  PieceAnnouncer,
  withBudget,
  type PartResponse,
  type PartWriter,
} from '../../src/pipeline/index.js';
import type { BoundPermit } from '../../src/budget/index.js';
import { RowText, type PartPointer } from '../../src/types.js';
import { apiAnswered, type PartAttempt } from './attempt.js';

/** Fetches the part under the budget and stages it; `note` becomes the pointer's message if it has none. */
export function fetchAndStage(
  a: PartAttempt,
  operation: string,
  note: string | undefined,
): Promise<PartPointer> {
  const { helpers: deps, payload: p } = a;
  return withBudget(
    deps.budget,
    {
      job: a.job,
      token: a.token,
      rateLimiter: deps.rateLimiter,
      operation,
      snapshotId: p.snapshotId,
      part: `${p.dataset}/${a.key}`,
      store: deps.record,
      label: a.label,
      // A part still waiting for its slot goes back to the queue when the worker shuts down.
      signal: waitSignal(a.signal, deps.closing),
      onWait: (reason) => deps.metrics?.budgetWaits.inc({ reason }),
    },
    async (permit) => {
      const fetchedAt = new Date(deps.clock.now()).toISOString();
      const res = await request(a, operation);
      try {
        return await stage(a, res, permit, operation, fetchedAt, note);
      } catch (err: unknown) {
        // Whatever failed after the headers (the writer, Redis), the body must not stay unread.
        await res.cancel();
        throw err;
      }
    },
  );
}

/** Sends the request; a failure is counted once its answer is known, then rethrown. */
async function request(a: PartAttempt, operation: string): Promise<PartResponse> {
  const { helpers: deps, payload: p } = a;
  const m = deps.metrics;
  try {
    return await deps.fetcher.fetch(p.dataset, p.company, a.signal);
  } catch (err: unknown) {
    // Counted once the answer is known; a request the client refused to send is not one.
    if (!(err instanceof RequestValidationError)) {
      const action = failureAction(err);
      m?.requests.inc({ operation, status_class: statusClass(errorStatus(err)) });
      if (action === 'hold_queue') m?.rateLimited.inc({ kind: 'rate' });
      if (action === 'wait_quota_reset') m?.rateLimited.inc({ kind: 'quota' });
      await deps.record.countRequest(p.snapshotId, {
        rateLimited: action === 'hold_queue' || action === 'wait_quota_reset',
      });
      // Any status but a 5xx is an answer: the API is there.
      if (action !== 'hold_on_outage' && action !== 'retry') await apiAnswered(a);
    }
    throw err;
  }
}

/** Counts the answered request, then streams its rows into a new part writer. */
async function stage(
  a: PartAttempt,
  res: PartResponse,
  permit: BoundPermit,
  operation: string,
  fetchedAt: string,
  note: string | undefined,
): Promise<PartPointer> {
  const { helpers: deps, payload: p } = a;
  deps.metrics?.requests.inc({ operation, status_class: statusClass(res.status) });
  await apiAnswered(a);
  await deps.record.countRequest(p.snapshotId, {});
  await permit.observe(res.rateLimit);
  const early = deps.earlyConversion;
  const writer = deps.staged.createWriter({
    root: p.outDir,
    snapshotId: p.snapshotId,
    dataset: p.dataset,
    ticker: a.key,
    fetchedAt,
    ...(early === undefined
      ? {}
      : { plan: { convertWhileStaging: early.pieceRows, parquetOnly: await parquetOnly(a) } }),
  });
  const fingerprint = p.dataset === CHANGE_DATASET ? new CatalogFingerprint() : undefined;
  const pieces = early === undefined ? undefined : pieceAnnouncer(a, early, writer);
  // Unparsed rows only when nothing reads a row's fields (the catalog fingerprint does).
  const pointer = await streamToWriter(
    (fingerprint === undefined ? res.compactRows : undefined) ?? res.rows,
    res.rawText?.bind(res),
    () => res.envelope(),
    writer,
    operation,
    a.base,
    fingerprint === undefined ? undefined : (row) => fingerprint.add(row),
    pieces === undefined ? undefined : () => pieces.poll(),
  );
  const queued = await pieces?.settle();
  if (queued) a.log.debug({ pieces: queued }, 'pieces queued while staging');
  const digest = fingerprint?.digest();
  if (digest !== undefined && digest !== null) pointer.fingerprint = digest;
  if (note !== undefined && pointer.message === undefined) pointer.message = note;
  return pointer;
}

/**
 * The snapshot publishes Parquet alone and the part was never staged. A part staged before (its
 * pointer done, its staged file gone: a publish that could not use its pieces removed it) is staged
 * whole this time, so that the retried publish can redo it.
 */
async function parquetOnly(a: PartAttempt): Promise<boolean> {
  const { record: store } = a.helpers;
  const formats = (await store.view(a.payload.snapshotId))?.spec.formats ?? [];
  if (formats.length !== 1 || formats[0] !== 'parquet') return false;
  return (await store.getPart(a.payload.snapshotId, a.payload.dataset, a.key))?.status !== 'done';
}

function pieceAnnouncer(
  a: PartAttempt,
  early: EarlyConversion,
  writer: PartWriter,
): PieceAnnouncer | undefined {
  const { payload: p } = a;
  // The staged part decides on pieces: none for a bucket's writer or a dataset converted whole.
  if (writer.pieceRows === undefined) return undefined;
  return new PieceAnnouncer({
    early,
    writer,
    snapshotId: p.snapshotId,
    outDir: p.outDir,
    dataset: p.dataset,
    logger: a.log,
  });
}

/** Rows between two looks at what the writer has on disk (a few per gzip member). */
const TICK_ROWS = 2048;

async function streamToWriter(
  rows: AsyncIterable<Record<string, unknown> | RowText>,
  rawText: ((row: Record<string, unknown>) => Uint8Array | undefined) | undefined,
  envelope: () => Promise<Record<string, unknown>>,
  writer: PartWriter,
  operation: string,
  base: Pick<PartPointer, 'dataset' | 'ticker'>,
  observe?: (row: Record<string, unknown>) => void,
  /** Called every TICK_ROWS rows (pieces to announce). */
  tick?: () => void,
): Promise<PartPointer> {
  try {
    let n = 0;
    for await (const row of rows) {
      // Awaited only under backpressure: a microtask per row is measurable at a million rows.
      if (row instanceof RowText) {
        const pending = writer.writeText(row);
        if (pending) await pending;
      } else {
        const pending = writer.write(row, rawText?.(row));
        if (pending) await pending;
        observe?.(row);
      }
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

/** Aborts when either signal does (the job's own: cancelled; the worker's: shutting down). */
function waitSignal(job: AbortSignal | undefined, closing: AbortSignal | undefined): AbortSignal | undefined {
  if (job === undefined) return closing;
  if (closing === undefined) return job;
  return AbortSignal.any([job, closing]);
}

/** The HTTP status an API error came with, if any. */
function errorStatus(err: unknown): number | undefined {
  return err instanceof ApiError ? err.status : undefined;
}
