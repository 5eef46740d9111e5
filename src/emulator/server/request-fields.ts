/**
 * Request-body validation shared by the operations. Every failure is a 400 whose message names
 * the field (section 7). Unknown fields are ignored, as most JSON APIs do.
 */
import { TICKER_PATTERN } from '../../contract/vocabulary.js';
import type { Company, EmulatorStore } from '../store.js';
import { badRequest, notFound } from './http-error.js';

export type Body = Record<string, unknown>;

/** A single-company scope as requested (section 2.1). */
export interface CompanyScope {
  ticker?: string;
  cik?: string;
}

const SERIES_KEY = /^[0-9a-f]{64}$/;
export const MAX_SERIES_KEYS = 100;
export const MAX_SERIES_IDS = 100;

/**
 * `ticker` or `cik`, exactly one (section 2.1). Plural fields are search-only, and both singular
 * fields at once is an unsupported scope combination: both are 400.
 */
export function companyScope(body: Body): CompanyScope {
  for (const plural of ['tickers', 'ciks'] as const) {
    if (body[plural] !== undefined) {
      throw badRequest(
        `Unsupported scope combination: ${plural} is accepted by search endpoints only; give ticker or cik`,
      );
    }
  }
  const hasTicker = body.ticker !== undefined && body.ticker !== null;
  const hasCik = body.cik !== undefined && body.cik !== null;
  if (hasTicker && hasCik) {
    throw badRequest('Unsupported scope combination: give ticker or cik, not both');
  }
  if (hasTicker) {
    if (typeof body.ticker !== 'string' || !TICKER_PATTERN.test(body.ticker.trim())) {
      throw badRequest('ticker must be a ticker symbol string (1 to 20 letters, digits, "." or "-")');
    }
    return { ticker: body.ticker.trim() };
  }
  if (hasCik) {
    if (typeof body.cik !== 'string' || !/^\d{1,10}$/.test(body.cik.trim())) {
      throw badRequest('cik must be a string of up to 10 digits (zero-padded 10-digit CIK)');
    }
    return { cik: body.cik.trim() };
  }
  throw badRequest('ticker or cik is required');
}

/** The company of a scope, or 404 naming the identifier (`Unknown ticker: XYZ`). */
export function resolveCompany(store: EmulatorStore, scope: CompanyScope): Company {
  const company = store.resolve(scope);
  if (company) return company;
  throw notFound(
    scope.ticker !== undefined ? `Unknown ticker: ${scope.ticker}` : `Unknown CIK: ${scope.cik ?? ''}`,
  );
}

/** Envelope `ticker`: the requested ticker (upper case) or the company's current ticker. */
export function envelopeTicker(scope: CompanyScope, company: Company): string | null {
  return scope.ticker !== undefined ? scope.ticker.toUpperCase() : company.ticker;
}

export function optionalString(body: Body, field: string, maxLength = 500): string | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string' || v.trim() === '') throw badRequest(`${field} must be a non-empty string`);
  if (v.length > maxLength) throw badRequest(`${field} must be at most ${maxLength} characters`);
  return v;
}

export function requiredString(body: Body, field: string, maxLength = 500): string {
  const v = optionalString(body, field, maxLength);
  if (v === undefined) throw badRequest(`${field} is required`);
  return v;
}

/** metric_id: `<taxonomy>#<Concept>` (section 2.2). */
export function optionalMetricId(body: Body): string | undefined {
  const v = optionalString(body, 'metric_id', 300);
  if (v !== undefined && !/^[A-Za-z0-9_.-]+#[A-Za-z0-9_.-]+$/.test(v)) {
    throw badRequest('metric_id must have the form <taxonomy>#<Concept>, for example us-gaap#Revenues');
  }
  return v;
}

export function optionalBoolean(body: Body, field: string): boolean | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw badRequest(`${field} must be a boolean`);
  return v;
}

/**
 * An integer field within [min, max]; the message states the bounds, then `context` (e.g.
 * ` for cross-company search`).
 */
export function optionalInteger(
  body: Body,
  field: string,
  min: number,
  max: number,
  context = '',
): number | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    throw badRequest(`${field} must be an integer from ${min} to ${max}${context}`);
  }
  return v;
}

/**
 * `series_key` (one) or `series_keys` (1 to 100), each 64 lowercase hex characters (sections 4.2,
 * 4.5, 8). Exactly one of the two fields.
 */
export function seriesKeys(body: Body): string[] {
  const one = body.series_key;
  const many = body.series_keys;
  const hasOne = one !== undefined && one !== null;
  const hasMany = many !== undefined && many !== null;
  if (hasOne && hasMany) throw badRequest('series_key and series_keys are mutually exclusive; give one');
  if (!hasOne && !hasMany) throw badRequest('series_key or series_keys is required');
  if (hasOne) {
    if (typeof one !== 'string' || !SERIES_KEY.test(one)) {
      throw badRequest('series_key must be 64 lowercase hex characters');
    }
    return [one];
  }
  if (!Array.isArray(many)) throw badRequest('series_keys must be an array of series keys');
  if (many.length === 0) throw badRequest('series_keys must have at least 1 item');
  if (many.length > MAX_SERIES_KEYS) {
    throw badRequest(`series_keys must have at most ${MAX_SERIES_KEYS} items (got ${many.length})`);
  }
  many.forEach((k: unknown, i) => {
    if (typeof k !== 'string' || !SERIES_KEY.test(k)) {
      throw badRequest(`series_keys[${i}] must be 64 lowercase hex characters`);
    }
  });
  return many as string[];
}

/** series/batch: `ids` or `series_ids` (1 to 100 strings). */
export function seriesIds(body: Body): string[] {
  const hasIds = body.ids !== undefined && body.ids !== null;
  const hasSeriesIds = body.series_ids !== undefined && body.series_ids !== null;
  if (hasIds && hasSeriesIds) throw badRequest('ids and series_ids are mutually exclusive; give one');
  if (!hasIds && !hasSeriesIds) throw badRequest('ids (or series_ids) is required');
  const field = hasIds ? 'ids' : 'series_ids';
  const v = body[field];
  if (!Array.isArray(v)) throw badRequest(`${field} must be an array of series id strings`);
  if (v.length === 0) throw badRequest(`${field} must have at least 1 item`);
  if (v.length > MAX_SERIES_IDS)
    throw badRequest(`${field} must have at most ${MAX_SERIES_IDS} items (got ${v.length})`);
  v.forEach((id: unknown, i) => {
    if (typeof id !== 'string' || id.trim() === '' || id.length > 300) {
      throw badRequest(`${field}[${i}] must be a non-empty series id string`);
    }
  });
  return v as string[];
}
