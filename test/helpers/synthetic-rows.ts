/**
 * Fact-like rows with the fields of interface 2.2 (plus the facts/full dimensional fields and one
 * field the interface does not name), for benchmarks and tests of the output path. Deterministic
 * and cheap to generate (no hashing per row), with the awkward values real data has: integers
 * beyond 2^53, negative and positive scales, null dates and booleans, empty and filled lists.
 */

/** value_scaled_int × 10^scale as exact decimal text (the identity value_num must satisfy). */
export function exactDecimal(scaledInt: string, scale: number): string {
  const m = /^(-?)0*(\d+)$/.exec(scaledInt);
  if (m === null) throw new Error(`not an integer: ${scaledInt}`);
  const digits = m[2]!;
  if (/^0+$/.test(digits)) return '0';
  let out: string;
  if (scale >= 0) {
    out = digits + '0'.repeat(scale);
  } else {
    const k = -scale;
    const padded = digits.padStart(k + 1, '0');
    const int = padded.slice(0, padded.length - k).replace(/^0+(?=\d)/, '');
    const frac = padded.slice(padded.length - k).replace(/0+$/, '');
    out = frac === '' ? int : `${int}.${frac}`;
  }
  return m[1] + out;
}

const HEX = '0123456789abcdef';

/** A 64-hex key from an integer (not a real hash; stable and distinct per input). */
export function hexKey(n: number, salt: number): string {
  let s = '';
  let x = (n * 2654435761 + salt * 40503) >>> 0;
  for (let i = 0; i < 64; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    s += HEX[(x >>> 16) & 15];
  }
  return s;
}

const keyCache = new Map<string, string>();

/** hexKey for the few thousand distinct series and dimension keys, computed once each. */
function cachedKey(n: number, salt: number): string {
  const k = `${salt}:${n}`;
  let v = keyCache.get(k);
  if (v === undefined) keyCache.set(k, (v = hexKey(n, salt)));
  return v;
}

/** A unique 64-hex key per row without per-row hashing: a fixed prefix and the row number. */
function rowKey(i: number, salt: number): string {
  return cachedKey(salt, 1000 + salt).slice(0, 52) + i.toString(16).padStart(12, '0');
}

export interface SyntheticCompany {
  cik: string;
  ticker: string;
}

/**
 * Fact row `i` of a company. Every 97th value is beyond 2^53; scales run from -4 to 3; instants
 * have a null period_start; odd rows are dimensional (dims_key, axis_types, label, and the raw
 * axis/member path under `axis_member_path`, a field the interface does not name).
 */
export function syntheticFactRow(i: number, company: SyntheticCompany): Record<string, unknown> {
  const year = 2010 + (i % 15);
  const quarter = 1 + (i % 4);
  const instant = i % 3 === 0;
  const end = `${year}-${String(quarter * 3).padStart(2, '0')}-${quarter === 1 || quarter === 4 ? '31' : '30'}`;
  const start = `${year - 1}-${String(quarter * 3).padStart(2, '0')}-01`;
  const scale = (i % 8) - 4;
  const scaled =
    i % 97 === 0
      ? `${i % 2 === 0 ? '' : '-'}9007199254740993${String(i % 1000).padStart(3, '0')}`
      : String(((i * 7919) % 2_000_000_007) - 1_000_000_003);
  const dimensional = i % 2 === 1;
  const metric = `us-gaap#Metric${i % 500}`;
  return {
    fact_key: rowKey(i, 1),
    series_key: cachedKey(i % 3000, 2),
    cik: company.cik,
    current_ticker: company.ticker,
    metric_id: metric,
    metric_label: `Metric ${i % 500}`,
    period_key: instant ? `instant:${end}` : `duration:${start}..${end}`,
    period_kind: instant ? 'instant' : 'duration',
    period_start: instant ? null : start,
    period_end: end,
    period_end_year: year,
    period_end_quarter: quarter,
    unit_signature: 'monetary:USD',
    unit_class: 'monetary',
    currency: 'USD',
    value_num: exactDecimal(scaled, scale),
    value_scaled_int: scaled,
    scale,
    source_accession: `${company.cik}-${String(year).slice(2)}-${String(i % 100000).padStart(6, '0')}`,
    source_form_type: quarter === 4 ? '10-K' : '10-Q',
    source_is_amendment: i % 11 === 0 ? null : i % 13 === 0,
    source_is_current_filing_period: i % 5 === 0 ? null : i % 7 !== 0,
    source_filed_at: `${year + (quarter === 4 ? 1 : 0)}-${quarter === 4 ? '02' : String(quarter * 3 + 1).padStart(2, '0')}-15`,
    evidence_key: rowKey(i, 3).slice(24),
    evidence_url: `/api/evidence/${rowKey(i, 3).slice(40)}/open?fact=${i}`,
    is_consolidated: !dimensional,
    dims_key: dimensional ? cachedKey(i % 50, 4) : null,
    axis_types: dimensional ? ['us-gaap:StatementBusinessSegmentsAxis'] : [],
    dimension_path_label: dimensional ? `Segment ${i % 50}` : null,
    axis_member_path: dimensional
      ? [{ axis: 'us-gaap:StatementBusinessSegmentsAxis', member: `acme:Segment${i % 50}Member` }]
      : null,
  };
}
