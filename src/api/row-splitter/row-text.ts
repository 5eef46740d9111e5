/**
 * rawText()'s memory: the last batch's rows and a view of their bytes in the splitter's buffer,
 * with each row's bounds and what proves its text is what JSON.stringify(row) would write (its
 * member count, or its length for compact text). Valid until the next batch or push().
 */

/** Any row of an envelope's `rows`. */
export type Row = Record<string, unknown>;

/** A row's bounds marker: its text is checked by its length (compactLength), not a member count. */
export const BY_LENGTH = -2;

/**
 * Length of JSON.stringify(value) for a value parsed from COMPACT_TOKENS text: strings without
 * anything to escape, integers. A row's text is longer exactly when it repeats a member name.
 */
function compactLength(value: unknown): number {
  if (typeof value === 'string') return value.length + 2;
  if (typeof value === 'number') return String(value).length;
  if (typeof value === 'boolean') return value ? 4 : 5;
  if (value === null) return 4;
  if (typeof value !== 'object') return -1; // not a JSON value: equal to no text's length
  let n = 2;
  let items = 0;
  if (Array.isArray(value)) {
    for (const v of value as unknown[]) {
      n += compactLength(v);
      items++;
    }
  } else {
    for (const k in value) {
      n += k.length + 3 + compactLength((value as Row)[k]);
      items++;
    }
  }
  return items > 0 ? n + items - 1 : n;
}

/** Object members of a parsed value, nested ones included. */
function memberCount(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0;
  let n = 0;
  if (Array.isArray(value)) {
    for (const v of value as unknown[]) n += memberCount(v);
    return n;
  }
  for (const k in value) {
    n += 1 + memberCount((value as Row)[k]);
  }
  return n;
}

/** The rows of the last batch and their bytes, for RowSplitter.rawText(). */
export class HeldRowText {
  private rows: Row[] = [];
  private bytes: Buffer | undefined;
  private base = 0;
  /** Flat [start, end, members] triples of buffer offsets; members BY_LENGTH or -1 (altered). */
  private bounds: number[] = [];
  private at = 0;

  /**
   * Holds `rows` and their bytes (a view of the buffer, not a copy) starting at buffer offset
   * `start`, with each row's bounds (bytes undefined: no row of the batch has text).
   */
  hold(rows: Row[], start: number, bounds: number[], bytes: Buffer | undefined): void {
    this.rows = rows;
    this.at = 0;
    this.base = start;
    this.bounds = bounds;
    this.bytes = bytes;
  }

  /** The buffer is about to change under the view: no row has text any more. */
  drop(): void {
    this.bytes = undefined;
  }

  /** See RowSplitter.rawText(). */
  textOf(row: Row): Buffer | undefined {
    const bytes = this.bytes;
    if (bytes === undefined) return undefined;
    // Rows are asked for in order: the next one is where the last one left off.
    let k = this.rows[this.at] === row ? this.at : this.rows.indexOf(row);
    if (k < 0) return undefined;
    this.at = k + 1;
    k *= 3;
    const members = this.bounds[k + 2] as number;
    const start = (this.bounds[k] as number) - this.base;
    const end = (this.bounds[k + 1] as number) - this.base;
    // A repeated name, which JSON.parse keeps once (the last): the text is longer than the row
    // serialised, or it has more members than the row parsed.
    if (members === BY_LENGTH) {
      if (compactLength(row) !== end - start) return undefined;
    } else if (members < 0 || memberCount(row) !== members) return undefined;
    return bytes.subarray(start, end);
  }
}
