/**
 * Exact JSON numbers: the one rule both response paths (whole body and streamed rows) apply to every
 * number literal. A literal stays a JS number only when the double it becomes prints back to the
 * same decimal value; otherwise its exact text is kept (a string) instead of a silently rounded
 * number. So `12345678901234567890`, `12345678.123456789` and `1e400` arrive as text, while `0.8731`,
 * `-3e2` (= -300) and `9007199254740991` arrive as numbers, exactly as JSON.parse would give them.
 * Financial values (value_num, value_scaled_int) are strings in the interface anyway; this guards
 * the integers and any field a future service version adds.
 */

/**
 * Longest literal that is exact without a closer look: at most 15 characters of digits, `-` and
 * `.` with no exponent hold at most 15 significant digits below 1e15, and every such decimal
 * survives decimal → double → shortest decimal (15 = DBL_DIG).
 */
export const ALWAYS_EXACT_CHARS = 15;

/** True when the literal (valid JSON number syntax) becomes a double that prints back to its value. */
export function isExactNumberLiteral(text: string): boolean {
  if (text.length <= ALWAYS_EXACT_CHARS && !/[eE]/.test(text)) return true;
  const n = Number(text);
  if (!Number.isFinite(n)) return false;
  return decimalKey(text) === decimalKey(String(n));
}

/** A number token's text → a JS number when exact, else the text itself. */
export function parseJsonNumber(text: string): number | string {
  return isExactNumberLiteral(text) ? Number(text) : text;
}

/**
 * Canonical form of a decimal value (`digits e exponent`, no leading/trailing zeros; zero has no
 * sign), so `1.50`, `15e-1` and `1.5` compare equal.
 */
function decimalKey(text: string): string {
  const m = /^(-?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!m) return text;
  const frac = m[3] ?? '';
  let digits = (m[2] ?? '') + frac;
  let exp = Number(m[4] ?? '0') - frac.length;
  digits = digits.replace(/^0+/, '');
  if (digits === '') return '0';
  const trailing = /0+$/.exec(digits)?.[0].length ?? 0;
  digits = digits.slice(0, digits.length - trailing);
  exp += trailing;
  return `${m[1]}${digits}e${exp}`;
}

/** Significant digits of a decimal literal's mantissa (leading and trailing zeros excluded). */
export function significantDigits(text: string): number {
  const mantissa = text.replace(/[eE].*$/, '').replace(/^-/, '');
  const digits = mantissa.replace('.', '').replace(/^0+/, '');
  const trimmed = mantissa.includes('.') ? digits.replace(/0+$/, '') : digits;
  return Math.max(trimmed.length, 1);
}
