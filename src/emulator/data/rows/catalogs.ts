/**
 * Per-company catalogs derived from the fact rows: series catalog rows, dimension catalog rows,
 * series metadata (2.8) and the immutable series blobs behind serving.blob_url.
 */
import type { DimsCatalogRow, FactRow, SeriesBlob, SeriesCatalogRow, SeriesMetadata } from '../../store.js';
import { integerDigits, parseDecimal } from '../fields/index.js';
import { blobUrlOf, seriesIdOf, sha256Hex } from '../fields/index.js';
import { localName } from '../fields/index.js';
import type { FactGroup } from './observations.js';
import { unitLabel } from '../fields/index.js';

export interface SeriesEntry {
  seriesKey: string;
  seriesId: string;
  /** Rows of the series, oldest period first. */
  rows: FactRow[];
  metadata: SeriesMetadata;
  catalogRow: SeriesCatalogRow;
  blob: SeriesBlob;
}

const GEO_AXIS_RE = /Geograph|Country|Countries|Region|State|Jurisdiction|Domestic|Foreign/i;
const GEO_MEMBER_RE = /Americas|Europe|Asia|Pacific|China|Japan|UnitedStates|\bUS\b|NonUs|International|Domestic|Foreign|Country|Region|Emea|Apac|Taiwan|India|Canada|Mexico|Germany|Ireland|Singapore/i;
const SEGMENT_AXIS_RE = /Segment/i;
const PRODUCT_AXIS_RE = /Product|Service/i;

export function dimensionFlags(dims: readonly { axis: string; member: string }[]): {
  is_geographic_like: boolean;
  is_business_segment_like: boolean;
  is_product_like: boolean;
} {
  const axes = dims.map((d) => localName(d.axis));
  const members = dims.map((d) => localName(d.member));
  return {
    is_geographic_like: axes.some((a) => GEO_AXIS_RE.test(a)) || (axes.some((a) => SEGMENT_AXIS_RE.test(a)) && members.some((m) => GEO_MEMBER_RE.test(m))),
    is_business_segment_like: axes.some((a) => SEGMENT_AXIS_RE.test(a)),
    is_product_like: axes.some((a) => PRODUCT_AXIS_RE.test(a)),
  };
}

function preferredScale(rows: readonly FactRow[], unitClass: string): string {
  if (unitClass !== 'monetary' && unitClass !== 'shares') return 'units';
  let digits = 0;
  for (const r of rows) {
    const d = parseDecimal(r.value_num);
    if (d !== undefined) digits = Math.max(digits, integerDigits(d));
  }
  if (digits > 12) return 'trillions';
  if (digits > 9) return 'billions';
  if (digits > 6) return 'millions';
  if (digits > 3) return 'thousands';
  return 'units';
}

function addMonths(date: string, months: number): string {
  const y = Number.parseInt(date.slice(0, 4), 10);
  const m = Number.parseInt(date.slice(5, 7), 10) - 1 + months;
  const yy = y + Math.floor(m / 12);
  const mm = ((m % 12) + 12) % 12;
  return `${String(yy).padStart(4, '0')}-${String(mm + 1).padStart(2, '0')}${date.slice(7)}`;
}

/**
 * Builds series entries from full fact rows. `asOfDate` anchors is_active (last period within 18
 * months of it).
 */
export function buildSeries(
  rows: readonly FactRow[],
  company: SeriesCompany,
  descriptions: Map<string, string>,
  asOfDate: string | null,
): Map<string, SeriesEntry> {
  const activeFrom = asOfDate !== null ? addMonths(asOfDate, -18) : null;
  const out = new Map<string, SeriesEntry>();
  for (const [seriesKey, list] of groupBySeries(rows)) {
    list.sort(oldestFirst);
    const s = summarise(seriesKey, list, company);
    if (s === undefined) continue;
    const description = descriptions.get(s.first.metric_id) ?? '';
    out.set(s.seriesId, {
      seriesKey,
      seriesId: s.seriesId,
      rows: list,
      metadata: seriesMetadata(s, company, description, activeFrom),
      catalogRow: catalogRow(s, company),
      blob: seriesBlob(s, company),
    });
  }
  return out;
}

/** The company a series belongs to. */
type SeriesCompany = { cik: string; ticker: string | null; name: string };

