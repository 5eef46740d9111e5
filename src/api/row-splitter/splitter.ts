/**
 * The row splitter itself: bytes in with push(), batches of rows out with take(). Between rows it
 * tries the quick path first (takeQuick: cut at the last `},{`, check the number literals with one
 * regular expression, let JSON.parse prove the cut); what that cannot prove goes to the byte
 * scanner (scanner.ts), so both give the same rows. takeCompact() hands out a quick batch the
 * compact scanner proves (compact-rows.ts) unparsed, and rawText() a row's own bytes (row-text.ts).
 */
import { isAscii, isUtf8 } from 'node:buffer';
import { COMPACT_TOKENS, CompactScanner, type CompactBatch } from '../compact-rows.js';
import { COMMA, EXACT_TOKENS, LBRACE, tokensAllow } from './literals.js';
import { BY_LENGTH, HeldRowText, type Row } from './row-text.js';
import { ByteScanner, MAX_BATCH_BYTES, type ParsedBatch } from './scanner.js';

/** Where two rows of a compact body meet. */
const ROW_SEPARATOR = Buffer.from('},{');

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
  private readonly scanner: ByteScanner;
  private readonly rawOn: boolean;
  /** The last batch's rows and their bytes, for rawText(). */
  private readonly held = new HeldRowText();
  /** The quick path is tried (off for good once a cut it made was not a row boundary). */
  private quick = true;
  /** The scanner alone reads the buffer below this offset (text the quick path turned down). */
  private scanUntil = 0;
  private quickRows = 0;
  private scannedRows = 0;
  /** takeCompact()'s scanner (its template of names lasts from batch to batch). */
  private readonly compact = new CompactScanner();

  constructor(opts: RowSplitterOptions = {}) {
    this.rawOn = opts.rawText === true;
    this.scanner = new ByteScanner(this.rawOn);
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
    return this.held.textOf(row);
  }

  /** Rows returned so far by the quick path and by the byte scanner. */
  get stats(): { quickRows: number; scannedRows: number } {
    return { quickRows: this.quickRows, scannedRows: this.scannedRows };
  }

  push(chunk: Uint8Array): void {
    // The last batch's text is a view of the buffer, which the carry-over may overwrite.
    this.held.drop();
    const bytes = Buffer.isBuffer(chunk)
      ? chunk
      : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const dropped = this.scanner.push(bytes);
    this.scanUntil = Math.max(0, this.scanUntil - dropped);
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

  /** The input is over: returns the envelope fields without `rows`. Throws SplitError. */
  finish(): Row {
    return this.scanner.finish();
  }

  private next(compact: boolean): Row[] | CompactBatch | undefined {
    const s = this.scanner;
    if (this.quick && s.batchStart < 0 && s.betweenRows() && s.pos >= this.scanUntil) {
      const rows = this.takeQuick(compact);
      if (rows !== undefined) return rows;
    }
    // While the quick path is on, the scanner stops after the row it completes, so the quick path
    // takes over again at the next row boundary.
    const oneRow = this.quick && s.pos >= this.scanUntil;
    if (s.batchStart < 0 || s.batchEnd - s.batchStart < MAX_BATCH_BYTES) s.scan(false, oneRow);
    if (oneRow && s.batchStart >= 0) {
      // Bytes after the row that do not start the next one with `,{` (whitespace, pretty printing):
      // the quick path finds no cut in this text, so the scanner reads the rest of the buffer.
      const b = s.buf;
      const after = s.batchEnd;
      if (b.length - after >= 3 && !(b[after] === COMMA && b[after + 1] === LBRACE))
        this.scanUntil = b.length;
    }
    const batch = s.parseBatch();
    if (batch === undefined) return undefined;
    if (this.rawOn) this.keepText(batch);
    this.scannedRows += batch.rows.length;
    return batch.rows;
  }

  /**
   * The quick path, between rows: the complete rows up to the last `},{` within MAX_BATCH_BYTES,
   * parsed in one JSON.parse, or undefined to leave the bytes to the scanner. Sound because
   * JSON.parse accepts `[` + text + `]` only when the text ends at a row boundary, and
   * EXACT_TOKENS accepts it only when no literal needs quoting.
   */
  private takeQuick(compact: boolean): Row[] | CompactBatch | undefined {
    const b = this.scanner.buf;
    const n = b.length;
    let start = this.scanner.pos;
    if (this.scanner.gap === 'row') {
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
      this.held.hold([], start, [], undefined);
      this.scanner.tookRowsTo(end);
      this.quickRows += scan.bounds.length / 2;
      return { bytes: b.subarray(start, end), ...scan };
    }
    return this.parseQuick(text, start, end);
  }

  /** The quick batch `text` (buffer bytes [start, end)) parsed, or undefined to leave it to the scanner. */
  private parseQuick(text: string, start: number, end: number): Row[] | undefined {
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
    this.scanner.tookRowsTo(end);
    this.quickRows += rows.length;
    return rows;
  }

  /**
   * rawText() for a quick batch of ASCII COMPACT_TOKENS text (a row's byte length is then its
   * text's length, for compactLength): each row's bounds are its `},{` separators, so there must be
   * exactly one per row boundary (none inside a string). False to leave it to the scanner.
   */
  private keepCompactText(rows: Row[], start: number, end: number): boolean {
    const b = this.scanner.buf;
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
    this.held.hold(rows, start, bounds, b.subarray(start, end));
    return true;
  }

  /** Keeps a scanned batch's bytes for rawText() (in the buffer, until the next push()). */
  private keepText({ rows, start, end, bounds }: ParsedBatch): void {
    const bytes = bounds.length === rows.length * 3 ? this.scanner.buf.subarray(start, end) : undefined;
    // Invalid UTF-8 is replaced (U+FFFD) when decoded for JSON.parse; the raw bytes would differ.
    this.held.hold(rows, start, bounds, bytes !== undefined && isUtf8(bytes) ? bytes : undefined);
  }
}
