/**
 * Exact decimal numbers for financial values. A value is `sig × 10^exp` with a bigint significand;
 * no float is ever involved. Canonical form: the significand carries no trailing zeros (they move
 * into the exponent) and zero is `0 × 10^0`, so equal values always have equal representations
 * (391035000000 → 391035 × 10^6, 6.11 → 611 × 10^-2).
 */
export interface Decimal {
  readonly sig: bigint;
  readonly exp: number;
}

const DECIMAL_RE = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

const ZERO: Decimal = { sig: 0n, exp: 0 };

/** Number of trailing `0` characters of a digit string (its sign, if any, is never a `0`). */
function trailingZeros(digits: string): number {
  let n = 0;
  for (let i = digits.length - 1; i >= 0 && digits.charCodeAt(i) === 48; i -= 1) n += 1;
  return n;
}

/** Builds the canonical form of sig × 10^exp. */
export function makeDecimal(sig: bigint, exp: number): Decimal {
  if (sig === 0n) return ZERO;
  // Most values need no normalising; otherwise one text round trip beats a bigint division per zero.
  if (sig % 10n !== 0n) return { sig, exp };
  const text = sig.toString();
  const zeros = trailingZeros(text);
  return { sig: BigInt(text.slice(0, text.length - zeros)), exp: exp + zeros };
}

/**
 * The plain form of nearly every value (`391035000000`, `-12.50`): optional `-`, digits, optional
 * `.` and digits. null for anything else (the general parser takes it).
 */
function parsePlain(text: string): Decimal | null {
  const n = text.length;
  let i = text.charCodeAt(0) === 45 /* - */ ? 1 : 0;
  const start = i;
  let point = -1;
  for (; i < n; i += 1) {
    const c = text.charCodeAt(i);
    if (c === 46 /* . */ && point < 0) point = i;
    else if (c < 48 || c > 57) return null;
  }
  const intEnd = point < 0 ? n : point;
  if (intEnd === start || point === n - 1) return null; // `.5`, `5.`, `-`: the general parser decides
  // Significant digits: drop leading zeros (of the whole digit run) and trailing zeros.
  let first = start;
  while (first < n && (text.charCodeAt(first) === 48 || first === point)) first += 1;
  if (first === n) return ZERO;
  let last = n - 1;
  while (text.charCodeAt(last) === 48 || last === point) last -= 1;
  // exp: 10^(position of the last significant digit relative to the units digit).
  const exp = last < intEnd ? intEnd - 1 - last : -(last - point);
  const digits = point > first && point < last ? text.slice(first, point) + text.slice(point + 1, last + 1) : text.slice(first, last + 1);
  const sig = BigInt(digits);
  return { sig: start === 1 ? -sig : sig, exp };
}

/** Parses a decimal literal (`-12.50`, `391035000000`, `1.5E3`, `.5`); undefined when it is not one. */
export function parseDecimal(text: string): Decimal | undefined {
  const plain = text.length > 0 ? parsePlain(text) : null;
  if (plain !== null) return plain;
  const m = DECIMAL_RE.exec(text.trim());
  if (!m) return undefined;
  const [, sign = '', intPart = '', fracPart = '', expPart] = m;
  if (intPart === '' && fracPart === '') return undefined;
  const all = intPart + fracPart;
  // Canonical form straight from the text: leading zeros dropped, trailing zeros into the exponent.
  let first = 0;
  while (first < all.length && all.charCodeAt(first) === 48) first += 1;
  if (first === all.length) return ZERO;
  const zeros = trailingZeros(all);
  const exp = (expPart === undefined ? 0 : Number.parseInt(expPart, 10)) - fracPart.length + zeros;
  if (!Number.isSafeInteger(exp)) return undefined;
  const sig = BigInt(all.slice(first, all.length - zeros));
  return { sig: sign === '-' ? -sig : sig, exp };
}

/** Multiplies by 10^n (the inline XBRL `scale` attribute). */
export function shiftDecimal(d: Decimal, n: number): Decimal {
  return makeDecimal(d.sig, d.exp + n);
}

export function negateDecimal(d: Decimal): Decimal {
  return makeDecimal(-d.sig, d.exp);
}

function align(a: Decimal, b: Decimal): [bigint, bigint, number] {
  const exp = Math.min(a.exp, b.exp);
  return [a.sig * 10n ** BigInt(a.exp - exp), b.sig * 10n ** BigInt(b.exp - exp), exp];
}

export function addDecimal(a: Decimal, b: Decimal): Decimal {
  const [x, y, exp] = align(a, b);
  return makeDecimal(x + y, exp);
}

export function subtractDecimal(a: Decimal, b: Decimal): Decimal {
  const [x, y, exp] = align(a, b);
  return makeDecimal(x - y, exp);
}

export function compareDecimal(a: Decimal, b: Decimal): number {
  const [x, y] = align(a, b);
  return x < y ? -1 : x > y ? 1 : 0;
}

export function equalDecimal(a: Decimal, b: Decimal): boolean {
  return a.sig === b.sig && a.exp === b.exp;
}

/** Plain decimal text of |sig| × 10^exp given the digits of |sig|. */
function plainText(neg: boolean, digits: string, exp: number): string {
  let out: string;
  if (exp >= 0) {
    out = digits === '0' ? '0' : exp === 0 ? digits : digits + '0'.repeat(exp);
  } else {
    const point = digits.length + exp;
    out =
      point > 0
        ? `${digits.slice(0, point)}.${digits.slice(point)}`
        : `0.${'0'.repeat(-point)}${digits}`;
  }
  return neg ? `-${out}` : out;
}

/** Plain decimal text without exponent: `391035000000`, `6.11`, `-0.00001`. */
export function formatDecimal(d: Decimal): string {
  const neg = d.sig < 0n;
  return plainText(neg, (neg ? -d.sig : d.sig).toString(), d.exp);
}

/** The three exact fields of a fact row: value_num = value_scaled_int × 10^scale. */
export function decimalFields(d: Decimal): { value_num: string; value_scaled_int: string; scale: number } {
  const scaled = d.sig.toString();
  const neg = d.sig < 0n;
  return { value_num: plainText(neg, neg ? scaled.slice(1) : scaled, d.exp), value_scaled_int: scaled, scale: d.exp };
}

/** Order of magnitude of the integer part (number of digits left of the point, 0 for |d| < 1). */
export function integerDigits(d: Decimal): number {
  if (d.sig === 0n) return 0;
  const n = (d.sig < 0n ? -d.sig : d.sig).toString().length + d.exp;
  return Math.max(0, n);
}
