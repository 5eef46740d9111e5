/**
 * Lossless JSON numbers. A JSON number the client cannot hold exactly in a double is kept as its
 * exact text (a string) instead of being silently rounded:
 * - integer literals beyond ±(2^53 − 1), for example `12345678901234567890`;
 * - decimals with more than 15 significant digits (15 = the digits a double always round-trips);
 * - anything that overflows to ±Infinity.
 * Every other number becomes a JS number, exactly as JSON.parse would give it.
 * Financial values (value_num, value_scaled_int) are strings in the interface anyway; this guards
 * the integers and any field a future service version adds.
 */
const INTEGER = /^-?\d+$/;

/** A number token's text → a JS number when exact, else the text itself. */
export function parseJsonNumber(text: string): number | string {
  const n = Number(text);
  if (!Number.isFinite(n)) return text;
  if (INTEGER.test(text)) return Number.isSafeInteger(n) ? n : text;
  return significantDigits(text) <= 15 ? n : text;
}

/** Significant digits of a decimal literal's mantissa (leading and trailing zeros excluded). */
export function significantDigits(text: string): number {
  const mantissa = text.replace(/[eE].*$/, '').replace(/^-/, '');
  const digits = mantissa.replace('.', '').replace(/^0+/, '');
  const trimmed = mantissa.includes('.') ? digits.replace(/0+$/, '') : digits;
  return Math.max(trimmed.length, 1);
}
