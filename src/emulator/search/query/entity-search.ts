/**
 * search/entities (section 4.7) and search/series (section 4.8) over the entity registry.
 * - search/entities: `query` at least 2 characters; `types` ⊆ metric, member, series; `limit`
 *   default 20, 1 to 50; `offset` 0 to 200. Envelope of section 2.5; `count` = results returned.
 * - search/series (our bounds, the interface leaves them open): `query` required (1 to 500 characters);
 *   `limit` default 10, 1 to 50; `fetch_top` 0 to 5 (default 0) hydrates `top_series` with the
 *   2.8 metadata of the first N results.
 * Both accept every scope; cross-company search (no company field) needs the key's
 * `cross_company_search` entitlement, as on search/filings (section 7: 403 when cross-company
 * search is not enabled for the key).
 */
import type { AuthenticatedKey } from '../../auth/authenticator.js';
import { badRequest } from '../../server/http-error.js';
import { optionalInteger, type Body } from '../../server/request-fields.js';
import { ENTITY_TYPES, round6, type EntityType } from '../indexes/index.js';
import { parseQuery, requireCrossCompany } from './filing-search.js';
import { parseSearchScope, resolveScope, scopeEnvelope, type ParsedSearchScope } from './scope.js';
import type { SearchService } from '../service.js';

export const ENTITY_QUERY_MIN_CHARS = 2;
export const ENTITY_LIMIT_DEFAULT = 20;
export const ENTITY_LIMIT_MAX = 50;
export const ENTITY_OFFSET_MAX = 200;
export const SERIES_SEARCH_LIMIT_DEFAULT = 10;
export const SERIES_SEARCH_LIMIT_MAX = 50;
export const FETCH_TOP_MAX = 5;

function searchableQuery(body: Body, minChars: number): { query: string; terms: string[] } {
  const q = parseQuery(body, minChars);
  if (q.terms.length === 0)
    throw badRequest('query must contain at least one searchable term (not only stop words)');
  return q;
}

export interface EntitySearchParams {
  query: string;
  terms: string[];
  scope: ParsedSearchScope;
  types: EntityType[] | null;
  limit: number;
  offset: number;
}

export function parseEntitySearch(body: Body, auth: AuthenticatedKey): EntitySearchParams {
  const { query, terms } = searchableQuery(body, ENTITY_QUERY_MIN_CHARS);
  const scope = parseSearchScope(body);
  if (scope.kind === 'cross_company') requireCrossCompany(auth);
  let types: EntityType[] | null = null;
  if (body.types !== undefined && body.types !== null) {
    const v = body.types;
    if (!Array.isArray(v) || v.length === 0) {
      throw badRequest(`types must be a non-empty array of entity types (${ENTITY_TYPES.join(', ')})`);
    }
    types = [];
    v.forEach((t: unknown, i) => {
      if (typeof t !== 'string' || !(ENTITY_TYPES as readonly string[]).includes(t)) {
        throw badRequest(`types[${i}] must be one of ${ENTITY_TYPES.join(', ')} (got ${JSON.stringify(t)})`);
      }
      if (!types?.includes(t as EntityType)) types?.push(t as EntityType);
    });
  }
  const limit = optionalInteger(body, 'limit', 1, ENTITY_LIMIT_MAX) ?? ENTITY_LIMIT_DEFAULT;
  const offset = optionalInteger(body, 'offset', 0, ENTITY_OFFSET_MAX) ?? 0;
  return { query, terms, scope, types, limit, offset };
}

function scopeCiks(
  service: SearchService,
  scope: ParsedSearchScope,
): { ciks: string[] | null; env: ReturnType<typeof scopeEnvelope> } {
  const companies = resolveScope(scope, (q) => service.resolveCompany(q));
  return { ciks: companies ? companies.map((c) => c.cik) : null, env: scopeEnvelope(scope, companies) };
}

/** The fields both registry searches start with (section 2.5): scope, query, the scope's ids, limit. */
function envelopeHead(
  p: { scope: ParsedSearchScope; query: string; limit: number },
  env: ReturnType<typeof scopeEnvelope>,
): Record<string, unknown> {
  return {
    scope: p.scope.kind,
    query: p.query,
    ticker: env.ticker,
    cik: env.cik,
    tickers: env.tickers,
    ciks: env.ciks,
    limit: p.limit,
  };
}

