/**
 * Scope of a search request (section 2.1): one company (`ticker` or `cik`), a set (`tickers` or
 * `ciks`), or nothing, which means cross-company. Validation is synchronous (400 naming the field);
 * resolution to companies happens in the handler (404 naming the first unknown identifier).
 */
import { TICKER_PATTERN } from '../../../contract/vocabulary.js';
import { badRequest, notFound } from '../../server/http-error.js';
import { companyScope, type Body } from '../../server/request-fields.js';
import type { SearchCompany } from '../service.js';

/** Most companies one company-set search may name (our bound; the interface gives none). */
export const MAX_COMPANY_SET = 25;

/** The request's scope once validated, tagged by kind (the contract's SearchScope is the raw body). */
export type ParsedSearchScope =
  | { kind: 'company'; ticker?: string; cik?: string }
  | { kind: 'company_set'; tickers?: string[]; ciks?: string[] }
  | { kind: 'cross_company' };

export type ScopeKind = ParsedSearchScope['kind'];

const TICKER_RE = TICKER_PATTERN;
const CIK_RE = /^\d{1,10}$/;

const present = (v: unknown): boolean => v !== undefined && v !== null;

function stringList(body: Body, field: 'tickers' | 'ciks'): string[] {
  const v = body[field];
  if (!Array.isArray(v)) throw badRequest(`${field} must be an array of strings`);
  if (v.length === 0) throw badRequest(`${field} must have at least 1 item`);
  if (v.length > MAX_COMPANY_SET) {
    throw badRequest(`${field} must have at most ${MAX_COMPANY_SET} items (got ${v.length})`);
  }
  const re = field === 'tickers' ? TICKER_RE : CIK_RE;
  const out: string[] = [];
  v.forEach((item: unknown, i) => {
    if (typeof item !== 'string' || !re.test(item.trim())) {
      throw badRequest(
        field === 'tickers'
          ? `tickers[${i}] must be a ticker symbol string (1 to 20 letters, digits, "." or "-")`
          : `ciks[${i}] must be a string of up to 10 digits`,
      );
    }
    const norm = field === 'tickers' ? item.trim().toUpperCase() : item.trim().padStart(10, '0');
    if (!out.includes(norm)) out.push(norm);
  });
  return out;
}

export function parseSearchScope(body: Body): ParsedSearchScope {
  const singular = present(body.ticker) || present(body.cik);
  const hasTickers = present(body.tickers);
  const hasCiks = present(body.ciks);
  if (singular && (hasTickers || hasCiks)) {
    throw badRequest(
      'Unsupported scope combination: give ticker/cik (one company) or tickers/ciks (a set), not both',
    );
  }
  if (hasTickers && hasCiks)
    throw badRequest('Unsupported scope combination: give tickers or ciks, not both');
  if (singular) {
    return { kind: 'company', ...companyScope(body) };
  }
  if (hasTickers) return { kind: 'company_set', tickers: stringList(body, 'tickers') };
  if (hasCiks) return { kind: 'company_set', ciks: stringList(body, 'ciks') };
  return { kind: 'cross_company' };
}

/** Resolves every identifier of the scope, in request order; 404 names the first unknown one. */
export function resolveScope(
  scope: ParsedSearchScope,
  resolve: (q: { ticker?: string; cik?: string }) => SearchCompany | undefined,
): SearchCompany[] | null {
  const one = (q: { ticker?: string; cik?: string }): SearchCompany => {
    const c = resolve(q);
    if (c) return c;
    throw notFound(q.ticker !== undefined ? `Unknown ticker: ${q.ticker}` : `Unknown CIK: ${q.cik ?? ''}`);
  };
  switch (scope.kind) {
    case 'cross_company':
      return null;
    case 'company':
      return [one(scope.ticker !== undefined ? { ticker: scope.ticker } : { cik: scope.cik ?? '' })];
    case 'company_set': {
      const list = scope.tickers
        ? scope.tickers.map((ticker) => one({ ticker }))
        : (scope.ciks ?? []).map((cik) => one({ cik }));
      return list.filter((c, i) => list.findIndex((d) => d.cik === c.cik) === i);
    }
  }
}

/** Envelope scope fields (sections 2.4, 2.5). */
export function scopeEnvelope(
  scope: ParsedSearchScope,
  companies: readonly SearchCompany[] | null,
): { ticker: string | null; cik: string | null; tickers: string[] | null; ciks: string[] | null } {
  switch (scope.kind) {
    case 'cross_company':
      return { ticker: null, cik: null, tickers: null, ciks: null };
    case 'company': {
      const c = companies?.[0];
      return {
        ticker: scope.ticker !== undefined ? scope.ticker.toUpperCase() : (c?.ticker ?? null),
        cik: c?.cik ?? null,
        tickers: null,
        ciks: null,
      };
    }
    case 'company_set':
      return {
        ticker: null,
        cik: null,
        tickers:
          scope.tickers ?? (companies ?? []).map((c) => c.ticker).filter((t): t is string => t !== null),
        ciks: (companies ?? []).map((c) => c.cik),
      };
  }
}
