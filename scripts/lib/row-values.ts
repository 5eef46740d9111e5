/**
 * Published rows against the API's, value by value: both sides reduced to one canonical string
 * per row (the requesting company, every field column as its type stores it, the `_extra` object),
 * then matched as multisets. Shared by the soak check and the tests that promise "exactly the API
 * rows", so both mean the same thing by it.
 */

/** A column of a published dataset, as the manifest lists it. */
export interface PublishedColumn {
  name: string;
  type: string;
  role: string;
}

/** A published value (DuckDB's JSON-safe row objects: DECIMAL and BIGINT as strings) in canonical form. */
function canonicalPublished(type: string, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  switch (type) {
    case 'JSON':
      return JSON.stringify(JSON.parse(String(v)));
    case 'BIGINT':
    case 'DECIMAL(38,0)':
      return String(v);
    case 'VARCHAR':
      return v;
    default:
      return JSON.stringify(v);
  }
}

/** An API value in the canonical form its column stores. */
function canonicalApi(type: string, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  switch (type) {
    case 'JSON':
      return JSON.stringify(v);
    case 'BIGINT':
    case 'DECIMAL(38,0)':
      return String(v);
    case 'VARCHAR':
      return typeof v === 'string' ? v : JSON.stringify(v);
    default:
      return JSON.stringify(v);
  }
}

const fieldsOf = (columns: readonly PublishedColumn[]): PublishedColumn[] =>
  columns.filter((c) => c.role === 'field');

/** One API row of company `ticker` as a canonical string; fields without a column go to `_extra`. */
export function apiRowText(
  columns: readonly PublishedColumn[],
  ticker: string,
  row: Record<string, unknown>,
): string {
  const fields = fieldsOf(columns);
  const known = new Set(fields.map((c) => c.name));
  const extra = Object.fromEntries(Object.entries(row).filter(([k, v]) => !known.has(k) && v !== null));
  return JSON.stringify([ticker, ...fields.map((c) => canonicalApi(c.type, row[c.name])), extra]);
}

/** One published row (with its `_requested_ticker` and `_extra`) as a canonical string. */
export function publishedRowText(columns: readonly PublishedColumn[], row: Record<string, unknown>): string {
  const extra =
    row._extra === null || row._extra === undefined ? {} : (JSON.parse(String(row._extra)) as unknown);
  return JSON.stringify([
    String(row._requested_ticker),
    ...fieldsOf(columns).map((c) => canonicalPublished(c.type, row[c.name])),
    extra,
  ]);
}

export interface RowComparison {
  /** API rows with no equal published row (a row with a wrong value counts here and in `extra`). */
  lost: number;
  /** Published rows equal to no API row (wrong values, unknown rows). */
  extra: number;
  /** Published rows beyond the first with the same key. */
  duplicated: number;
  /** A few examples of each difference, for the report. */
  examples: string[];
}

/**
 * Matches published rows against the API's, both canonical. `keyOf` names a published row's grain
 * (company and key column), for the duplicate count.
 */
export function compareRowTexts(
  want: readonly string[],
  got: readonly string[],
  keyOf: (text: string) => string,
): RowComparison {
  const left = new Map<string, number>();
  for (const w of want) left.set(w, (left.get(w) ?? 0) + 1);
  const wanted = new Set(want);
  const keys = new Set<string>();
  const examples: string[] = [];
  let extra = 0;
  let duplicated = 0;
  for (const g of got) {
    const key = keyOf(g);
    if (keys.has(key)) duplicated++;
    keys.add(key);
    const n = left.get(g) ?? 0;
    if (n > 0) left.set(g, n - 1);
    if (!wanted.has(g)) {
      extra++;
      if (examples.length < 3) examples.push(`extra: ${g.slice(0, 200)}`);
    }
  }
  let lost = 0;
  for (const [w, n] of left) {
    lost += n;
    if (n > 0 && examples.length < 6) examples.push(`lost: ${w.slice(0, 200)}`);
  }
  return { lost, extra, duplicated, examples };
}
