/**
 * The registry behind search/entities, search/series and the series suggestions of search/filings:
 * per company, one entity per metric (metric_id), per dimension member (from the dims catalog) and
 * per series (from the series catalog), each with the result fields of section 2.5 and a short
 * searchable text (labels plus the camel-case words of the XBRL names). Company shards load
 * lazily from the store; a BM25 index is built per searched population (one company, a set, or
 * every real company for cross-company search: synthetic load-test clones are left out there) and
 * kept in a small LRU.
 */
import type { EmulatorStore, Row, SeriesMetadata } from '../../store.js';
import { Bm25Index } from './bm25.js';
import { tokenize } from './tokenize.js';

export const ENTITY_TYPES = ['metric', 'member', 'series'] as const;
export type EntityType = (typeof ENTITY_TYPES)[number];

/** An entity search result of section 2.5 without `rank`. */
export interface EntityFields {
  entity_type: EntityType;
  entity_id: string;
  cik: string | null;
  title: string | null;
  subtitle: string | null;
  category: string | null;
  series_point_count: number | null;
  series_last_period: string | null;
  metric_id: string | null;
  dims_key: string | null;
  unit_signature: string | null;
  series_key: string | null;
  meaning_hint: string | null;
  meaning_disclaimer: string | null;
  meaning_tooltip: string | null;
  needs_meaning_tooltip: boolean;
}

export interface Entity {
  fields: EntityFields;
  /** Series entities: the 2.8 metadata (for search/series rows and top_series). */
  metadata: SeriesMetadata | null;
  text: string;
}

export interface EntityHit {
  entity: Entity;
  /** −BM25: lower is better. */
  rank: number;
}

/** Populations indexed at once (cross-company + a few companies/sets). */
const LRU_SIZE = 16;