/** What the metadata, the catalog row and the blob of one series are made of, computed once. */
interface SeriesSummary {
  seriesKey: string;
  seriesId: string;
  /** Rows oldest period first; first and last of them. */
  list: FactRow[];
  first: FactRow;
  last: FactRow;
  dimsKey: string | null;
  latestFiled: string;
  version: number;
  etag: string;
  points: SeriesBlob['points'];
  seriesKind: string;
  sliceLabel: string;
  blobUrl: string;
  builtAt: string;
}

function groupBySeries(rows: readonly FactRow[]): Map<string, FactRow[]> {
  const bySeries = new Map<string, FactRow[]>();
  for (const r of rows) {
    let list = bySeries.get(r.series_key);
    if (list === undefined) bySeries.set(r.series_key, (list = []));
    list.push(r);
  }
  return bySeries;
}

/** Oldest period end first; for one end, the longest period (earliest start) first. */
function oldestFirst(a: FactRow, b: FactRow): number {
  return a.period_end !== b.period_end
    ? a.period_end < b.period_end
      ? -1
      : 1
    : (a.period_start ?? '') < (b.period_start ?? '')
      ? 1
      : (a.period_start ?? '') > (b.period_start ?? '')
        ? -1
        : 0;
}

function summarise(seriesKey: string, list: FactRow[], company: SeriesCompany): SeriesSummary | undefined {
  const first = list[0];
  const last = list[list.length - 1];
  if (first === undefined || last === undefined) return undefined;
  const seriesId = seriesIdOf(company.cik, seriesKey);
  let latestFiled = '';
  for (const r of list) if (r.source_filed_at > latestFiled) latestFiled = r.source_filed_at;
  // The version is the latest filing date behind the points as YYYYMMDD: a point can only change
  // through a newer filing, so a (series_id, version) URL always serves the same blob.
  const version = Number.parseInt(latestFiled.replace(/-/g, ''), 10) || 0;
  const points = list.map((r) => ({
    period_key: r.period_key,
    period_start: r.period_start,
    period_end: r.period_end,
    value_num: r.value_num,
    value_scaled_int: r.value_scaled_int,
    scale: r.scale,
    fact_key: r.fact_key,
    source_accession: r.source_accession,
    source_filed_at: r.source_filed_at,
  }));
  const kinds = new Set(list.map((r) => r.period_kind));
  return {
    seriesKey,
    seriesId,
    list,
    first,
    last,
    dimsKey: first.dims_key ?? null,
    latestFiled,
    version,
    etag: `"${sha256Hex(JSON.stringify(points)).slice(0, 32)}"`,
    points,
    seriesKind: kinds.size > 1 ? 'mixed' : first.period_kind === 'instant' ? 'stock' : 'flow',
    sliceLabel: first.dimension_path_label ?? 'Consolidated',
    blobUrl: blobUrlOf(seriesId, version),
    builtAt: `${latestFiled}T00:00:00Z`,
  };
}

/** Series metadata of section 2.8. */
function seriesMetadata(
  s: SeriesSummary,
  company: SeriesCompany,
  description: string,
  activeFrom: string | null,
): SeriesMetadata {
  const { first, last, dimsKey } = s;
  const yLabel = unitLabelOf(first);
  return {
    series_id: s.seriesId,
    series_key: s.seriesKey,
    cik: company.cik,
    ticker: company.ticker ?? '',
    current_ticker: company.ticker ?? '',
    company_name: company.name,
    metric_id: first.metric_id,
    dims_hash: dimsKey === null ? '' : sha256Hex(dimsKey),
    dims_key: dimsKey ?? '',
    unit_signature: first.unit_signature,
    title: first.metric_label,
    subtitle: `${company.name} · ${s.sliceLabel} · ${yLabel}`,
    y_label: yLabel,
    preferred_scale: preferredScale(s.list, first.unit_class),
    series_kind: s.seriesKind,
    is_active: activeFrom !== null && last.period_end >= activeFrom,
    first_period_end: first.period_end,
    last_period_end: last.period_end,
    point_count: s.list.length,
    meaning_hint: description.split(/(?<=\.)\s/)[0] ?? '',
    meaning_disclaimer:
      dimsKey === null
        ? 'Consolidated value as reported in the filing.'
        : `Dimensional slice (${s.sliceLabel}); not the consolidated total.`,
    meaning_tooltip: description,
    needs_meaning_tooltip: dimsKey !== null || description.length > 0,
    serving: {
      series_version: s.version,
      etag: s.etag,
      points_count: s.list.length,
      first_period: first.period_key,
      last_period: last.period_key,
      built_at: s.builtAt,
      blob_url: s.blobUrl,
    },
  };
}

