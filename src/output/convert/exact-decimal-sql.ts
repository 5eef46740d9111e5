/**
 * DuckDB macros that check value_num = value_scaled_int × 10^scale with string arithmetic only
 * (no floats, no width limits): both sides are brought to a canonical decimal text and compared.
 * Canonical: optional '-', integer part without leading zeros, '.' and fraction without trailing
 * zeros when non-zero; zero is '0'. Text that is not a plain decimal canonicalises to NULL.
 */
export const EXACT_DECIMAL_MACROS = [
  `CREATE OR REPLACE TEMP MACRO fx_canon_parts(sign, ip, fp) AS (
     CASE WHEN ip = '0' AND fp = '' THEN '0' ELSE sign || ip || CASE WHEN fp = '' THEN '' ELSE '.' || fp END END)`,
  `CREATE OR REPLACE TEMP MACRO fx_canon(s) AS (
     CASE WHEN s IS NULL OR NOT regexp_full_match(s, '[-+]?[0-9]+([.][0-9]+)?') THEN NULL
     ELSE fx_canon_parts(
       CASE WHEN left(s, 1) = '-' THEN '-' ELSE '' END,
       coalesce(nullif(ltrim(split_part(ltrim(s, '+-'), '.', 1), '0'), ''), '0'),
       rtrim(split_part(ltrim(s, '+-'), '.', 2), '0'))
     END)`,
  // d × 10^k for an integer text d; |k| is capped so a corrupt scale cannot allocate gigabytes.
  `CREATE OR REPLACE TEMP MACRO fx_padded(digits, n) AS (repeat('0', greatest(0, n - length(digits))) || digits)`,
  `CREATE OR REPLACE TEMP MACRO fx_shift(d, k) AS (
     CASE WHEN d IS NULL OR k IS NULL OR abs(k) > 1000 OR NOT regexp_full_match(d, '[-+]?[0-9]+') THEN NULL
     WHEN k >= 0 THEN fx_canon(d || repeat('0', CAST(k AS BIGINT)))
     ELSE fx_canon(
       CASE WHEN left(d, 1) = '-' THEN '-' ELSE '' END ||
       left(fx_padded(ltrim(d, '+-'), 1 - k), length(fx_padded(ltrim(d, '+-'), 1 - k)) + k) || '.' ||
       right(fx_padded(ltrim(d, '+-'), 1 - k), CAST(-k AS BIGINT)))
     END)`,
];

/**
 * SQL condition true for a row whose value_num does not equal value_scaled_int × 10^scale.
 * `scaledText` is the significand as text (the DECIMAL cast to VARCHAR, or its overflow text).
 * A row where both value_num and the significand are null has nothing to check.
 */
export function valueMismatchCondition(valueNum: string, scaledText: string, scale: string): string {
  return `NOT ((${valueNum} IS NULL AND ${scaledText} IS NULL) OR coalesce(fx_canon(${valueNum}) = fx_shift(${scaledText}, ${scale}), false))`;
}
