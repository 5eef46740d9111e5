/**
 * Rows of an envelope `{ ...fields, "rows": [ {...}, ... ], ...fields }` from its byte stream: a
 * byte scanner finds where each row ends (string and escape state, bracket depth inside `rows`)
 * and complete rows are parsed in batches by the native JSON.parse. Every number literal outside
 * strings is checked as it is scanned; one a double cannot hold exactly (json-number.ts) is
 * wrapped in quotes before parsing, so it arrives as its exact text. Chosen by measurement over
 * stream-json's tokenizer (docs/decisions.md "## Client").
 *
 * The quick path (takeQuick) skips the byte scan for compact bodies: it cuts a batch at the last
 * `},{` in the buffer, checks with one anchored regular expression that every number literal
 * in it is short enough to be exact, and lets JSON.parse prove the cut is a row boundary (a cut
 * anywhere else leaves a string or an object open, which JSON.parse rejects). Anything it cannot
 * prove is left to the scanner, so both paths give the same rows (docs/decisions.md).
 *
 * takeCompact() (for RowStream.compactRows) goes one step further on a quick batch with rawText:
 * after the token check, the compact scanner (compact-rows.ts) proves the batch's grammar and
 * reads each row's bounds and field kinds, and the batch comes back unparsed; a batch it cannot
 * prove is parsed as by take(). take() never hands out an unparsed row.
 *
 * Memory: the bytes of the row in progress (carried over to the next chunk), at most one batch of
 * MAX_BATCH_BYTES of row text and its parsed rows, and the envelope's bytes outside `rows`.
 */
import { isAscii, isUtf8 } from 'node:buffer';
import { COMPACT_TOKENS, CompactScanner, type CompactBatch } from './compact-rows.js';
import { ALWAYS_EXACT_CHARS, isExactNumberLiteral } from './json-number.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const LBRACE = 0x7b;
const RBRACE = 0x7d;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;

/** Row text parsed by one JSON.parse at most (a longer row is parsed alone). */
export const MAX_BATCH_BYTES = 64 * 1024;

/** Where two rows of a compact body meet. */
const ROW_SEPARATOR = Buffer.from('},{');

/**
 * Matches a run of JSON tokens (strings, punctuation, whitespace, true/false/null) whose number
 * literals all have at most ALWAYS_EXACT_CHARS characters and no exponent, so every one of them
 * is exact (json-number.ts). Anchored and with alternatives that start with different characters
 * and cannot split a token, so a failing text is given up in linear time.
 */
const EXACT_TOKENS =
  /^(?:"[^"\\]*(?:\\.[^"\\]*)*"|[{}[\]:,]|[ \t\n\r]|(?=[-0-9.]{1,15}(?![-+0-9.eE]))-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?![0-9.eE])|true|false|null)*$/;

/**
 * Whether `re` matches `text`. V8 throws a RangeError when a regular expression's backtracking
 * outgrows its stack (tens of MB of rows for these, far beyond a 64 KiB batch); such a text is
 * left to the byte scan, like any other the token check cannot prove.
 */
function tokensAllow(re: RegExp, text: string): boolean {
  try {
    return re.test(text);
  } catch {
    return false;
  }
}

/** textBounds marker: the row's text is checked by its length (compactLength), not a member count. */
const BY_LENGTH = -2;

export type Row = Record<string, unknown>;

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

function isNumberByte(c: number): boolean {
  return (c >= ZERO && c <= NINE) || c === DOT || c === MINUS || c === PLUS || (c | 0x20) === 0x65;
}

function isWhitespace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/** The literal b[start, end) when a double cannot hold it exactly, else undefined. */
function inexactLiteral(b: Uint8Array, start: number, end: number, exponent: boolean): boolean {
  if (end - start <= ALWAYS_EXACT_CHARS && !exponent) return false;
  return !isExactNumberLiteral(Buffer.from(b.buffer, b.byteOffset + start, end - start).toString('latin1'));
}

/**
 * Whether an exact literal b[start, end) is what JavaScript prints for its value: digits only
 * (and no `-0`) up to ALWAYS_EXACT_CHARS are; a fraction, an exponent or a longer one is checked.
 */