export async function runEntitySearch(
  service: SearchService,
  p: EntitySearchParams,
): Promise<Record<string, unknown>> {
  const { ciks, env } = scopeCiks(service, p.scope);
  const hits = await service.registry().search(p.terms, ciks, p.types ? new Set(p.types) : null);
  const page = hits.slice(p.offset, p.offset + p.limit);
  const results = page.map((h) => {
    const f = h.entity.fields;
    return {
      entity_type: f.entity_type,
      entity_id: f.entity_id,
      cik: f.cik,
      title: f.title,
      subtitle: f.subtitle,
      category: f.category,
      rank: round6(h.rank),
      series_point_count: f.series_point_count,
      series_last_period: f.series_last_period,
      metric_id: f.metric_id,
      dims_key: f.dims_key,
      unit_signature: f.unit_signature,
      series_key: f.series_key,
      meaning_hint: f.meaning_hint,
      meaning_disclaimer: f.meaning_disclaimer,
      meaning_tooltip: f.meaning_tooltip,
      needs_meaning_tooltip: f.needs_meaning_tooltip,
    };
  });
  return { ...envelopeHead(p, env), offset: p.offset, count: results.length, results };
}

export interface SeriesSearchParams {
  query: string;
  terms: string[];
  scope: ParsedSearchScope;
  limit: number;
  fetchTop: number;
}

export function parseSeriesSearch(body: Body, auth: AuthenticatedKey): SeriesSearchParams {
  const { query, terms } = searchableQuery(body, 1);
  const scope = parseSearchScope(body);
  if (scope.kind === 'cross_company') requireCrossCompany(auth);
  const limit = optionalInteger(body, 'limit', 1, SERIES_SEARCH_LIMIT_MAX) ?? SERIES_SEARCH_LIMIT_DEFAULT;
  const fetchTop = optionalInteger(body, 'fetch_top', 0, FETCH_TOP_MAX) ?? 0;
  return { query, terms, scope, limit, fetchTop };
}

export async function runSeriesSearch(
  service: SearchService,
  p: SeriesSearchParams,
): Promise<Record<string, unknown>> {
  const { ciks, env } = scopeCiks(service, p.scope);
  const hits = (await service.registry().search(p.terms, ciks, new Set<EntityType>(['series']))).slice(
    0,
    p.limit,
  );
  const results = hits.map((h) => {
    const f = h.entity.fields;
    const m = h.entity.metadata;
    // Company info and series metadata (2.8) without the serving block, which top_series carries.
    return {
      rank: round6(h.rank),
      series_id: f.entity_id,
      series_key: f.series_key,
      cik: f.cik,
      ticker: m?.ticker ?? null,
      current_ticker: m?.current_ticker ?? null,
      company_name: m?.company_name ?? null,
      metric_id: f.metric_id,
      title: f.title,
      subtitle: f.subtitle,
      dims_key: f.dims_key,
      unit_signature: f.unit_signature,
      y_label: m?.y_label ?? null,
      series_kind: m?.series_kind ?? f.category,
      is_active: m?.is_active ?? null,
      first_period_end: m?.first_period_end ?? null,
      last_period_end: f.series_last_period,
      point_count: f.series_point_count,
      meaning_hint: f.meaning_hint,
      meaning_disclaimer: f.meaning_disclaimer,
      meaning_tooltip: f.meaning_tooltip,
      needs_meaning_tooltip: f.needs_meaning_tooltip,
      blob_url: m?.serving.blob_url ?? null,
    };
  });
  const envelope: Record<string, unknown> = { ...envelopeHead(p, env), count: results.length, results };
  if (p.fetchTop > 0) {
    const top = [];
    for (const h of hits.slice(0, p.fetchTop)) {
      const meta = await service.store.seriesById(h.entity.fields.entity_id);
      if (meta) top.push(meta);
    }
    envelope.top_series = top;
  }
  return envelope;
}
