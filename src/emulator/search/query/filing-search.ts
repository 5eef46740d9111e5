/**
 * search/filings (section 4.9): request rules and the response envelope (section 2.4).
 * Rules, in the order they are checked:
 * - `query` required (≤ 500 characters, at least one searchable term); scope as in scope.ts;
 * - cross-company (no company field): the key needs `cross_company_search` (else 403), the query
 *   at least 2 distinct terms (else 400); sort is always `relevance`, min_confidence at least 0.5,
 *   limit at most 25;
 * - company-scoped (one company or a set): default sort `recent`, limit at most 50; a single-term
 *   query without `after` gets an automatic floor of 3 years before the clock's day;
 * - every other field is checked against its bound, each failure a 400 naming the field.
 */
import { hasEntitlement, notEntitledMessage, CROSS_COMPANY_SEARCH } from '../../auth/entitlements.js';
import type { AuthenticatedKey } from '../../auth/authenticator.js';
import { badRequest, HttpError } from '../../server/http-error.js';
import { optionalBoolean, optionalInteger, type Body } from '../../server/request-fields.js';
import type { Chunk } from '../chunks/index.js';
import {
  AUTO_FLOOR_YEARS,
  daysSince,
  parseAfter,
  parseBefore,
  yearsBefore,
  type AfterSpec,
} from './dates.js';
import type { ChunkHit } from '../indexes/index.js';
import { expandLegal } from './legal-terms.js';
import { parseSearchScope, resolveScope, scopeEnvelope, type ParsedSearchScope } from './scope.js';
import { CHUNK_TYPES, isChunkType, type ChunkType } from '../chunks/index.js';
import type { SearchService } from '../service.js';
import { preview } from './snippet.js';
import { queryTerms } from '../indexes/index.js';

export const QUERY_MAX_CHARS = 500;
export const LIMIT_DEFAULT = 10;
export const LIMIT_MAX_COMPANY = 50;
export const LIMIT_MAX_CROSS = 25;
export const SERIES_LIMIT_DEFAULT = 6;
export const SERIES_LIMIT_MAX = 12;
export const CROSS_MIN_CONFIDENCE = 0.5;
export const CROSS_MIN_TERMS = 2;

export type SortMode = 'recent' | 'relevance';

export interface FilingSearchParams {
  query: string;
  /** Distinct index terms of the query. */
  terms: string[];
  scope: ParsedSearchScope;
  types: ChunkType[] | null;
  after: AfterSpec | undefined;
  before: string | undefined;
  legal: boolean;
  sort: SortMode;
  limit: number;
  includeSeries: boolean;
  seriesLimit: number;
  /** Effective minimum confidence (cross-company: at least 0.5). */
  minConfidence: number;
}

/** The query string and its distinct terms; 400 when missing, too long or without a searchable term. */
export function parseQuery(body: Body, minChars = 1): { query: string; terms: string[] } {
  const v = body.query;
  if (v === undefined || v === null) throw badRequest('query is required');
  if (typeof v !== 'string') throw badRequest('query must be a string');
  const query = v.trim();
  if (query.length < minChars) {
    throw badRequest(
      minChars > 1 ? `query must be at least ${minChars} characters` : 'query must not be empty',
    );
  }
  if (query.length > QUERY_MAX_CHARS) throw badRequest(`query must be at most ${QUERY_MAX_CHARS} characters`);
  return { query, terms: queryTerms(query) };
}

function parseTypes(body: Body): ChunkType[] | null {
  const v = body.types;
  if (v === undefined || v === null) return null;
  if (!Array.isArray(v) || v.length === 0) {
    throw badRequest(`types must be a non-empty array of chunk types (${CHUNK_TYPES.join(', ')})`);
  }
  const out: ChunkType[] = [];
  v.forEach((t: unknown, i) => {
    if (!isChunkType(t))
      throw badRequest(`types[${i}] must be one of ${CHUNK_TYPES.join(', ')} (got ${JSON.stringify(t)})`);
    if (!out.includes(t)) out.push(t);
  });
  return out;
}