function printsAsItself(b: Buffer, start: number, end: number, fractionOrExponent: boolean): boolean {
  if (!fractionOrExponent && end - start <= ALWAYS_EXACT_CHARS) {
    return !(b[start] === MINUS && b[start + 1] === ZERO);
  }
  const text = b.toString('latin1', start, end);
  return String(Number(text)) === text;
}

/**
 * Length of JSON.stringify(value) for a value parsed from COMPACT_TOKENS text: strings without
 * anything to escape, integers. A row's text is longer exactly when it repeats a member name.
 */
function compactLength(value: unknown): number {
  if (typeof value === 'string') return value.length + 2;
  if (typeof value === 'number') return String(value).length;
  if (typeof value === 'boolean') return value ? 4 : 5;
  if (value === null) return 4;
  if (typeof value !== 'object') return -1; // not a JSON value: equal to no text's length
  let n = 2;
  let items = 0;
  if (Array.isArray(value)) {
    for (const v of value as unknown[]) {
      n += compactLength(v);
      items++;
    }
  } else {
    for (const k in value) {
      n += k.length + 3 + compactLength((value as Row)[k]);
      items++;
    }
  }
  return items > 0 ? n + items - 1 : n;
}

/** Object members of a parsed value, nested ones included. */
function memberCount(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0;
  let n = 0;
  if (Array.isArray(value)) {
    for (const v of value as unknown[]) n += memberCount(v);
    return n;
  }
  for (const k in value) {
    n += 1 + memberCount((value as Row)[k]);
  }
  return n;
}

/**
 * UTF-8 text of b[start, end) with the literals at `spans` (flat [s0, e0, s1, e1, …], ascending,
 * inside the range) wrapped in quotes.
 */
export function decodeQuoting(b: Buffer, start: number, end: number, spans: readonly number[]): string {
  if (spans.length === 0) return b.toString('utf8', start, end);
  let out = '';
  let at = start;
  for (let k = 0; k < spans.length; k += 2) {
    const s = spans[k] as number;
    const e = spans[k + 1] as number;
    out += `${b.toString('utf8', at, s)}"${b.toString('latin1', s, e)}"`;
    at = e;
  }
  return out + b.toString('utf8', at, end);
}

/**
 * Longest whole body the token check runs on. V8's regexp stack gave out between 40 and 60 MB of
 * evidence rows; a denser text fails sooner, which tokensAllow turns into the byte scan.
 */
const MAX_TOKEN_CHECK_CHARS = 16 * 1024 * 1024;

/**
 * A whole JSON text when none of its number literals needs quoting (EXACT_TOKENS), so it can go to
 * JSON.parse as is; undefined when one might, or the text is too long to check this way.
 */
export function exactText(b: Buffer): string | undefined {
  if (b.length > MAX_TOKEN_CHECK_CHARS) return undefined;
  const text = b.toString('utf8');
  return tokensAllow(EXACT_TOKENS, text) ? text : undefined;
}

/**
 * Inexact number literals of a whole JSON text (outside strings), as flat [start, end) pairs. The
 * text's syntax is left to JSON.parse.
 */
export function inexactLiterals(b: Buffer): number[] {
  const spans: number[] = [];
  const n = b.length;
  let i = 0;
  while (i < n) {
    let c = b[i] as number;
    if (c === QUOTE) {
      i++;
      for (;;) {
        while (i < n && (c = b[i] as number) !== QUOTE && c !== BACKSLASH) i++;
        if (i >= n || c === QUOTE) break;
        i += 2;
      }
      i++;
      continue;
    }
    if ((c >= ZERO && c <= NINE) || c === MINUS) {
      let j = i + 1;
      let exponent = false;
      while (j < n && isNumberByte((c = b[j] as number))) {
        if ((c | 0x20) === 0x65) exponent = true;
        j++;
      }
      if (inexactLiteral(b, i, j, exponent)) spans.push(i, j);
      i = j;
      continue;
    }
    i++;
  }
  return spans;
}

