/**
 * The byte scanner of the row splitter: it finds where each row of `rows` ends (string and escape
 * state, bracket depth), notes the number literals a double cannot hold (quoted before parsing)
 * and, with rawText, what JSON.stringify would write differently, and keeps the envelope's bytes
 * outside `rows`. Complete rows gather into a batch of at most MAX_BATCH_BYTES of text, parsed by
 * one JSON.parse. The splitter (splitter.ts) drives it and moves `pos` past what its quick path took.
 */
import {
  BACKSLASH,
  COLON,
  COMMA,
  decodeQuoting,
  DOT,
  inexactLiteral,
  isNumberByte,
  isWhitespace,
  LBRACE,
  LBRACKET,
  MINUS,
  NINE,
  printsAsItself,
  QUOTE,
  RBRACE,
  RBRACKET,
  ZERO,
} from './literals.js';
import type { Row } from './row-text.js';

/** Row text parsed by one JSON.parse at most (a longer row is parsed alone). */
export const MAX_BATCH_BYTES = 64 * 1024;

/** A failure found by the splitter; row-extractor.ts maps it to ExtractError. */
export class SplitError extends Error {
  constructor(
    readonly kind: 'malformed' | 'truncated',
    message: string,
    /** For `truncated`: the text received so far (envelope and row in progress), to check its syntax. */
    readonly unfinished = '',
  ) {
    super(message);
  }
}

type Phase = 'start' | 'envelope' | 'rows' | 'done';
/** Between rows: after `[`, after a row, after a comma. */
type Gap = 'open' | 'row' | 'comma';

/** A batch of complete rows, parsed, with where its text lies in the buffer. */
export interface ParsedBatch {
  rows: Row[];
  start: number;
  end: number;
  /** With rawText: each row's [start, end, members] (members -1 when its text is altered). */
  bounds: number[];
}

export class ByteScanner {
  /** The bytes being scanned: the last chunk, or the carried-over row joined with it. */
  buf: Buffer = Buffer.alloc(0);
  /** Where a carried-over row and the next chunk are joined (grows to the longest row + chunk). */
  private work: Buffer = Buffer.allocUnsafe(2 * MAX_BATCH_BYTES);
  /** Next byte to scan. */
  pos = 0;
  private depth = 0;
  private inString = false;
  private phase: Phase = 'start';
  gap: Gap = 'open';
  /** First byte of the row being scanned (-1 between rows). */
  private rowStart = -1;
  /** Complete rows not yet parsed: [batchStart, batchEnd), -1 when none. */
  batchStart = -1;
  batchEnd = -1;
  /** Inexact literals inside rows, flat pairs of buffer offsets. */
  private rowSpans: number[] = [];
  /** Envelope bytes outside `rows` (with `"rows":[]`), and where its uncopied part starts. */
  private readonly envParts: Buffer[] = [];
  private envBytes = 0;
  private envStart = -1;
  /** Inexact literals of the envelope, flat pairs of envelope offsets. */
  private readonly envSpans: number[] = [];
  private sawRows = false;
  /**
   * Rows of the pending batch when rawText is on: flat [start, end, members] triples, buffer
   * offsets and the row's count of `:` outside strings (-1 when the row is altered).
   */
  private rowBounds: number[] = [];
  /** The row being scanned has something JSON.stringify would write differently (see rawText()). */
  private rowAltered = false;
  /** Object members (`:` outside strings) of the row being scanned, nested ones included. */
  private rowMembers = 0;
  /** stringEnd: the next quote and backslash found at or after the scan (-1: not searched yet). */
  private quoteAt = -1;
  private backslashAt = -1;

  constructor(private readonly rawOn: boolean) {}

  /** Inside `rows`, between two rows: where the quick path may cut. */
  betweenRows(): boolean {
    return this.phase === 'rows' && this.rowStart < 0 && !this.inString;
  }

  /** The quick path took the rows up to `end`, which ends a row. */
  tookRowsTo(end: number): void {
    this.pos = end;
    this.gap = 'row';
  }