/** 403 `API key is not entitled for cross-company search` unless the key carries the entitlement. */
export function requireCrossCompany(auth: AuthenticatedKey | null): void {
  if (auth === null || !hasEntitlement(auth, CROSS_COMPANY_SEARCH)) {
    throw new HttpError(403, notEntitledMessage(CROSS_COMPANY_SEARCH));
  }
}

/** Validates a search/filings body; `auth` decides the cross-company entitlement (403). */
export function parseFilingSearch(body: Body, auth: AuthenticatedKey | null): FilingSearchParams {
  const { query, terms } = parseQuery(body);
  if (terms.length === 0)
    throw badRequest('query must contain at least one searchable term (not only stop words)');
  const scope = parseSearchScope(body);
  const cross = scope.kind === 'cross_company';
  if (cross) {
    requireCrossCompany(auth);
    if (terms.length < CROSS_MIN_TERMS) {
      throw badRequest(
        `query must have at least ${CROSS_MIN_TERMS} terms for cross-company search (got ${terms.length}); give ticker, cik, tickers or ciks to search one company or a set`,
      );
    }
  }
  const types = parseTypes(body);
  const after = parseAfter(body.after);
  const before = parseBefore(body.before);
  if (after?.kind === 'date' && before !== undefined && after.date > before) {
    throw badRequest(`after (${after.date}) must not be later than before (${before})`);
  }
  const legal = optionalBoolean(body, 'legal') ?? false;
  const sortRaw = body.sort;
  if (sortRaw !== undefined && sortRaw !== null && sortRaw !== 'recent' && sortRaw !== 'relevance') {
    throw badRequest(`sort must be recent or relevance (got ${JSON.stringify(sortRaw)})`);
  }
  const sort: SortMode = cross ? 'relevance' : ((sortRaw as SortMode | null | undefined) ?? 'recent');
  const limit = cross
    ? (optionalInteger(body, 'limit', 1, LIMIT_MAX_CROSS, ' for cross-company search') ?? LIMIT_DEFAULT)
    : (optionalInteger(body, 'limit', 1, LIMIT_MAX_COMPANY) ?? LIMIT_DEFAULT);
  const includeSeries = optionalBoolean(body, 'include_series') ?? false;
  const seriesLimit = optionalInteger(body, 'series_limit', 1, SERIES_LIMIT_MAX) ?? SERIES_LIMIT_DEFAULT;
  const mc = body.min_confidence;
  let minConfidence = 0;
  if (mc !== undefined && mc !== null) {
    // The interface bounds it above only; a negative floor simply filters nothing.
    if (typeof mc !== 'number' || !Number.isFinite(mc) || mc > 1) {
      throw badRequest('min_confidence must be a number of at most 1');
    }
    minConfidence = Math.max(0, mc);
  }
  if (cross) minConfidence = Math.max(minConfidence, CROSS_MIN_CONFIDENCE);
  return {
    query,
    terms,
    scope,
    types,
    after,
    before,
    legal,
    sort,
    limit,
    includeSeries,
    seriesLimit,
    minConfidence,
  };
}

/** The date floor to apply and why (section 4.9 rule 3, or the request's `after`). */
export function dateFloor(p: FilingSearchParams, nowMs: number): { after: string | null; reason: string } {
  const a = p.after;
  if (a === undefined) {
    if (p.scope.kind !== 'cross_company' && p.terms.length === 1) {
      return {
        after: yearsBefore(nowMs, AUTO_FLOOR_YEARS),
        reason: `automatic ${AUTO_FLOOR_YEARS}-year floor: single-term company-scoped query without after (pass after to widen, e.g. after=all)`,
      };
    }
    return { after: null, reason: 'none: no date floor' };
  }
  switch (a.kind) {
    case 'all':
      return { after: null, reason: 'after=all: no date floor' };
    case 'date':
      return { after: a.date, reason: `explicit after date ${a.date}` };
    case 'relative':
      return {
        after: yearsBefore(nowMs, a.years),
        reason: `relative window after=${a.text}: filings of the last ${a.years} year${a.years === 1 ? '' : 's'}`,
      };
  }
}

const round6 = (x: number): number => Math.round(x * 1e6) / 1e6;

/** The search viewer (routes/chunk-viewer.ts): the document with the chunk's bytes highlighted. */
export function viewerUrl(c: Chunk): string {
  return `/viewer/search/${c.resultKey}`;
}