type Phase = 'start' | 'envelope' | 'rows' | 'done';
/** Between rows: after `[`, after a row, after a comma. */
type Gap = 'open' | 'row' | 'comma';

export interface RowSplitterOptions {
  /**
   * Keep each row's own JSON text (rawText()) when re-serialising the parsed row would give the
   * same values: costs one copy of the row bytes. @defaultValue false
   */
  rawText?: boolean;
}

/**
 * Push bytes with push(), then call take() until it returns undefined: each call parses and
 * returns one batch of complete rows. finish() at the end returns the envelope without `rows`.
 */
export class RowSplitter {
  private buf: Buffer = Buffer.alloc(0);
  /** Where a carried-over row and the next chunk are joined (grows to the longest row + chunk). */
  private work: Buffer = Buffer.allocUnsafe(2 * MAX_BATCH_BYTES);
  /** Next byte to scan. */
  private pos = 0;
  private depth = 0;
  private inString = false;
  private phase: Phase = 'start';
  private gap: Gap = 'open';
  /** First byte of the row being scanned (-1 between rows). */
  private rowStart = -1;
  /** Complete rows not yet parsed: [batchStart, batchEnd), -1 when none. */
  private batchStart = -1;
  private batchEnd = -1;
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
  private readonly rawOn: boolean;
  /**
   * The last batch's rows with a view of their bytes in the buffer (undefined when unusable or
   * after push()), the buffer offset the view starts at, and the batch's rowBounds; rawText()
   * walks them in order from textAt.
   */
  private textRows: Row[] = [];
  private textBytes: Buffer | undefined;
  private textBase = 0;
  private textBounds: number[] = [];
  private textAt = 0;
  /** The quick path is tried (off for good once a cut it made was not a row boundary). */
  private quick = true;
  /** The scanner alone reads the buffer below this offset (text the quick path turned down). */
  private scanUntil = 0;
  private quickRows = 0;
  private scannedRows = 0;
  /** stringEnd: the next quote and backslash found at or after the scan (-1: not searched yet). */
  private quoteAt = -1;
  private backslashAt = -1;
  /** takeCompact()'s scanner (its template of names lasts from batch to batch). */
  private readonly compact = new CompactScanner();

  constructor(opts: RowSplitterOptions = {}) {
    this.rawOn = opts.rawText === true;
  }

  /**
   * The row's bytes as the API sent them (`{…}`, UTF-8), for a row this splitter returned, when
   * they say exactly what JSON.stringify(row) would: no whitespace outside strings, every number
   * literal as JavaScript prints it (so none kept as text), no repeated member name, valid UTF-8.
   * String escapes and the order of integer-like names may differ; the values do not. Otherwise
   * undefined, and always for a row of an earlier batch than the last take() returned or once
   * push() was called again (the text is the buffer's own bytes, not a copy: valid until the next
   * push(), so copy it to keep it). Only with the rawText option; a row changed after take() must
   * not be paired with its text.
   */
  rawText(row: Row): Buffer | undefined {
    const bytes = this.textBytes;
    if (bytes === undefined) return undefined;
    // Rows are asked for in order: the next one is where the last one left off.
    let k = this.textRows[this.textAt] === row ? this.textAt : this.textRows.indexOf(row);
    if (k < 0) return undefined;
    this.textAt = k + 1;
    k *= 3;
    const members = this.textBounds[k + 2] as number;
    const start = (this.textBounds[k] as number) - this.textBase;
    const end = (this.textBounds[k + 1] as number) - this.textBase;
    // A repeated name, which JSON.parse keeps once (the last): the text is longer than the row
    // serialised, or it has more members than the row parsed.
    if (members === BY_LENGTH) {
      if (compactLength(row) !== end - start) return undefined;
    } else if (members < 0 || memberCount(row) !== members) return undefined;
    return bytes.subarray(start, end);
  }

  /** Rows returned so far by the quick path and by the byte scanner. */
  get stats(): { quickRows: number; scannedRows: number } {
    return { quickRows: this.quickRows, scannedRows: this.scannedRows };
  }