  /**
   * Takes the next chunk in after what is left to scan, and returns how many bytes of the buffer
   * were let go at its front: every buffer offset kept outside moves back by that many.
   */
  push(bytes: Buffer): number {
    let keep = this.pos;
    if (this.rowStart >= 0 && this.rowStart < keep) keep = this.rowStart;
    if (this.batchStart >= 0 && this.batchStart < keep) keep = this.batchStart;
    this.copyEnvelope(this.pos);
    this.carryOver(keep, bytes);
    this.pos -= keep;
    if (this.rowStart >= 0) this.rowStart -= keep;
    if (this.batchStart >= 0) {
      this.batchStart -= keep;
      this.batchEnd -= keep;
    }
    if (this.envStart >= 0) this.envStart -= keep;
    for (let k = 0; k < this.rowSpans.length; k++) this.rowSpans[k] = (this.rowSpans[k] as number) - keep;
    for (let k = 0; k < this.rowBounds.length; k += 3) {
      this.rowBounds[k] = (this.rowBounds[k] as number) - keep;
      this.rowBounds[k + 1] = (this.rowBounds[k + 1] as number) - keep;
    }
    return keep;
  }

  /** The buffer becomes buf[keep, …) followed by `bytes`. */
  private carryOver(keep: number, bytes: Buffer): void {
    const carry = this.buf.length - keep;
    if (carry <= 0) {
      this.buf = bytes;
      return;
    }
    // The row in progress (or a token cut by the chunk boundary) is carried over, in one work
    // buffer reused from chunk to chunk: no allocation per chunk, nothing else points into it
    // (batches and the envelope are decoded or copied out of it).
    const need = carry + bytes.length;
    if (need > this.work.length) {
      const grown = Buffer.allocUnsafe(Math.max(need, this.work.length * 2));
      this.buf.copy(grown, 0, keep);
      this.work = grown;
    } else if (this.buf.buffer === this.work.buffer) {
      this.work.copyWithin(
        0,
        this.buf.byteOffset - this.work.byteOffset + keep,
        this.buf.byteOffset - this.work.byteOffset + this.buf.length,
      );
    } else {
      this.buf.copy(this.work, 0, keep);
    }
    bytes.copy(this.work, carry);
    this.buf = this.work.subarray(0, need);
  }

  /** Parses the pending batch of complete rows (undefined when there is none). Throws SplitError. */
  parseBatch(): ParsedBatch | undefined {
    if (this.batchStart < 0) return undefined;
    const start = this.batchStart;
    const end = this.batchEnd;
    let spans: number[] = [];
    if (this.rowSpans.length > 0) {
      let k = 0;
      while (k < this.rowSpans.length && (this.rowSpans[k] as number) < end) k += 2;
      spans = this.rowSpans.slice(0, k);
      this.rowSpans = this.rowSpans.slice(k);
    }
    this.batchStart = -1;
    this.batchEnd = -1;
    let rows: Row[];
    try {
      rows = JSON.parse(`[${decodeQuoting(this.buf, start, end, spans)}]`) as Row[];
    } catch (err) {
      throw new SplitError('malformed', `invalid JSON: ${(err as Error).message}`);
    }
    const bounds = this.rowBounds;
    this.rowBounds = [];
    return { rows, start, end, bounds };
  }

  /** The input is over: returns the envelope fields without `rows`. Throws SplitError. */
  finish(): Row {
    this.scan(true);
    if (this.batchStart >= 0) throw new SplitError('malformed', 'rows left unread before finish()');
    if (this.phase !== 'done') {
      throw new SplitError('truncated', 'the JSON ended before its closing bracket', this.unfinishedText());
    }
    if (!this.sawRows) throw new SplitError('malformed', 'the envelope has no rows array');
    const env = Buffer.concat(this.envParts);
    let parsed: unknown;
    try {
      parsed = JSON.parse(decodeQuoting(env, 0, env.length, this.envSpans));
    } catch (err) {
      throw new SplitError('malformed', `invalid JSON: ${(err as Error).message}`);
    }
    const out = parsed as Row;
    delete out.rows;
    return out;
  }

  /** The envelope so far plus the row in progress: what a cut-short body's syntax is judged by. */
  private unfinishedText(): string {
    this.copyEnvelope(this.buf.length);
    const tail =
      this.phase === 'rows' && this.rowStart >= 0 ? this.buf.subarray(this.rowStart) : Buffer.alloc(0);
    return Buffer.concat([...this.envParts, tail]).toString('utf8');
  }