function catalogRow(s: SeriesSummary, company: SeriesCompany): SeriesCatalogRow {
  const { first, last } = s;
  return {
    series_key: s.seriesKey,
    series_id: s.seriesId,
    cik: company.cik,
    current_ticker: company.ticker,
    metric_id: first.metric_id,
    metric_label: first.metric_label,
    dims_key: s.dimsKey,
    dimension_path_label: first.dimension_path_label ?? null,
    axis_types: first.axis_types ?? [],
    unit_signature: first.unit_signature,
    unit_class: first.unit_class,
    currency: first.currency,
    is_consolidated: first.is_consolidated,
    series_kind: s.seriesKind,
    observation_count: s.list.length,
    first_period_end: first.period_end,
    last_period_end: last.period_end,
    latest_period_key: last.period_key,
    latest_value_num: last.value_num,
    latest_filed_at: s.latestFiled,
    filing_count: new Set(s.list.map((r) => r.source_accession)).size,
    series_version: s.version,
    blob_url: s.blobUrl,
  };
}

function seriesBlob(s: SeriesSummary, company: SeriesCompany): SeriesBlob {
  const { first } = s;
  return {
    series_id: s.seriesId,
    series_key: s.seriesKey,
    series_version: s.version,
    etag: s.etag,
    cik: company.cik,
    ticker: company.ticker,
    metric_id: first.metric_id,
    metric_label: first.metric_label,
    dims_key: s.dimsKey,
    unit_signature: first.unit_signature,
    built_at: s.builtAt,
    points_count: s.points.length,
    points: s.points,
  };
}

function unitLabelOf(r: FactRow): string {
  return unitLabel({ unit_signature: r.unit_signature, unit_class: r.unit_class, currency: r.currency });
}

/** Series catalog order: metric, consolidated first, then slice, then unit. */
export function compareCatalogRows(a: SeriesCatalogRow, b: SeriesCatalogRow): number {
  const k = (r: SeriesCatalogRow): string => `${r.metric_id}\u0000${r.dims_key === null ? '' : `\u0001${r.dims_key}`}\u0000${r.unit_signature}`;
  const x = k(a);
  const y = k(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Dimension catalog rows for a set of fact groups (dimensional ones only), with usage counts. */
export function buildDimsCatalog(
  items: readonly { row: FactRow; group: FactGroup }[],
  labelOf: (qname: string, kind: 'axis' | 'member') => string,
): DimsCatalogRow[] {
  const by = new Map<
    string,
    { group: FactGroup; label: string | null; facts: number; series: Set<string>; metrics: Set<string>; first: string; last: string }
  >();
  for (const { row, group } of items) {
    if (group.dimsKey === null) continue;
    let e = by.get(group.dimsKey);
    if (e === undefined) {
      e = {
        group,
        label: row.dimension_path_label ?? null,
        facts: 0,
        series: new Set(),
        metrics: new Set(),
        first: row.period_end,
        last: row.period_end,
      };
      by.set(group.dimsKey, e);
    }
    e.facts += 1;
    e.series.add(row.series_key);
    e.metrics.add(row.metric_id);
    if (row.period_end < e.first) e.first = row.period_end;
    if (row.period_end > e.last) e.last = row.period_end;
  }
  const rows: DimsCatalogRow[] = [];
  for (const [dimsKey, e] of by) {
    const dims = e.group.dims;
    rows.push({
      dims_key: dimsKey,
      dims_hash: sha256Hex(dimsKey),
      dimension_path_label: e.label,
      axis_types: dims.map((d) => d.axis),
      members: dims.map((d) => ({
        axis: d.axis,
        axis_label: labelOf(d.axis, 'axis'),
        member: d.member,
        member_label: d.typed ? d.member : labelOf(d.member, 'member'),
        typed: d.typed,
      })),
      dimension_count: dims.length,
      ...dimensionFlags(dims),
      fact_count: e.facts,
      series_count: e.series.size,
      metric_count: e.metrics.size,
      first_period_end: e.first,
      last_period_end: e.last,
    });
  }
  return rows.sort((a, b) => (a.dims_key < b.dims_key ? -1 : 1));
}
