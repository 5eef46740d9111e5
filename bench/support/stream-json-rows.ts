/**
 * The client's previous streaming parser, kept for the bench's comparison only (docs/decisions.md
 * "## Client"): stream-json's core tokenizer plus an assembler that hands out the items of the
 * envelope's `rows` array. Replaced in src/api by the row splitter (src/api/row-splitter/).
 */
import { StringDecoder } from 'node:string_decoder';
import { jsonParser } from 'stream-json/core/parser.js';
import { getManyValues, isMany, none } from 'stream-chain/core';
import { parseJsonNumber } from '../../src/api/json-number.js';

export type Row = Record<string, unknown>;

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
  /** Feeds bytes; returns rows completed by them (in order). Throws ExtractError. */
  write(chunk: Uint8Array): Row[];
  /** Input is over: returns the envelope fields without `rows`. Throws ExtractError. */
  end(): Row;
}

type Token = { name: string; value?: unknown };
type Frame = { container: Row | unknown[]; key: string | null };

function isObject(v: unknown): v is Row {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Builds values from stream-json tokens. With `rowsMode` the root must be an object and the items
 * of its `rows` array are handed to `onRow` instead of being kept.
 */
class Assembler {
  private readonly tokens = jsonParser({ packValues: true, streamValues: false });
  private readonly decoder = new StringDecoder('utf8');
  private readonly stack: Frame[] = [];
  private key: string | null = null;
  private inRows = false;
  private sawRows = false;
  private started = false;
  done = false;
  root: unknown = undefined;

  constructor(private readonly onRow?: (row: Row) => void) {}

  feedBytes(chunk: Uint8Array): void {
    this.feedText(this.decoder.write(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)));
  }

  feedText(text: string): void {
    if (text === '') return;
    let out: unknown;
    try {
      out = this.tokens(text);
    } catch (err) {
      throw new ExtractError('malformed', `invalid JSON: ${(err as Error).message}`);
    }
    this.consume(out);
  }

  finish(): void {
    this.feedText(this.decoder.end());
    let out: unknown;
    try {
      // A flushable stage is flushed by calling it with `none` (stream-chain protocol).
      out = (this.tokens as unknown as (x: typeof none) => unknown)(none);
    } catch (err) {
      const msg = (err as Error).message;
      if (this.done) throw new ExtractError('malformed', `invalid JSON: ${msg}`);
      throw new ExtractError('truncated', `the JSON ended in the middle of a value (${msg})`);
    }
    this.consume(out);
    if (!this.done) throw new ExtractError('truncated', 'the JSON ended before its closing bracket');
    if (this.onRow && !this.sawRows) throw new ExtractError('malformed', 'the envelope has no rows array');
  }

  private consume(out: unknown): void {
    if (out === none) return;
    const tokens = isMany(out) ? (getManyValues(out) as Token[]) : [out as Token];
    for (const t of tokens) this.token(t);
  }

  private token(t: Token): void {
    if (this.done) throw new ExtractError('malformed', 'invalid JSON: data after the end of the document');
    if (!this.started) {
      this.started = true;
      if (this.onRow && t.name !== 'startObject')
        throw new ExtractError('malformed', 'the response body is not a JSON object');
    }
    switch (t.name) {
      case 'keyValue':
        this.key = t.value as string;
        return;
      case 'startObject':
      case 'startArray': {
        if (this.onRow && this.stack.length === 1 && this.key === 'rows') {
          if (t.name !== 'startArray')
            throw new ExtractError('malformed', 'the envelope field rows is not an array');
          this.inRows = true;
          this.sawRows = true;
        }
        this.stack.push({ container: t.name === 'startObject' ? {} : [], key: this.key });
        this.key = null;
        return;
      }
      case 'endObject':
      case 'endArray': {
        const frame = this.stack.pop();
        if (!frame) throw new ExtractError('malformed', 'invalid JSON: unbalanced brackets');
        if (this.inRows && this.stack.length === 1) {
          this.inRows = false; // end of rows: they were handed out, nothing to store
          this.key = null;
          return;
        }
        this.key = frame.key;
        this.value(frame.container);
        return;
      }
      case 'stringValue':
      case 'trueValue':
      case 'falseValue':
      case 'nullValue':
        this.value(t.value);
        return;
      case 'numberValue':
        this.value(parseJsonNumber(t.value as string));
        return;
      default:
        return;
    }
  }

  private value(v: unknown): void {
    const depth = this.stack.length;
    if (depth === 0) {
      this.root = v;
      this.done = true;
      return;
    }
    if (this.inRows && depth === 2) {
      if (!isObject(v)) throw new ExtractError('malformed', 'a row is not an object');
      this.onRow?.(v);
      return;
    }
    const top = this.stack[depth - 1] as Frame;
    if (Array.isArray(top.container)) top.container.push(v);
    else if (this.key !== null) top.container[this.key] = v;
    this.key = null;
  }
}

class EnvelopeRowExtractor implements RowExtractor {
  private pending: Row[] = [];
  private readonly assembler = new Assembler((row) => this.pending.push(row));

  write(chunk: Uint8Array): Row[] {
    this.assembler.feedBytes(chunk);
    const out = this.pending;
    this.pending = [];
    return out;
  }

  end(): Row {
    this.assembler.finish();
    return this.assembler.root as Row;
  }
}

/** The previous streaming path: stream-json tokens assembled into rows. */
export function createTokenRowExtractor(): RowExtractor {
  return new EnvelopeRowExtractor();
}
