/**
 * JSON of the data dir. companyfacts values must arrive exactly as written (391035000000, 6.11,
 * numbers beyond 2^53): `parseJsonQuotingKeys` turns the number tokens after the named keys into
 * strings before JSON.parse sees them. A reviver would be too late (the float already exists) and
 * Node 20 has no JSON source-text access. Every failure is a DATA_INVALID EmulatorDataError naming the file.
 */
import { EmulatorDataError } from '../../errors.js';

function invalid(file: string, original: string, err: unknown): EmulatorDataError {
  // Report the position in the file as written, not in the quoted copy.
  let reason = err instanceof Error ? err.message : String(err);
  try {
    JSON.parse(original);
  } catch (e) {
    reason = e instanceof Error ? e.message : String(e);
  }
  return new EmulatorDataError(`data file ${file} is not valid JSON: ${reason}`, { code: 'DATA_INVALID', cause: err });
}

/** JSON.parse with the data-dir error. Use only where every number is a safe integer. */
export function parseJson(text: string, file: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw invalid(file, text, err);
  }
}

/**
 * JSON.parse where the numbers after `keys` stay strings (their exact source text); every other
 * number is parsed normally. Exact for valid JSON: an unescaped `"val":` can only be an object key.
 */
export function parseJsonQuotingKeys(text: string, file: string, keys: readonly string[]): unknown {
  const names = keys.map((k) => k.replace(/[^\w]/g, '')).join('|');
  const re = new RegExp(`("(?:${names})"\\s*:\\s*)(-?\\d[\\d.eE+-]*)`, 'g');
  try {
    return JSON.parse(text.replace(re, '$1"$2"')) as unknown;
  } catch (err) {
    throw invalid(file, text, err);
  }
}
