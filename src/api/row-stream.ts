/**
 * A large response as an async iterable of rows plus its envelope fields, parsed incrementally from
 * the byte stream (row-extractor.ts). Memory per received chunk: the chunk, the row in progress
 * carried over from the previous one, and one batch of parsed rows (MAX_BATCH_BYTES of row text,
 * row-splitter/) at a time.
 */
import { TransportError } from '../errors.js';
import { RowText, type RateLimitState } from '../types.js';
import type { CompactBatch } from './compact-rows.js';
import { transportError } from './error-map.js';
import { createRowExtractor, ExtractError, type Row, type RowExtractor } from './row-extractor.js';
import type { RowSplitterOptions } from './row-splitter/index.js';
import { bodyFailure, discardBody, type RawResponse } from './transport.js';

export interface RowStream {
  /** The rows, in response order. Iterate once; breaking out early cancels the response. */
  readonly rows: AsyncIterable<Record<string, unknown>>;
  /**
   * The same rows, for a consumer that needs only each row's text and field kinds: the rows of
   * the batches the compact scanner proves come as RowText (never parsed), the others as `rows`
   * gives them (their text from rawText()). Only with the `rawText` call option (without it, all
   * rows are parsed). Iterate either this or `rows`, once.
   */
  readonly compactRows: AsyncIterable<Record<string, unknown> | RowText>;
  /**
   * Envelope fields without `rows` (scope, ticker, cik, count, truncated, …). Resolves once the
   * rows have been consumed to the end; rejects with the stream's error if it failed or was cancelled.
   */
  envelope(): Promise<Record<string, unknown>>;
  readonly status: number;
  readonly rateLimit: RateLimitState;
  /** Body bytes received so far. */
  readonly bytesRead: number;
  /** Rows handed out so far. */
  readonly rowsRead: number;
  /** Stops reading and releases the connection; pending envelope() rejects with TRANSPORT_ABORTED. */
  cancel(): Promise<void>;
  /**
   * A row's own JSON text as received (`{…}`, UTF-8) when it says exactly what JSON.stringify(row)
   * would, for the row just handed out (or another of its batch) not changed since; undefined
   * otherwise, for rows of earlier batches, and always without the `rawText` call option. Lets a
   * writer copy the bytes instead of serialising the row again. The bytes are a view of the
   * received body, valid until the next row is asked for: copy them before that.
   */
  rawText(row: Record<string, unknown>): Uint8Array | undefined;
}

export class BodyRowStream implements RowStream {
  readonly rows: AsyncIterable<Row>;
  readonly compactRows: AsyncIterable<Row | RowText>;
  readonly status: number;
  readonly rateLimit: RateLimitState;
  private bytes = 0;
  private count = 0;
  private started = false;
  private settled = false;
  private readonly envelopePromise: Promise<Row>;
  private resolveEnvelope!: (env: Row) => void;
  private rejectEnvelope!: (err: Error) => void;

  private readonly extractor: RowExtractor;

  constructor(
    private readonly res: RawResponse,
    opts: RowSplitterOptions = {},
  ) {
    this.extractor = createRowExtractor(opts);
    this.status = res.status;
    this.rateLimit = res.rateLimit;
    this.envelopePromise = new Promise<Row>((resolve, reject) => {
      this.resolveEnvelope = resolve;
      this.rejectEnvelope = reject;
    });
    // Callers that never ask for the envelope must not see an unhandled rejection.
    this.envelopePromise.catch(() => undefined);
    // take() gives parsed batches only, so these rows are all Row.
    this.rows = {
      [Symbol.asyncIterator]: () => this.rowIterator(() => this.extractor.take()) as AsyncIterator<Row>,
    };
    this.compactRows = {
      [Symbol.asyncIterator]: () => this.rowIterator(() => this.extractor.takeCompact()),
    };
  }

  get bytesRead(): number {
    return this.bytes;
  }

  get rowsRead(): number {
    return this.count;
  }

  envelope(): Promise<Row> {
    return this.envelopePromise;
  }

