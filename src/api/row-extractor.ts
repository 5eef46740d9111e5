/**
 * Exact, incremental JSON for the client's two response paths, both on the native JSON.parse with
 * one number rule (json-number.ts: a literal a double cannot hold exactly arrives as its text):
 *
 * - `createRowExtractor()`: rows of an envelope `{ ...fields, rows: [ {...}, ... ], ...fields }`
 *   arriving as byte chunks (row-splitter/). `push(chunk)` then `take()` until undefined gives
 *   the completed rows in batches; `end()` returns the envelope fields (everything except `rows`).
 * - `parseJsonLossless(text)`: a whole body.
 *
 * `__proto__` keys become ordinary own fields on both paths (JSON.parse semantics). A failure is
 * classified by stream-json's tokenizer: `truncated` when the text so far is a valid prefix of
 * JSON, `malformed` otherwise.
 */
import type { CompactBatch } from './compact-rows.js';
import { jsonParser } from 'stream-json/core/parser.js';
import { getManyValues, isMany, none } from 'stream-chain/core';
import {
  decodeQuoting,
  exactText,
  inexactLiterals,
  RowSplitter,
  SplitError,
  type Row,
  type RowSplitterOptions,
} from './row-splitter/index.js';

export type { Row } from './row-splitter/index.js';

/** Why parsing failed: `malformed` = not valid JSON / not an envelope; `truncated` = ended early. */
export class ExtractError extends Error {
  constructor(
    readonly kind: 'malformed' | 'truncated',
    message: string,
  ) {
    super(message);
  }
}

export interface RowExtractor {
  /** Feeds bytes; rows they complete come out of take(). Throws ExtractError. */
  push(chunk: Uint8Array): void;
  /** The next batch of completed rows (in order), or undefined when more bytes are needed. */
  take(): Row[] | undefined;
  /** take(), with the batches the compact scanner proves left unparsed (RowSplitter.takeCompact). */
  takeCompact(): Row[] | CompactBatch | undefined;
  /** push() and every take(): all rows the chunk completed. */
  write(chunk: Uint8Array): Row[];
  /** Input is over: returns the envelope fields without `rows`. Throws ExtractError. */
  end(): Row;
  /** A row of the last batch take() returned: its own JSON text, with the rawText option (RowSplitter.rawText). */
  rawText(row: Row): Buffer | undefined;
}

type Token = { name: string };

/**
 * Syntax of a text that failed to parse: `malformed` when stream-json's tokenizer rejects it or it
 * goes on after its root value, `truncated` when it is a valid beginning of a JSON text.
 */
export function classifyJsonFailure(text: string, detail: string): ExtractError {
  const tokens = jsonParser({ packValues: true, streamValues: false });
  let depth = 0;
  let rootDone = false;
  const consume = (out: unknown): void => {
    if (out === none) return;
    for (const t of isMany(out) ? (getManyValues(out) as Token[]) : [out as Token]) {
      if (rootDone) throw new Error('data after the end of the document');
      if (t.name === 'startObject' || t.name === 'startArray') depth++;
      else if (t.name === 'endObject' || t.name === 'endArray') depth--;
      else if (t.name === 'keyValue') continue;
      if (depth === 0) rootDone = true;
    }
  };
  try {
    consume(tokens(text));
  } catch (err) {
    return new ExtractError('malformed', `invalid JSON: ${(err as Error).message}`);
  }
  try {
    // A flushable stage is flushed by calling it with `none` (stream-chain protocol).
    consume((tokens as unknown as (x: typeof none) => unknown)(none));
  } catch (err) {
    const msg = (err as Error).message;
    if (rootDone) return new ExtractError('malformed', `invalid JSON: ${msg}`);
    return new ExtractError('truncated', `the JSON ended in the middle of a value (${msg})`);
  }
  if (!rootDone) return new ExtractError('truncated', 'the JSON ended before its closing bracket');
  return new ExtractError('malformed', `invalid JSON: ${detail}`);
}

class SplittingRowExtractor implements RowExtractor {
  private readonly splitter: RowSplitter;

  constructor(opts: RowSplitterOptions) {
    this.splitter = new RowSplitter(opts);
  }

  push(chunk: Uint8Array): void {
    this.splitter.push(chunk);
  }

  take(): Row[] | undefined {
    return guarded(() => this.splitter.take());
  }

  takeCompact(): Row[] | CompactBatch | undefined {
    return guarded(() => this.splitter.takeCompact());
  }

  write(chunk: Uint8Array): Row[] {
    this.push(chunk);
    const out: Row[] = [];
    for (let batch = this.take(); batch; batch = this.take()) for (const row of batch) out.push(row);
    return out;
  }

  end(): Row {
    return guarded(() => this.splitter.finish());
  }

  rawText(row: Row): Buffer | undefined {
    return this.splitter.rawText(row);
  }
}

function guarded<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (!(err instanceof SplitError)) throw err;
    if (err.kind === 'truncated') {
      const judged = classifyJsonFailure(err.unfinished, err.message);
      // A valid prefix that simply stopped: keep the splitter's message.
      if (judged.kind === 'truncated') throw new ExtractError('truncated', err.message);
      throw judged;
    }
    throw new ExtractError(err.kind, err.message);
  }
}

export function createRowExtractor(opts: RowSplitterOptions = {}): RowExtractor {
  return new SplittingRowExtractor(opts);
}

/**
 * JSON.parse with exact numbers: literals a double cannot hold exactly are quoted first (found by
 * the same scan as the streamed rows). Throws ExtractError: `truncated` when the text ends
 * mid-JSON, `malformed` when it is not JSON.
 */
export function parseJsonLossless(input: string | Buffer): unknown {
  const bytes = typeof input === 'string' ? Buffer.from(input, 'utf8') : input;
  // Most bodies need no quoting: one regexp over the text instead of the byte scan (row-splitter/).
  const text = exactText(bytes) ?? decodeQuoting(bytes, 0, bytes.length, inexactLiterals(bytes));
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw classifyJsonFailure(typeof input === 'string' ? input : text, (err as Error).message);
  }
}
