/**
 * Rows of a compact batch read without JSON.parse: a scanner over the batch's text (`{…},{…}`,
 * ASCII) that validates its whole grammar, finds each row's bounds and the kind of each top-level
 * field (output/staged-part/field-kinds.ts Kind bits, the same rule as kindOf of the parsed value).
 * It accepts only rows whose names are the template's (the first row's), in order, once each, and
 * only text whose every byte JSON.stringify of the parsed row would write the same: no
 * whitespace, no escape, no control character, integers of at most 15 digits as JavaScript prints
 * them (no `-0`, fraction or exponent), no repeated name in a nested object. Anything else gives
 * undefined and the batch goes the JSON.parse way, which stays the reference (docs/decisions.md
 * "Staging compact rows without JSON.parse").
 */
import { Kind } from '../types.js';

const QUOTE = 0x22;
const COMMA = 0x2c;
const COLON = 0x3a;
const LBRACE = 0x7b;
const RBRACE = 0x7d;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;
const MINUS = 0x2d;
const ZERO = 0x30;
const ONE = 0x31;
const NINE = 0x39;

/** Digits of the longest integer accepted: every one of them is a safe integer (kindOf: INT). */
const MAX_DIGITS = 15;
/** Nesting deeper than this is left to JSON.parse (the scanner recurses). */
const MAX_DEPTH = 64;
/** Names of a nested object checked for repeats (a longer one is left to JSON.parse). */
const MAX_NESTED_NAMES = 64;
/**
 * JSON tokens whose text is what JSON.stringify writes for them: no whitespace, no escape and no
 * control character (so every string is its value between quotes), integers of at most 15 digits
 * as JavaScript prints them (no `-0`, no fraction or exponent). Anchored, with alternatives that
 * start with different characters, so a failing text is given up in linear time. The scanner reads
 * only text this accepts (the native regexp checks the bytes of the strings faster than a loop).
 */
export const COMPACT_TOKENS =
  // eslint-disable-next-line no-control-regex -- control characters are what strings must not hold
  /^(?:"[^"\\\u0000-\u001f]*"|[{}[\]:,]|-?[1-9][0-9]{0,14}(?![0-9.eE])|0(?![0-9.eE])|true|false|null)*$/;

/** A compact batch read by the scanner: flat [start, end) per row, kinds[row × names + field]. */
export interface CompactScan {
  names: readonly string[];
  bounds: number[];
  kinds: number[];
}

/** A batch the scanner proved, with its bytes: row k is bytes[bounds[2k], bounds[2k + 1]). */
export interface CompactBatch extends CompactScan {
  bytes: Buffer;
}

function isDigit(c: number): boolean {
  return c >= ZERO && c <= NINE;
}

const DATE_DIGITS = [0, 1, 2, 3, 5, 6, 8, 9] as const;

/** isDateLike (field-kinds.ts) of t[s, e): `YYYY-MM-DD`, ASCII digits. */
function isDateAt(t: string, s: number, e: number): boolean {
  if (e - s !== 10 || t.charCodeAt(s + 4) !== MINUS || t.charCodeAt(s + 7) !== MINUS) return false;
  for (const k of DATE_DIGITS) if (!isDigit(t.charCodeAt(s + k))) return false;
  return true;
}

/**
 * Reads batches of one response. The template is learned from the first row of a batch and kept
 * while batches match it; a batch that does not match is turned down and the next one learns again.
 */
export class CompactScanner {
  private names: string[] | undefined;
  /** `"name":` of each template name. */
  private keys: string[] = [];
  /** Kind of the value the last value() call read. */
  private kind = 0;

  /**
   * The batch `{…},…,{…}` (ASCII text COMPACT_TOKENS accepts), or undefined when it is not one the
   * scanner can prove.
   */
  scan(text: string): CompactScan | undefined {
    if (this.names === undefined) {
      this.names = this.learn(text);
      this.keys = this.names?.map((n) => `"${n}":`) ?? [];
    }
    const names = this.names;
    if (names === undefined) return undefined;
    const bounds: number[] = [];
    const kinds: number[] = [];
    let i = 0;
    for (;;) {
      const start = i;
      i = this.row(text, i, this.keys, kinds);
      if (i < 0) {
        this.names = undefined;
        return undefined;
      }
      bounds.push(start, i);
      if (i === text.length) return { names, bounds, kinds };
      if (text.charCodeAt(i) !== COMMA) return undefined;
      i++;
    }
  }

  /** One row at t[i] with exactly the template's names (`keys`: `"name":`): past its `}`, or -1. */
  private row(t: string, i: number, keys: readonly string[], kinds: number[]): number {
    if (t.charCodeAt(i) !== LBRACE) return -1;
    i++;
    for (let f = 0; f < keys.length; f++) {
      if (f > 0) {
        if (t.charCodeAt(i) !== COMMA) return -1;
        i++;
      }
      const key = keys[f] as string;
      // indexOf, not startsWith: 2-3x faster in V8 here (a miss searches on to the batch's end
      // once, and then the whole batch is turned down).
      if (t.indexOf(key, i) !== i) return -1;
      i = this.value(t, i + key.length, 1);
      if (i < 0) return -1;
      kinds.push(this.kind);
    }
    return t.charCodeAt(i) === RBRACE ? i + 1 : -1;
  }

