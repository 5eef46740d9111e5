/**
 * Synthetic issuers for load tests. `--synthetic N` adds N clones of the real companies (round
 * robin over those with facts), tickers SYN0001…, CIKs from 9000000001 upward (skipping any CIK or
 * ticker the tickers map or the data already uses), names ending `(synthetic clone of <source>)`.
 * A clone's rows are the source's rows rebuilt under the clone's identity, so every key differs.
 *
 * `syntheticLargeRows: M` adds SYNBIG, a clone of the largest company whose facts/full has exactly
 * M rows, generated on demand: row i is source row ⌊i / K⌋ (K = ⌈M / n⌉ copies of the n source
 * rows, so the newest-period-first order holds) in copy i mod K; copies ≥ 1 are dimensional slices
 * of an extra axis `syn:CopyAxis` (member `syn:Copy<k>Member`). The array is a Proxy: indexing,
 * length, iteration and JSON.stringify work, and nothing is held beyond the n source rows.
 */
import type { FactRow } from '../../store.js';
import { seriesIdentity, sha256Hex } from '../fields/index.js';

export const SYNTHETIC_CIK_START = 9_000_000_001;

export interface SyntheticPlan {
  cik: string;
  ticker: string;
  name: string;
  sourceCik: string;
}

export function planSynthetic(
  count: number,
  sources: readonly { cik: string; name: string }[],
  takenCiks: ReadonlySet<string>,
  takenTickers: ReadonlySet<string>,
  firstCik = SYNTHETIC_CIK_START,
): { plans: SyntheticPlan[]; nextCik: number } {
  const plans: SyntheticPlan[] = [];
  let cikNum = firstCik;
  let n = 0;
  const width = Math.max(4, String(count).length);
  for (let i = 0; plans.length < count && sources.length > 0; i += 1) {
    const src = sources[i % sources.length];
    if (src === undefined) break;
    let cik = String(cikNum).padStart(10, '0');
    while (takenCiks.has(cik)) cik = String(++cikNum).padStart(10, '0');
    cikNum += 1;
    let ticker = '';
    do {
      n += 1;
      ticker = `SYN${String(n).padStart(width, '0')}`;
    } while (takenTickers.has(ticker));
    plans.push({
      cik,
      ticker,
      name: `Synthetic Issuer ${ticker.slice(3)} (synthetic clone of ${src.name})`,
      sourceCik: src.cik,
    });
  }
  return { plans, nextCik: cikNum };
}

const COPY_AXIS = 'syn:CopyAxis';

/** A read-only array of `total` rows generated from `base` (see module comment). */
export function virtualFactRows(base: readonly FactRow[], total: number): readonly FactRow[] {
  const n = base.length;
  if (n === 0 || total <= 0) return [];
  const copies = Math.ceil(total / n);
  const width = Math.max(4, String(copies).length);
  const seriesKeys = new Map<string, string>();

  const rowAt = (i: number): FactRow | undefined => {
    if (!Number.isInteger(i) || i < 0 || i >= total) return undefined;
    const j = Math.floor(i / copies);
    const k = i % copies;
    const b = base[j];
    if (b === undefined) return undefined;
    if (k === 0) return b;
    const member = `syn:Copy${String(k).padStart(width, '0')}Member`;
    const baseDims = b.dims_key ?? null;
    const pairs = baseDims === null ? [] : baseDims.split(';');
    pairs.push(`${COPY_AXIS}=${member}`);
    pairs.sort();
    const dimsKey = pairs.join(';');
    const identity = seriesIdentity(b.cik, b.metric_id, dimsKey, b.unit_signature);
    let seriesKey = seriesKeys.get(identity);
    if (seriesKey === undefined) {
      seriesKey = sha256Hex(identity);
      seriesKeys.set(identity, seriesKey);
    }
    const baseLabel = b.dimension_path_label ?? null;
    const copyLabel = `Synthetic Copy: ${k}`;
    const basePath = b.dims_path ?? null;
    return {
      ...b,
      fact_key: sha256Hex(`${identity}|${b.period_key}`),
      series_key: seriesKey,
      evidence_key: null,
      evidence_url: null,
      is_consolidated: false,
      dims_key: dimsKey,
      axis_types: pairs.map((p) => p.slice(0, p.indexOf('='))),
      dimension_path_label: baseLabel === null ? copyLabel : `${baseLabel} | ${copyLabel}`,
      dims_path: basePath === null ? `${COPY_AXIS}/${member}` : `${basePath}|${COPY_AXIS}/${member}`,
    };
  };

  const indexOf = (prop: string | symbol): number | undefined => {
    if (typeof prop !== 'string' || prop === '' || !/^\d+$/.test(prop)) return undefined;
    return Number(prop);
  };
  return new Proxy([] as FactRow[], {
    get(target, prop, receiver) {
      if (prop === 'length') return total;
      const i = indexOf(prop);
      if (i !== undefined) return rowAt(i);
      return Reflect.get(target, prop, receiver) as unknown;
    },
    has(target, prop) {
      const i = indexOf(prop);
      if (i !== undefined) return i < total;
      return Reflect.has(target, prop);
    },
    set() {
      return false;
    },
  });
}