  private copyEnvelope(upTo: number): void {
    if (this.envStart < 0 || upTo <= this.envStart) return;
    const part = Buffer.from(this.buf.subarray(this.envStart, upTo)); // a copy: the chunk is not kept
    this.envParts.push(part);
    this.envBytes += part.length;
    this.envStart = upTo;
  }

  private malformed(message: string): SplitError {
    return new SplitError('malformed', message);
  }

  /** The rows key just before b[at] (a `[` or `{` at depth 1)? */
  private keyIsRows(at: number): boolean {
    this.copyEnvelope(at);
    const env = Buffer.concat(this.envParts);
    let i = env.length - 1;
    while (i >= 0 && isWhitespace(env[i] as number)) i--;
    if (env[i] !== 0x3a) return false;
    i--;
    while (i >= 0 && isWhitespace(env[i] as number)) i--;
    if (env[i] !== QUOTE) return false;
    const end = i + 1;
    i--;
    for (; i >= 0; i--) {
      if (env[i] !== QUOTE) continue;
      let slashes = 0;
      while (env[i - 1 - slashes] === BACKSLASH) slashes++;
      if (slashes % 2 === 0) break;
    }
    if (i < 0) return false;
    try {
      return JSON.parse(env.toString('utf8', i, end)) === 'rows';
    } catch {
      return false;
    }
  }

  /**
   * Scans from pos. Stops at the end of the buffer (before a token the buffer may cut short, unless
   * `final`) or once the batch reached MAX_BATCH_BYTES at a row's end (with `oneRow`: any row's end).
   * Each step below reads one token from `i` and returns where the next one starts, or `~at` (a
   * negative number) to stop the scan with pos = at.
   */
  scan(final: boolean, oneRow = false): void {
    const b = this.buf;
    const n = b.length;
    let i = this.pos;
    // Searches of the previous scan looked at other bytes (the buffer moved since).
    this.quoteAt = -1;
    this.backslashAt = -1;
    while (i < n) {
      const c = b[i] as number;
      let next: number;
      if (this.inString) next = this.stringEnd(b, i);
      else if (c === QUOTE) next = this.stringStart(i);
      else if (c === LBRACE || c === LBRACKET) next = this.opened(c, i);
      else if (c === RBRACE || c === RBRACKET) next = this.closed(i, oneRow);
      else if (this.depth <= 2 && this.phase !== 'envelope') next = this.betweenValues(c, i);
      else if ((c >= ZERO && c <= NINE) || c === MINUS) next = this.numberEnd(b, i, final);
      else next = this.otherByte(c, i);
      if (next < 0) {
        i = ~next;
        break;
      }
      i = next;
    }
    this.pos = i;
  }

  /**
   * Inside a string: past its closing quote (the string is over), or stops at the buffer's end.
   * Strings are most of the bytes: their ends are found by the native search (~1.5x a byte loop
   * over facts rows, docs/decisions.md). The next quote and backslash at or after i (n: none left)
   * are kept until passed, so each search covers new bytes only and a long string full of escapes
   * stays linear.
   */
  private stringEnd(b: Buffer, i: number): number {
    const n = b.length;
    if (this.quoteAt < i) {
      this.quoteAt = b.indexOf(QUOTE, i);
      if (this.quoteAt < 0) this.quoteAt = n;
    }
    if (this.backslashAt < i) {
      this.backslashAt = b.indexOf(BACKSLASH, i);
      if (this.backslashAt < 0) this.backslashAt = n;
    }
    const backslash = this.backslashAt;
    if (backslash < this.quoteAt) {
      // Resume at the backslash when the escaped byte is in the next chunk.
      return backslash + 1 >= n ? ~backslash : backslash + 2;
    }
    if (this.quoteAt === n) return ~n;
    this.inString = false;
    return this.quoteAt + 1;
  }

  /** A string opens (a row itself must be an object). */
  private stringStart(i: number): number {
    if (this.depth === 2 && this.phase === 'rows') throw this.malformed('a row is not an object');
    this.inString = true;
    return i + 1;
  }

