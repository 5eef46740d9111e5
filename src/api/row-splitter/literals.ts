/**
 * JSON number literals read off the bytes, for the row splitter and for whole bodies: the bytes
 * of JSON's punctuation, which literals a double cannot hold exactly (json-number.ts) and so are
 * quoted before JSON.parse, which ones JavaScript prints as written, and the one-regexp check
 * that a whole text needs no quoting at all.
 */
import { ALWAYS_EXACT_CHARS, isExactNumberLiteral } from '../json-number.js';

export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const LBRACE = 0x7b;
export const RBRACE = 0x7d;
export const LBRACKET = 0x5b;
export const RBRACKET = 0x5d;
export const COMMA = 0x2c;
export const COLON = 0x3a;
export const MINUS = 0x2d;
export const PLUS = 0x2b;
export const DOT = 0x2e;
export const ZERO = 0x30;
export const NINE = 0x39;

/**
 * Matches a run of JSON tokens (strings, punctuation, whitespace, true/false/null) whose number
 * literals all have at most ALWAYS_EXACT_CHARS characters and no exponent, so every one of them
 * is exact (json-number.ts). Anchored and with alternatives that start with different characters
 * and cannot split a token, so a failing text is given up in linear time.
 */
export const EXACT_TOKENS =
  /^(?:"[^"\\]*(?:\\.[^"\\]*)*"|[{}[\]:,]|[ \t\n\r]|(?=[-0-9.]{1,15}(?![-+0-9.eE]))-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?![0-9.eE])|true|false|null)*$/;

/**
 * Whether `re` matches `text`. V8 throws a RangeError when a regular expression's backtracking
 * outgrows its stack (tens of MB of rows for these, far beyond a 64 KiB batch); such a text is
 * left to the byte scan, like any other the token check cannot prove.
 */
export function tokensAllow(re: RegExp, text: string): boolean {
  try {
    return re.test(text);
  } catch {
    return false;
  }
}

export function isNumberByte(c: number): boolean {
  return (c >= ZERO && c <= NINE) || c === DOT || c === MINUS || c === PLUS || (c | 0x20) === 0x65;
}

export function isWhitespace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/** Whether a double cannot hold the literal b[start, end) exactly. */
export function inexactLiteral(b: Uint8Array, start: number, end: number, exponent: boolean): boolean {
  if (end - start <= ALWAYS_EXACT_CHARS && !exponent) return false;
  return !isExactNumberLiteral(Buffer.from(b.buffer, b.byteOffset + start, end - start).toString('latin1'));
}

/**
 * Whether an exact literal b[start, end) is what JavaScript prints for its value: digits only
 * (and no `-0`) up to ALWAYS_EXACT_CHARS are; a fraction, an exponent or a longer one is checked.
 */
export function printsAsItself(b: Buffer, start: number, end: number, fractionOrExponent: boolean): boolean {
  if (!fractionOrExponent && end - start <= ALWAYS_EXACT_CHARS) {
    return !(b[start] === MINUS && b[start + 1] === ZERO);
  }
  const text = b.toString('latin1', start, end);
  return String(Number(text)) === text;
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
