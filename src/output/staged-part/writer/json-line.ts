/**
 * One row → one NDJSON line. JSON.stringify is the fastest serialiser V8 has; the exporter's lineage
 * columns are appended as a precomputed suffix instead of copying the row.
 */
import { InputError } from '../../../errors.js';
import { RESERVED_NAMES } from '../../../datasets/index.js';

const BIGINT_MARK = '\u0000bigint:';
const BIGINT_TOKEN = /"\\u0000bigint:(-?\d+)"/g;

/** JSON text of a row. bigint values (the client's lossless path may produce them) stay exact. */
export function rowToJson(row: Record<string, unknown>): string {
  try {
    return JSON.stringify(row);
  } catch (err: unknown) {
    if (!(err instanceof TypeError) || !/bigint/i.test(err.message)) throw err;
    const marked = JSON.stringify(row, (_k, v: unknown) =>
      typeof v === 'bigint' ? `${BIGINT_MARK}${v}` : v,
    );
    return marked.replace(BIGINT_TOKEN, '$1');
  }
}

/** The `,"_snapshot_id":…}\n` tail appended to every line of a part. */
export function lineageSuffix(lineage: Record<string, string>): string {
  let s = '';
  for (const [k, v] of Object.entries(lineage)) s += `,${JSON.stringify(k)}:${JSON.stringify(v)}`;
  return `${s}}\n`;
}

/** Appends the lineage suffix to a row's JSON text (`{…}`). */
export function withSuffix(json: string, suffix: string): string {
  // `{}` has no field to put a comma after.
  return json.length === 2 ? `{${suffix.slice(1)}` : json.slice(0, -1) + suffix;
}

/** A timestamp (ISO string, Date or epoch ms) as ISO-8601, refused with its name when invalid. */
export function isoOf(value: string | Date | number, what: string): string {
  const d = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(d.getTime()))
    throw new InputError(`${what} ${JSON.stringify(value)} is not a valid timestamp`);
  return d.toISOString();
}

/** A row received as ASCII JSON text, parsed (its text is ASCII, so latin1 is its UTF-8). */
export function parseAscii(text: Uint8Array): Record<string, unknown> {
  return JSON.parse(Buffer.from(text.buffer, text.byteOffset, text.byteLength).toString('latin1')) as Record<
    string,
    unknown
  >;
}

/** An API field named like an exporter column is kept as `_api<name>` (it lands in `_extra`). */
export function renameReserved(row: Record<string, unknown>): Record<string, unknown> {
  let copy: Record<string, unknown> | undefined;
  for (const name of RESERVED_NAMES) {
    if (Object.prototype.hasOwnProperty.call(row, name)) {
      copy ??= { ...row };
      copy[`_api${name}`] = copy[name];
      delete copy[name];
    }
  }
  return copy ?? row;
}