  rawText(row: Row): Uint8Array | undefined {
    return this.extractor.rawText(row);
  }

  cancel(): Promise<void> {
    this.fail(this.aborted('the row stream was cancelled before its end'));
    discardBody(this.res.body);
    return Promise.resolve();
  }

  private aborted(detail: string): TransportError {
    return transportError({
      operation: this.res.operation,
      code: 'TRANSPORT_ABORTED',
      detail,
      status: this.status,
      rateLimit: this.rateLimit,
    });
  }

  private fail(err: Error): void {
    if (this.settled) return;
    this.settled = true;
    this.rejectEnvelope(err);
  }

  /**
   * Rows handed out from the current batch without an async generator step each (a resolved
   * promise per row); the generator below runs once per batch. return() (a `break`) ends it.
   */
  private rowIterator<B extends Row[] | CompactBatch>(
    take: () => B | undefined,
  ): AsyncIterator<Row | RowText> {
    const batches = this.iterate(take);
    let batch: Row[] | CompactBatch = [];
    let size = 0;
    let at = 0;
    // The row at `at` of the batch: parsed, or a compact one's text (a view of its bytes) and kinds.
    const row = (): Row | RowText => {
      const k = at++;
      if (Array.isArray(batch)) return batch[k] as Row;
      const { bytes, bounds, names, kinds } = batch;
      return new RowText(bytes.subarray(bounds[2 * k], bounds[2 * k + 1]), names, kinds, k * names.length);
    };
    const pull = async (): Promise<IteratorResult<Row | RowText>> => {
      for (;;) {
        const r = await batches.next();
        if (r.done) return { value: undefined, done: true };
        batch = r.value;
        size = Array.isArray(batch) ? batch.length : batch.bounds.length / 2;
        if (size === 0) continue;
        at = 0;
        this.count += 1;
        return { value: row(), done: false };
      }
    };
    return {
      next: () => {
        if (at < size) {
          this.count += 1;
          return Promise.resolve({ value: row(), done: false });
        }
        return pull();
      },
      return: async () => {
        batch = [];
        size = 0;
        at = 0;
        await batches.return(undefined);
        return { value: undefined, done: true };
      },
    };
  }

  private async *iterate<B>(take: () => B | undefined): AsyncGenerator<B> {
    if (this.started) throw new Error(`${this.res.operation}: rows of a RowStream can be iterated only once`);
    this.started = true;
    const extractor = this.extractor;
    let done = false;
    try {
      for await (const chunk of this.res.body) {
        const buf = chunk as Buffer;
        this.bytes += buf.length;
        extractor.push(buf);
        // One batch (≤ MAX_BATCH_BYTES of row text) parsed at a time, handed out before the next.
        for (let batch = this.extract(take); batch; batch = this.extract(take)) yield batch;
      }
      if (this.res.declaredBytes !== undefined && this.bytes < this.res.declaredBytes) {
        throw bodyFailure(this.res, new Error('body shorter than Content-Length'), this.bytes);
      }
      const env = this.extract(() => extractor.end());
      done = true;
      if (!this.settled) {
        this.settled = true;
        this.resolveEnvelope(env);
      }
    } catch (err) {
      const mapped = err instanceof TransportError ? err : bodyFailure(this.res, err, this.bytes);
      this.fail(mapped);
      throw mapped;
    } finally {
      if (!done) {
        // Consumer broke out early (or we failed): drop the rest of the response.
        this.fail(this.aborted('the row stream was closed before its end'));
        discardBody(this.res.body);
      }
    }
  }

  private extract<T>(fn: () => T): T {
    try {
      return fn();
    } catch (err) {
      if (err instanceof ExtractError) {
        throw transportError({
          operation: this.res.operation,
          code: err.kind === 'truncated' ? 'TRANSPORT_TRUNCATED' : 'TRANSPORT_MALFORMED',
          detail: `${err.message} (after ${this.bytes} bytes, ${this.count} rows)`,
          status: this.status,
          rateLimit: this.rateLimit,
          cause: err,
        });
      }
      throw err;
    }
  }
}