  push(chunk: Uint8Array): void {
    // The last batch's text is a view of the buffer, which the carry-over below may overwrite.
    this.textBytes = undefined;
    const bytes = Buffer.isBuffer(chunk)
      ? chunk
      : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let keep = this.pos;
    if (this.rowStart >= 0 && this.rowStart < keep) keep = this.rowStart;
    if (this.batchStart >= 0 && this.batchStart < keep) keep = this.batchStart;
    this.copyEnvelope(this.pos);
    const carry = this.buf.length - keep;
    if (carry <= 0) {
      this.buf = bytes;
    } else {
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
    this.pos -= keep;
    if (this.rowStart >= 0) this.rowStart -= keep;
    if (this.batchStart >= 0) {
      this.batchStart -= keep;
      this.batchEnd -= keep;
    }
    if (this.envStart >= 0) this.envStart -= keep;
    this.scanUntil = Math.max(0, this.scanUntil - keep);
    for (let k = 0; k < this.rowSpans.length; k++) this.rowSpans[k] = (this.rowSpans[k] as number) - keep;
    for (let k = 0; k < this.rowBounds.length; k += 3) {
      this.rowBounds[k] = (this.rowBounds[k] as number) - keep;
      this.rowBounds[k + 1] = (this.rowBounds[k + 1] as number) - keep;
    }
  }

  /** Parses and returns the next batch of complete rows, or undefined when more bytes are needed. */
  take(): Row[] | undefined {
    const out = this.next(false);
    if (out !== undefined && !Array.isArray(out)) throw new Error('a compact batch outside takeCompact()');
    return out;
  }

  /**
   * take(), except that a quick batch the compact scanner proves (compact-rows.ts) comes back
   * unparsed: its bytes (a view of the buffer, valid until the next push()), each row's bounds and
   * field kinds. Only with the rawText option.
   */
  takeCompact(): Row[] | CompactBatch | undefined {
    return this.next(this.rawOn);
  }

  private next(compact: boolean): Row[] | CompactBatch | undefined {
    const betweenRows = this.phase === 'rows' && this.rowStart < 0 && !this.inString;
    if (this.quick && this.batchStart < 0 && betweenRows && this.pos >= this.scanUntil) {
      const rows = this.takeQuick(compact);
      if (rows !== undefined) return rows;
    }
    // While the quick path is on, the scanner stops after the row it completes, so the quick path
    // takes over again at the next row boundary.
    const oneRow = this.quick && this.pos >= this.scanUntil;
    if (this.batchStart < 0 || this.batchEnd - this.batchStart < MAX_BATCH_BYTES) this.scan(false, oneRow);
    if (oneRow && this.batchStart >= 0) {
      // Bytes after the row that do not start the next one with `,{` (whitespace, pretty printing):
      // the quick path finds no cut in this text, so the scanner reads the rest of the buffer.
      const b = this.buf;
      const after = this.batchEnd;
      if (b.length - after >= 3 && !(b[after] === COMMA && b[after + 1] === LBRACE))
        this.scanUntil = b.length;
    }
    return this.parseBatch();
  }

  /**
   * The quick path, between rows: the complete rows up to the last `},{` within MAX_BATCH_BYTES,
   * parsed in one JSON.parse, or undefined to leave the bytes to the scanner. Sound because
   * JSON.parse accepts `[` + text + `]` only when the text ends at a row boundary, and
   * EXACT_TOKENS accepts it only when no literal needs quoting.
   */
  private takeQuick(compact: boolean): Row[] | CompactBatch | undefined {
    const b = this.buf;
    const n = b.length;
    let start = this.pos;
    if (this.gap === 'row') {
      if (b[start] !== COMMA) return undefined;
      start++;
    }
    if (b[start] !== LBRACE) return undefined;
    const limit = Math.min(n, start + MAX_BATCH_BYTES);
    const sep = b.lastIndexOf(ROW_SEPARATOR, limit - ROW_SEPARATOR.length);
    if (sep < start) {
      // A row longer than a batch, or rows not separated by `},{`: the scanner's job.
      if (n - start >= MAX_BATCH_BYTES) this.scanUntil = n;
      return undefined;
    }
    const end = sep + 1;
    // Row text is only handed out for ASCII batches (keepCompactText): others go to the scanner
    // before a JSON.parse is spent on them.
    if (this.rawOn && !isAscii(b.subarray(start, end))) {
      this.scanUntil = end;
      return undefined;
    }
    // An ASCII batch decodes the same as latin1, which V8 copies without validating UTF-8.
    const text = b.toString(this.rawOn ? 'latin1' : 'utf8', start, end);
    if (!tokensAllow(this.rawOn ? COMPACT_TOKENS : EXACT_TOKENS, text)) {
      this.scanUntil = end;
      return undefined;
    }
    // The scanner proves the grammar JSON.parse would, and reads the field kinds: no row parsed.
    const scan = compact ? this.compact.scan(text) : undefined;
    if (scan !== undefined) {
      this.holdText([], start, [], undefined);
      this.pos = end;
      this.gap = 'row';
      this.quickRows += scan.bounds.length / 2;
      return { bytes: b.subarray(start, end), ...scan };
    }
    let rows: Row[];
    try {
      rows = JSON.parse(`[${text}]`) as Row[];
    } catch {
      // The cut was inside a row (a nested `},{`) or the text is not JSON: the scanner finds out
      // which and says so; rows like these would send every later batch the same way.
      this.quick = false;
      return undefined;
    }
    for (const row of rows) {
      if (typeof row !== 'object' || row === null || Array.isArray(row)) {
        this.quick = false; // the scanner reports it
        return undefined;
      }
    }
    if (this.rawOn && !this.keepCompactText(rows, start, end)) {
      this.scanUntil = end;
      return undefined;
    }
    this.pos = end;
    this.gap = 'row';
    this.quickRows += rows.length;
    return rows;
  }

  /**
   * rawText() for a quick batch of ASCII COMPACT_TOKENS text (a row's byte length is then its
   * text's length, for compactLength): each row's bounds are its `},{` separators, so there must be
   * exactly one per row boundary (none inside a string). False to leave it to the scanner.
   */
  private keepCompactText(rows: Row[], start: number, end: number): boolean {
    const b = this.buf;
    const bounds: number[] = [];
    let at = start;
    for (let k = 0; k < rows.length - 1; k++) {
      const sep = b.indexOf(ROW_SEPARATOR, at);
      if (sep < 0 || sep > end - ROW_SEPARATOR.length) return false;
      bounds.push(at, sep + 1, BY_LENGTH);
      at = sep + 2;
    }
    const extra = b.indexOf(ROW_SEPARATOR, at);
    if (extra >= 0 && extra <= end - ROW_SEPARATOR.length) return false; // a `},{` inside a string
    bounds.push(at, end, BY_LENGTH);
    this.holdText(rows, start, bounds, b.subarray(start, end));
    return true;
  }

  /**
   * What rawText() answers from until the next batch or push(): its rows, and their bytes (a view
   * of the buffer, not a copy) starting at buffer offset `start` with each row's bounds
   * (undefined: no row of the batch has text).
   */
  private holdText(rows: Row[], start: number, bounds: number[], bytes: Buffer | undefined): void {
    this.textRows = rows;
    this.textAt = 0;
    this.textBase = start;
    this.textBounds = bounds;
    this.textBytes = bytes;
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

  private parseBatch(): Row[] | undefined {
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
    if (this.rawOn) this.keepText(rows, start, end);
    this.scannedRows += rows.length;
    return rows;
  }

  /** Keeps the batch's bytes for rawText() (in the buffer, until the next push()). */
  private keepText(rows: Row[], start: number, end: number): void {
    const bounds = this.rowBounds;
    this.rowBounds = [];
    const bytes = bounds.length === rows.length * 3 ? this.buf.subarray(start, end) : undefined;
    // Invalid UTF-8 is replaced (U+FFFD) when decoded for JSON.parse; the raw bytes would differ.
    this.holdText(rows, start, bounds, bytes !== undefined && isUtf8(bytes) ? bytes : undefined);
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
  private scan(final: boolean, oneRow = false): void {
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