  /**
   * The first row's names, or undefined when it has none, repeats one, or has one starting with a
   * digit (JSON.parse puts integer-like names first, so the parsed row's order could differ).
   */
  private learn(t: string): string[] | undefined {
    if (t.charCodeAt(0) !== LBRACE || t.charCodeAt(1) === RBRACE) return undefined;
    const names: string[] = [];
    let i = 1;
    for (;;) {
      if (t.charCodeAt(i) !== QUOTE) return undefined;
      const end = t.indexOf('"', i + 1);
      if (end < 0) return undefined;
      const name = t.slice(i + 1, end);
      if (isDigit(name.charCodeAt(0)) || names.includes(name)) return undefined;
      names.push(name);
      if (t.charCodeAt(end + 1) !== COLON) return undefined;
      i = this.value(t, end + 2, 1);
      if (i < 0) return undefined;
      const c = t.charCodeAt(i);
      if (c === RBRACE) return names;
      if (c !== COMMA) return undefined;
      i++;
    }
  }

  /** A value at t[i]: past its end (its kind in `kind`), or -1. */
  private value(t: string, i: number, depth: number): number {
    const c = t.charCodeAt(i);
    if (c === QUOTE) {
      const end = t.indexOf('"', i + 1);
      if (end < 0) return -1;
      this.kind = isDateAt(t, i + 1, end) ? Kind.DATE_STRING : Kind.STRING;
      return end + 1;
    }
    if (c === MINUS || isDigit(c)) return this.integer(t, i);
    if (c === LBRACE) return this.object(t, i, depth);
    if (c === LBRACKET) return this.array(t, i, depth);
    return this.literal(t, i);
  }

  /** `true`, `false` or `null`; what follows is checked by the caller (a separator or a bracket). */
  private literal(t: string, i: number): number {
    if (t.startsWith('null', i)) {
      this.kind = Kind.NULL;
      return i + 4;
    }
    if (t.startsWith('true', i)) {
      this.kind = Kind.BOOLEAN;
      return i + 4;
    }
    if (t.startsWith('false', i)) {
      this.kind = Kind.BOOLEAN;
      return i + 5;
    }
    return -1;
  }

  /**
   * An integer as JavaScript prints it, of at most MAX_DIGITS digits. A fraction or an exponent
   * after it is not a separator, so the caller turns it down.
   */
  private integer(t: string, i: number): number {
    const first = t.charCodeAt(i) === MINUS ? i + 1 : i;
    const c = t.charCodeAt(first);
    this.kind = Kind.INT;
    if (c === ZERO) return first === i ? i + 1 : -1; // `-0` prints as `0`
    if (c < ONE || c > NINE) return -1;
    let j = first + 1;
    while (isDigit(t.charCodeAt(j))) j++;
    return j - first <= MAX_DIGITS ? j : -1;
  }

  /** A nested object; its names must differ (JSON.parse keeps one of a repeated name). */
  private object(t: string, i: number, depth: number): number {
    if (depth >= MAX_DEPTH) return -1;
    i++;
    if (t.charCodeAt(i) === RBRACE) {
      this.kind = Kind.OBJECT;
      return i + 1;
    }
    let seen: string[] | undefined;
    for (;;) {
      if (t.charCodeAt(i) !== QUOTE) return -1;
      const end = t.indexOf('"', i + 1);
      if (end < 0 || t.charCodeAt(end + 1) !== COLON) return -1;
      const name = t.slice(i + 1, end);
      if (seen === undefined) seen = [name];
      else if (seen.length >= MAX_NESTED_NAMES || seen.includes(name)) return -1;
      else seen.push(name);
      i = this.value(t, end + 2, depth + 1);
      if (i < 0) return -1;
      const c = t.charCodeAt(i);
      if (c === RBRACE) break;
      if (c !== COMMA) return -1;
      i++;
    }
    this.kind = Kind.OBJECT;
    return i + 1;
  }

  /** An array: STRING_ARRAY when every element is a string (or none), else ARRAY. */
  private array(t: string, i: number, depth: number): number {
    if (depth >= MAX_DEPTH) return -1;
    i++;
    let strings = true;
    if (t.charCodeAt(i) !== RBRACKET) {
      for (;;) {
        if (t.charCodeAt(i) !== QUOTE) strings = false;
        i = this.value(t, i, depth + 1);
        if (i < 0) return -1;
        const c = t.charCodeAt(i);
        if (c === RBRACKET) break;
        if (c !== COMMA) return -1;
        i++;
      }
    }
    this.kind = strings ? Kind.STRING_ARRAY : Kind.ARRAY;
    return i + 1;
  }
}