const str = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** `RevenueFromContractWithCustomer` → `Revenue From Contract With Customer`. */
export function splitCamel(name: string): string {
  return name
    .replace(/^[^:#]*[:#]/, '')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2');
}

/**
 * Searchable text: the labels, plus the words of the XBRL names that the labels do not already
 * hold (so a term is not counted twice just because label and name agree).
 */
function searchText(labels: ReadonlyArray<string | null>, names: readonly string[]): string {
  const text = labels.filter((l): l is string => l !== null && l.length > 0).join('\n');
  const have = new Set(tokenize(text));
  const extra = names.flatMap((n) => tokenize(splitCamel(n))).filter((t) => !have.has(t));
  return extra.length > 0 ? `${text}\n${[...new Set(extra)].join(' ')}` : text;
}

function taxonomyOf(metricId: string): string {
  return metricId.split('#')[0] ?? metricId;
}

/** Entities of one company from its catalogs: its series, then its metrics, then its members. */
export async function companyEntities(store: EmulatorStore, cik: string): Promise<Entity[]> {
  const name = store.resolve({ cik })?.name ?? null;
  const [seriesRows, dimsRows] = await Promise.all([store.seriesCatalog(cik), store.dimsCatalog(cik)]);
  const { series, metrics } = await seriesEntities(store, cik, seriesRows);
  return [...series, ...metricEntities(metrics, series, cik, name), ...memberEntities(dimsRows, cik)];
}

/** The series catalog rows of one metric, and its consolidated series (if any). */
interface MetricRows {
  label: string;
  rows: Row[];
  consolidated: Row | undefined;
}

/** One entity per series (with its metadata), and the series grouped by metric. */
async function seriesEntities(
  store: EmulatorStore,
  cik: string,
  seriesRows: readonly Row[],
): Promise<{ series: Entity[]; metrics: Map<string, MetricRows> }> {
  const series: Entity[] = [];
  const metrics = new Map<string, MetricRows>();
  for (const r of seriesRows) {
    const metricId = str(r.metric_id);
    const seriesKey = str(r.series_key);
    const seriesId = str(r.series_id);
    if (!metricId || !seriesKey || !seriesId) continue;
    const label = str(r.metric_label) ?? splitCamel(metricId);
    let m = metrics.get(metricId);
    if (!m) metrics.set(metricId, (m = { label, rows: [], consolidated: undefined }));
    m.rows.push(r);
    const dimsKey = str(r.dims_key);
    if (dimsKey === null && m.consolidated === undefined) m.consolidated = r;
    const metadata = (await store.seriesById(seriesId)) ?? null;
    const slice = str(r.dimension_path_label) ?? 'Consolidated';
    const unit = str(r.unit_signature);
    series.push({
      fields: {
        entity_type: 'series',
        entity_id: seriesId,
        cik,
        title: label,
        subtitle: metadata?.subtitle ?? `${slice} · ${unit ?? ''}`,
        category: str(r.series_kind),
        series_point_count: num(r.observation_count) ?? metadata?.point_count ?? null,
        series_last_period: str(r.last_period_end),
        metric_id: metricId,
        dims_key: dimsKey,
        unit_signature: unit,
        series_key: seriesKey,
        meaning_hint: str(metadata?.meaning_hint),
        meaning_disclaimer: str(metadata?.meaning_disclaimer),
        meaning_tooltip: str(metadata?.meaning_tooltip),
        needs_meaning_tooltip: metadata?.needs_meaning_tooltip ?? dimsKey !== null,
      },
      metadata,
      text: searchText([label, slice, unit], [metricId]),
    });
  }
  return { series, metrics };
}

/** One entity per metric; meaning fields from its consolidated series' metadata. */
function metricEntities(
  metrics: ReadonlyMap<string, MetricRows>,
  series: readonly Entity[],
  cik: string,
  name: string | null,
): Entity[] {
  const out: Entity[] = [];
  for (const [metricId, m] of metrics) {
    const c = m.consolidated;
    const meta = c ? series.find((e) => e.fields.series_key === str(c.series_key))?.metadata : undefined;
    let last: string | null = null;
    for (const r of m.rows) {
      const l = str(r.last_period_end);
      if (l !== null && (last === null || l > last)) last = l;
    }
    out.push({
      fields: {
        entity_type: 'metric',
        entity_id: metricId,
        cik,
        title: m.label,
        subtitle: `${name ?? cik} · ${m.rows.length} series`,
        category: taxonomyOf(metricId),
        series_point_count: c ? num(c.observation_count) : null,
        series_last_period: last,
        metric_id: metricId,
        dims_key: null,
        unit_signature: c ? str(c.unit_signature) : null,
        series_key: null,
        meaning_hint: str(meta?.meaning_hint),
        meaning_disclaimer: str(meta?.meaning_disclaimer),
        meaning_tooltip: str(meta?.meaning_tooltip),
        needs_meaning_tooltip: meta?.needs_meaning_tooltip ?? false,
      },
      metadata: null,
      text: searchText([m.label], [metricId]),
    });
  }
  return out;
}

/**
 * One entity per explicit dimension member (typed members are values, not entities), first seen
 * first; its dims_key when it slices alone, its latest period over every combination.
 */
function memberEntities(dimsRows: readonly Row[], cik: string): Entity[] {
  const members = new Map<string, Entity>();
  for (const r of dimsRows) {
    const list = Array.isArray(r.members) ? (r.members as Row[]) : [];
    const single = list.length === 1;
    for (const mem of list) {
      const member = str(mem.member);
      const axis = str(mem.axis);
      if (!member || !axis || mem.typed === true) continue;
      const existing = members.get(member);
      const last = str(r.last_period_end);
      if (existing) {
        if (single) existing.fields.dims_key ??= str(r.dims_key);
        if (last !== null && (existing.fields.series_last_period ?? '') < last)
          existing.fields.series_last_period = last;
        continue;
      }
      members.set(member, memberEntity(r, mem, cik, single ? str(r.dims_key) : null, last));
    }
  }
  return [...members.values()];
}

function memberEntity(r: Row, mem: Row, cik: string, dimsKey: string | null, last: string | null): Entity {
  const member = str(mem.member) ?? '';
  const axis = str(mem.axis) ?? '';
  const memberLabel = str(mem.member_label) ?? splitCamel(member);
  const axisLabel = str(mem.axis_label) ?? splitCamel(axis);
  const category =
    r.is_geographic_like === true
      ? 'geographic'
      : r.is_business_segment_like === true
        ? 'business_segment'
        : r.is_product_like === true
          ? 'product'
          : 'other';
  return {
    fields: {
      entity_type: 'member',
      entity_id: member,
      cik,
      title: memberLabel,
      subtitle: axisLabel,
      category,
      series_point_count: null,
      series_last_period: last,
      metric_id: null,
      dims_key: dimsKey,
      unit_signature: null,
      series_key: null,
      meaning_hint: null,
      meaning_disclaimer: null,
      meaning_tooltip: null,
      needs_meaning_tooltip: false,
    },
    metadata: null,
    text: searchText([memberLabel, axisLabel], [member, axis]),
  };
}

interface Population {
  entities: Entity[];
  bm25: Bm25Index;
}

export class EntityRegistry {
  private readonly shards = new Map<string, Promise<Entity[]>>();
  private readonly populations = new Map<string, Promise<Population>>();

  constructor(private readonly store: EmulatorStore) {}

  /** Entities of one company (loaded once). */
  shard(cik: string): Promise<Entity[]> {
    let s = this.shards.get(cik);
    if (!s) {
      s = companyEntities(this.store, cik).catch((err: unknown) => {
        this.shards.delete(cik);
        throw err;
      });
      this.shards.set(cik, s);
    }
    return s;
  }

  /** CIKs of a cross-company search: every real (non-synthetic) company. */
  crossCompanyCiks(): string[] {
    return this.store
      .companies()
      .filter((c) => !c.synthetic)
      .map((c) => c.cik);
  }

  private population(ciks: readonly string[] | null): Promise<Population> {
    const list = ciks === null ? this.crossCompanyCiks() : [...new Set(ciks)].sort();
    const key = ciks === null ? '*' : list.join(',');
    const cached = this.populations.get(key);
    if (cached) {
      this.populations.delete(key); // refresh LRU position
      this.populations.set(key, cached);
      return cached;
    }
    const built = (async (): Promise<Population> => {
      const entities = (await Promise.all(list.map((cik) => this.shard(cik)))).flat();
      const bm25 = new Bm25Index(entities.map((e, id) => ({ id, tokens: tokenize(e.text) })));
      return { entities, bm25 };
    })().catch((err: unknown) => {
      this.populations.delete(key);
      throw err;
    });
    this.populations.set(key, built);
    while (this.populations.size > LRU_SIZE) {
      const oldest = this.populations.keys().next().value;
      if (oldest === undefined) break;
      this.populations.delete(oldest);
    }
    return built;
  }

  /**
   * Entities of the population (`ciks`, or null for cross-company) matching `terms`, best first:
   * entities holding every term if any does, else entities holding any term. Ties: metric, member,
   * series, then entity id.
   */
  async search(
    terms: readonly string[],
    ciks: readonly string[] | null,
    types: ReadonlySet<EntityType> | null,
  ): Promise<EntityHit[]> {
    const { entities, bm25 } = await this.population(ciks);
    const accept = types ? (id: number) => types.has((entities[id] as Entity).fields.entity_type) : undefined;
    const hits = bm25.search(terms, accept);
    const distinct = new Set(terms);
    const all = hits.filter((h) => h.matched.length === distinct.size);
    const chosen = all.length > 0 ? all : hits;
    const order = (t: EntityType): number => ENTITY_TYPES.indexOf(t);
    return chosen
      .map((h) => ({ entity: entities[h.id] as Entity, rank: -h.bm25 }))
      .sort(
        (a, b) =>
          a.rank - b.rank ||
          order(a.entity.fields.entity_type) - order(b.entity.fields.entity_type) ||
          (a.entity.fields.entity_id < b.entity.fields.entity_id
            ? -1
            : a.entity.fields.entity_id > b.entity.fields.entity_id
              ? 1
              : 0),
      );
  }

  /** search/filings `series_suggestions`: the best series of the scope for the query terms. */
  async suggestSeries(
    terms: readonly string[],
    ciks: ReadonlySet<string> | null,
    limit: number,
  ): Promise<Row[]> {
    const hits = await this.search(terms, ciks ? [...ciks] : null, new Set<EntityType>(['series']));
    return hits.slice(0, limit).map((h) => {
      const f = h.entity.fields;
      const m = h.entity.metadata;
      return {
        series_id: f.entity_id,
        series_key: f.series_key,
        cik: f.cik,
        ticker: m?.ticker ?? null,
        company_name: m?.company_name ?? null,
        metric_id: f.metric_id,
        title: f.title,
        subtitle: f.subtitle,
        dims_key: f.dims_key,
        unit_signature: f.unit_signature,
        point_count: f.series_point_count,
        last_period_end: f.series_last_period,
        rank: round6(h.rank),
        blob_url: m?.serving.blob_url ?? null,
      };
    });
  }
}

export const round6 = (x: number): number => Math.round(x * 1e6) / 1e6;
