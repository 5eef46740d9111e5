/**
 * Synthetic clones are views over their source company's built data: each row is rewritten on
 * access (cik, ticker, name and every key recomputed for the clone's identity), nothing is copied
 * or cached per clone beyond a series-key memo. Lists are read-only Proxies over the source arrays
 * (index, length, iteration, JSON.stringify work), so thousands of clones cost no memory and a
 * request for one costs only the hashing of the rows it returns.
 */
import type { EvidenceLocation, EvidenceRow, FactRow, SeriesBlob, SeriesCatalogRow, SeriesMetadata } from '../../store.js';
import { blobUrlOf, evidenceUrlOf, seriesIdentity, seriesIdOf, sha256Hex, viewerUrlOf } from '../fields/index.js';

export interface CloneIdentity {
  cik: string;
  ticker: string | null;
  name: string;
  sourceCik: string;
  sourceName: string;
}

/** A read-only array whose element i is map(source[i]), computed on access. */
export function mappedView<T, U>(source: readonly T[], map: (t: T) => U): readonly U[] {
  const indexOf = (prop: string | symbol): number | undefined =>
    typeof prop === 'string' && /^\d+$/.test(prop) ? Number(prop) : undefined;
  return new Proxy([] as U[], {
    get(target, prop, receiver) {
      if (prop === 'length') return source.length;
      const i = indexOf(prop);
      if (i !== undefined) {
        const v = source[i];
        return v === undefined ? undefined : map(v);
      }
      return Reflect.get(target, prop, receiver) as unknown;
    },
    has(target, prop) {
      const i = indexOf(prop);
      return i !== undefined ? i < source.length : Reflect.has(target, prop);
    },
    set() {
      return false;
    },
  });
}

export class CloneRewriter {
  private readonly seriesKeys = new Map<string, string>();
  /** Clone series_id → source series_id, built on first lookup. */
  private idMap?: Map<string, string>;

  constructor(readonly id: CloneIdentity) {}

  private seriesKey(metricId: string, dimsKey: string | null, unit: string): string {
    const identity = seriesIdentity(this.id.cik, metricId, dimsKey, unit);
    let k = this.seriesKeys.get(identity);
    if (k === undefined) {
      k = sha256Hex(identity);
      this.seriesKeys.set(identity, k);
    }
    return k;
  }

  private factKey(metricId: string, dimsKey: string | null, unit: string, periodKey: string): string {
    return sha256Hex(`${seriesIdentity(this.id.cik, metricId, dimsKey, unit)}|${periodKey}`);
  }

  /** `ev_<source cik>_<hex>` → `ev_<clone cik>_<hex>` (and back with toSource). */
  evidenceKey(key: string | null): string | null {
    return key === null ? null : key.replace(`ev_${this.id.sourceCik}_`, `ev_${this.id.cik}_`);
  }

  sourceEvidenceKey(key: string): string {
    return key.replace(`ev_${this.id.cik}_`, `ev_${this.id.sourceCik}_`);
  }

  fact = (r: FactRow): FactRow => {
    const dimsKey = r.dims_key ?? null;
    const evidenceKey = this.evidenceKey(r.evidence_key);
    const out: FactRow = {
      ...r,
      fact_key: this.factKey(r.metric_id, dimsKey, r.unit_signature, r.period_key),
      series_key: this.seriesKey(r.metric_id, dimsKey, r.unit_signature),
      cik: this.id.cik,
      current_ticker: this.id.ticker,
      evidence_key: evidenceKey,
      evidence_url: evidenceKey === null ? null : evidenceUrlOf(evidenceKey),
    };
    const from = r.derived_from_period_keys;
    if (Array.isArray(from)) {
      out.derived_from_fact_keys = from.map((p) => this.factKey(r.metric_id, dimsKey, r.unit_signature, String(p)));
    }
    return out;
  };

  evidence = (e: EvidenceRow): EvidenceRow => {
    const key = this.evidenceKey(e.evidence_key) ?? e.evidence_key;
    const metricId = e.metric_id;
    const dimsKey = e.dims_key;
    const unit = e.unit_signature;
    return {
      ...e,
      evidence_key: key,
      cik: this.id.cik,
      evidence_url: evidenceUrlOf(key),
      viewer_url: e.viewer_url === null ? null : viewerUrlOf(key),
      fact_key: this.factKey(metricId, dimsKey, unit, e.period_key),
      series_key: this.seriesKey(metricId, dimsKey, unit),
    };
  };

  location = (l: EvidenceLocation): EvidenceLocation => ({ ...l, evidence: this.evidence(l.evidence) });

  private cloneSeriesId(metricId: string, dimsKey: string | null, unit: string): { key: string; id: string } {
    const key = this.seriesKey(metricId, dimsKey, unit);
    return { key, id: seriesIdOf(this.id.cik, key) };
  }

  catalogRow = (r: SeriesCatalogRow): SeriesCatalogRow => {
    const s = this.cloneSeriesId(r.metric_id, r.dims_key, r.unit_signature);
    return { ...r, series_key: s.key, series_id: s.id, cik: this.id.cik, current_ticker: this.id.ticker, blob_url: blobUrlOf(s.id, Number(r.series_version)) };
  };

  metadata = (m: SeriesMetadata): SeriesMetadata => {
    const s = this.cloneSeriesId(m.metric_id, m.dims_key === '' ? null : m.dims_key, m.unit_signature);
    return {
      ...m,
      series_id: s.id,
      series_key: s.key,
      cik: this.id.cik,
      ticker: this.id.ticker ?? '',
      current_ticker: this.id.ticker ?? '',
      company_name: this.id.name,
      subtitle: m.subtitle.replace(this.id.sourceName, this.id.name),
      serving: { ...m.serving, blob_url: blobUrlOf(s.id, m.serving.series_version) },
    };
  };

  blob = (b: SeriesBlob): SeriesBlob => {
    const metricId = String(b.metric_id);
    const dimsKey = b.dims_key ?? null;
    const unit = String(b.unit_signature);
    const s = this.cloneSeriesId(metricId, dimsKey, unit);
    const points = b.points.map((p) => ({ ...p, fact_key: this.factKey(metricId, dimsKey, unit, p.period_key) }));
    return { ...b, series_id: s.id, series_key: s.key, cik: this.id.cik, ticker: this.id.ticker, points };
  };

  /** The source series_id behind a clone series_id. */
  sourceSeriesId(cloneId: string, sourceCatalog: readonly SeriesCatalogRow[]): string | undefined {
    if (this.idMap === undefined) {
      this.idMap = new Map();
      for (const r of sourceCatalog) {
        const s = this.cloneSeriesId(r.metric_id, r.dims_key, r.unit_signature);
        this.idMap.set(s.id, r.series_id);
      }
    }
    return this.idMap.get(cloneId);
  }
}