/** One chunk result in the field order of section 2.4. */
export function chunkResult(
  hit: ChunkHit,
  sort: SortMode,
  highlightTerms: ReadonlySet<string>,
  nowMs: number,
  freshDays: number,
): Record<string, unknown> {
  const c = hit.chunk;
  const age = c.filedAt ? daysSince(c.filedAt, nowMs) : null;
  return {
    chunk_id: c.chunkId,
    result_key: c.resultKey,
    cik: c.cik,
    ticker: c.ticker,
    current_ticker: c.currentTicker,
    company_name: c.companyName,
    accession: c.accession,
    source_accession: c.accession,
    form_type: c.formType,
    source_form_type: c.formType,
    filed_at: c.filedAt,
    source_filed_at: c.filedAt,
    chunk_type: c.type,
    confidence: c.confidence,
    rank_mode: sort,
    score: round6(hit.score),
    part: c.part,
    item: c.item,
    note: c.note,
    heading: c.heading,
    snippet_preview: preview(c.text, highlightTerms),
    snippet_text: c.text,
    viewer_url: viewerUrl(c),
    html_offset_start: c.start,
    html_offset_end: c.end,
    html_start_offset: c.start,
    html_end_offset: c.end,
    manual_review: { ...c.review },
    is_fresh: age !== null && age >= 0 && age <= freshDays,
  };
}

/** Runs a validated search; resolves the scope (404) and answers the section 2.4 envelope. */
export async function runFilingSearch(
  service: SearchService,
  p: FilingSearchParams,
  nowMs: number,
): Promise<Record<string, unknown>> {
  const index = await service.filings();
  const companies = resolveScope(p.scope, (q) => service.resolveCompany(q));
  const ciks = companies ? new Set(companies.map((c) => c.cik)) : null;
  const floor = dateFloor(p, nowMs);
  const expanded = p.legal ? expandLegal(p.query) : [];
  const types = p.types ? new Set<ChunkType>(p.types) : null;
  // The emulator's as-of date (a company's own, if set): a document filed after it does not exist yet.
  const store = service.store;
  const asOfOf = (cik: string): string | null =>
    store.asOfFor !== undefined ? store.asOfFor(cik) : (store.asOf?.() ?? null);
  const accept = (c: Chunk): boolean => {
    const asOf = asOfOf(c.cik);
    if (asOf !== null && c.filedAt !== null && c.filedAt > asOf) return false;
    if (ciks && !ciks.has(c.cik)) return false;
    if (types && !types.has(c.type)) return false;
    if (c.confidence < p.minConfidence) return false;
    if (floor.after !== null && (c.filedAt === null || c.filedAt < floor.after)) return false;
    if (p.before !== undefined && (c.filedAt === null || c.filedAt > p.before)) return false;
    return true;
  };
  const hits = index.search({ terms: p.terms, alternatives: expanded.map((e) => queryTerms(e)), accept });
  const byScore = (a: ChunkHit, b: ChunkHit): number =>
    a.score - b.score || a.chunk.ordinal - b.chunk.ordinal;
  hits.sort(
    p.sort === 'relevance'
      ? byScore
      : (a, b) => (b.chunk.filedAt ?? '').localeCompare(a.chunk.filedAt ?? '') || byScore(a, b),
  );
  const highlight = new Set([...p.terms, ...expanded.flatMap((e) => queryTerms(e))]);
  const results = hits
    .slice(0, p.limit)
    .map((h) => chunkResult(h, p.sort, highlight, nowMs, service.freshDays));

  const envelope: Record<string, unknown> = {
    scope: p.scope.kind,
    ...scopeEnvelope(p.scope, companies),
    query: p.query,
    legal_mode: p.legal,
    expanded_terms: expanded,
    sort: p.sort,
  };
  if (p.includeSeries) {
    const series = await service.registry().suggestSeries(p.terms, ciks, p.seriesLimit);
    if (series.length > 0) envelope.series_suggestions = { series };
  }
  envelope.applied_filed_at_after = floor.after;
  envelope.applied_filed_at_before = p.before ?? null;
  envelope.applied_filed_at_after_reason = floor.reason;
  envelope.results = results;
  return envelope;
}