  /** `{` or `[`: a row starts (depth 3 in rows), the envelope starts (depth 1), or `rows` opens. */
  private opened(c: number, i: number): number {
    const depth = ++this.depth;
    if (depth === 3 && this.phase === 'rows') {
      if (c !== LBRACE) throw this.malformed('a row is not an object');
      if (this.gap === 'row') throw this.malformed("invalid JSON: expected ',' between rows");
      this.rowStart = i;
      this.rowAltered = false;
      this.rowMembers = 0;
    } else if (depth === 1) {
      if (this.phase !== 'start' || c !== LBRACE)
        throw this.malformed(
          this.phase === 'start'
            ? 'the response body is not a JSON object'
            : 'invalid JSON: data after the end of the document',
        );
      this.phase = 'envelope';
      this.envStart = i;
    } else if (depth === 2 && this.phase === 'envelope' && this.keyIsRows(i)) {
      if (c !== LBRACKET) throw this.malformed('the envelope field rows is not an array');
      this.copyEnvelope(i + 1);
      this.envStart = -1;
      this.phase = 'rows';
      this.gap = 'open';
      this.sawRows = true;
    }
    return i + 1;
  }

  /**
   * `}` or `]`: a row ends (joins the batch; stops the scan when the batch is full, or with
   * `oneRow`), `rows` closes, or the envelope closes.
   */
  private closed(i: number, oneRow: boolean): number {
    const depth = --this.depth;
    if (this.phase === 'rows') {
      if (depth === 2) {
        if (this.rawOn) this.rowBounds.push(this.rowStart, i + 1, this.rowAltered ? -1 : this.rowMembers);
        if (this.batchStart < 0) this.batchStart = this.rowStart;
        this.rowStart = -1;
        this.batchEnd = i + 1;
        this.gap = 'row';
        if (oneRow || this.batchEnd - this.batchStart >= MAX_BATCH_BYTES) return ~(i + 1);
      } else if (depth === 1) {
        if (this.gap === 'comma') throw this.malformed('invalid JSON: a comma before the end of rows');
        this.phase = 'envelope';
        this.envStart = i;
      }
    } else if (depth === 0) {
      this.copyEnvelope(i + 1);
      this.envStart = -1;
      this.phase = 'done';
    } else if (depth < 0) {
      throw this.malformed('invalid JSON: data after the end of the document');
    }
    return i + 1;
  }

  /** Between rows, before the envelope, after it: only commas between rows and whitespace. */
  private betweenValues(c: number, i: number): number {
    if (isWhitespace(c)) return i + 1;
    if (this.phase === 'rows' && c === COMMA && this.gap === 'row') {
      this.gap = 'comma';
      return i + 1;
    }
    throw this.malformed(
      this.phase === 'rows'
        ? 'a row is not an object'
        : this.phase === 'start'
          ? 'the response body is not a JSON object'
          : 'invalid JSON: data after the end of the document',
    );
  }

  /**
   * A number literal: past its end, noting one a double cannot hold (quoted before parsing) or,
   * with rawText, one JavaScript prints differently. Stops before a literal the buffer may cut.
   */
  private numberEnd(b: Buffer, i: number, final: boolean): number {
    const n = b.length;
    let j = i + 1;
    let exponent = false;
    let fraction = false;
    let c: number;
    while (j < n && isNumberByte((c = b[j] as number))) {
      if ((c | 0x20) === 0x65) exponent = true;
      else if (c === DOT) fraction = true;
      j++;
    }
    if (j === n && !final) return ~i; // the literal may go on in the next chunk
    if (inexactLiteral(b, i, j, exponent)) {
      if (this.phase === 'rows') {
        this.rowSpans.push(i, j);
        this.rowAltered = true;
      } else this.envSpans.push(this.envBytes + i - this.envStart, this.envBytes + j - this.envStart);
    } else if (this.rawOn && this.phase === 'rows' && !printsAsItself(b, i, j, exponent || fraction)) {
      this.rowAltered = true;
    }
    return j;
  }

  /** Any other byte inside a value (`:`, `,`, whitespace, true/false/null): counted for rawText. */
  private otherByte(c: number, i: number): number {
    if (this.rawOn && this.phase === 'rows') {
      if (c === COLON) this.rowMembers++;
      // Whitespace between a row's tokens: JSON.stringify writes none (and a newline would split the line).
      else if (isWhitespace(c)) this.rowAltered = true;
    }
    return i + 1;
  }
}
