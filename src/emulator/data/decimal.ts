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

/** Builds the canonical form of sig × 10^exp. */
export function makeDecimal(sig: bigint, exp: number): Decimal {
  if (sig === 0n) return { sig: 0n, exp: 0 };
  let s = sig;
  let e = exp;
  while (s % 10n === 0n) {
    s /= 10n;
    e += 1;
  }
  return { sig: s, exp: e };
}

/** Parses a decimal literal (`-12.50`, `391035000000`, `1.5E3`, `.5`); undefined when it is not one. */
export function parseDecimal(text: string): Decimal | undefined {
  const m = DECIMAL_RE.exec(text.trim());
  if (!m) return undefined;
  const [, sign = '', intPart = '', fracPart = '', expPart] = m;
  if (intPart === '' && fracPart === '') return undefined;
  const digits = (intPart + fracPart).replace(/^0+(?=\d)/, '');
  const exp = (expPart === undefined ? 0 : Number.parseInt(expPart, 10)) - fracPart.length;
  if (!Number.isSafeInteger(exp)) return undefined;
  const sig = BigInt(digits === '' ? '0' : digits);
  return makeDecimal(sign === '-' ? -sig : sig, exp);
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

/** Plain decimal text without exponent: `391035000000`, `6.11`, `-0.00001`. */
export function formatDecimal(d: Decimal): string {
  const neg = d.sig < 0n;
  const digits = (neg ? -d.sig : d.sig).toString();
  let out: string;
  if (d.exp >= 0) {
    out = d.sig === 0n ? '0' : digits + '0'.repeat(d.exp);
  } else {
    const point = digits.length + d.exp;
    out =
      point > 0
        ? `${digits.slice(0, point)}.${digits.slice(point)}`
        : `0.${'0'.repeat(-point)}${digits}`;
  }
  return neg ? `-${out}` : out;
}

/** The three exact fields of a fact row: value_num = value_scaled_int × 10^scale. */
export function decimalFields(d: Decimal): { value_num: string; value_scaled_int: string; scale: number } {
  return { value_num: formatDecimal(d), value_scaled_int: d.sig.toString(), scale: d.exp };
}

/** Order of magnitude of the integer part (number of digits left of the point, 0 for |d| < 1). */
export function integerDigits(d: Decimal): number {
  if (d.sig === 0n) return 0;
  const n = (d.sig < 0n ? -d.sig : d.sig).toString().length + d.exp;
  return Math.max(0, n);
}
