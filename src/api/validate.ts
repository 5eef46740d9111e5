/**
 * Client-side validation of every documented request bound (sections 2.1, 4, 8), run before a
 * request is sent so a bad request never spends rate-limit or quota budget. Each failure throws
 * RequestValidationError naming the field. The rules mirror src/contract/openapi.yaml; test/api/contract.test.ts
 * checks that both accept and reject the same requests.
 */
import { RequestValidationError } from '../errors.js';
import { assertNever } from '../types.js';
import type { B2bOperation } from '../contract/contract-types.js';
import {
  CHUNK_TYPES,
  CIK_PATTERN,
  ENTITY_TYPES,
  LIMITS,
  METRIC_ID_PATTERN,
  SERIES_KEY_PATTERN,
  TICKER_PATTERN,
} from '../contract/vocabulary.js';

type Body = Record<string, unknown>;

export { LIMITS, CHUNK_TYPES, ENTITY_TYPES };

const SERIES_KEY = SERIES_KEY_PATTERN;
const CIK = CIK_PATTERN;
const METRIC_ID = METRIC_ID_PATTERN;
const TICKER = TICKER_PATTERN;
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const AFTER_RELATIVE = /^(\d{1,2})y$/;

class Check {
  constructor(
    readonly operation: string,
    readonly body: Body,
  ) {}

  fail(field: string, message: string): never {
    throw new RequestValidationError(this.operation, field, message);
  }

  has(field: string): boolean {
    return this.body[field] !== undefined;
  }

  string(field: string, opts: { required?: boolean; min?: number; max?: number } = {}): string | undefined {
    const v = this.body[field];
    if (v === undefined) {
      if (opts.required) this.fail(field, 'is required');
      return undefined;
    }
    if (typeof v !== 'string') this.fail(field, `must be a string, got ${describe(v)}`);
    const min = opts.min ?? 1;
    if (v.length < min)
      this.fail(field, min === 1 ? 'must not be empty' : `must have at least ${min} characters`);
    if (opts.max !== undefined && v.length > opts.max)
      this.fail(field, `must have at most ${opts.max} characters`);
    return v;
  }

  integer(field: string, min: number, max: number): number | undefined {
    const v = this.body[field];
    if (v === undefined) return undefined;
    if (typeof v !== 'number' || !Number.isInteger(v))
      this.fail(field, `must be an integer, got ${describe(v)}`);
    if (v < min || v > max) this.fail(field, `must be from ${min} to ${max}, got ${v}`);
    return v;
  }

  boolean(field: string): void {
    const v = this.body[field];
    if (v !== undefined && typeof v !== 'boolean') this.fail(field, `must be a boolean, got ${describe(v)}`);
  }

  stringArray(
    field: string,
    opts: { maxItems?: number; item: (value: string, at: string) => void },
  ): string[] | undefined {
    const v = this.body[field];
    if (v === undefined) return undefined;
    if (!Array.isArray(v)) this.fail(field, `must be an array, got ${describe(v)}`);
    if (v.length === 0) this.fail(field, 'must have at least 1 item');
    if (opts.maxItems !== undefined && v.length > opts.maxItems) {
      this.fail(field, `must have at most ${opts.maxItems} items, got ${v.length}`);
    }
    v.forEach((item: unknown, i) => {
      const at = `${field}[${i}]`;
      if (typeof item !== 'string') this.fail(at, `must be a string, got ${describe(item)}`);
      opts.item(item, at);
    });
    return v as string[];
  }

  ticker(field: string, value: string): void {
    if (!TICKER.test(value)) {
      this.fail(
        field,
        `must be a ticker symbol (1 to 20 letters, digits, "." or "-"), got ${excerpt(value)}`,
      );
    }
  }

  cik(field: string, value: string): void {
    if (!CIK.test(value))
      this.fail(field, `must be up to 10 digits (a zero-padded CIK), got ${JSON.stringify(value)}`);
  }

  seriesKey(field: string, value: string): void {
    if (!SERIES_KEY.test(value)) {
      this.fail(field, `must be 64 lowercase hex characters (a series_key), got ${excerpt(value)}`);
    }
  }

  metricId(): void {
    const v = this.string('metric_id', { max: 300 });
    if (v !== undefined && !METRIC_ID.test(v)) {
      this.fail(
        'metric_id',
        `must have the form <taxonomy>#<Concept>, e.g. us-gaap#Revenues, got ${excerpt(v)}`,
      );
    }
  }

  /** `ticker` or `cik` (section 2.1); plural forms are search-only. */
  companyScope(): void {
    for (const plural of ['tickers', 'ciks']) {
      if (this.has(plural)) this.fail(plural, 'is accepted by search operations only; give ticker or cik');
    }
    const ticker = this.string('ticker', { max: 20 });
    const cik = this.string('cik');
    if (ticker !== undefined) this.ticker('ticker', ticker);
    if (cik !== undefined) this.cik('cik', cik);
    if (ticker === undefined && cik === undefined) this.fail('ticker', 'ticker or cik is required');
    if (ticker !== undefined && cik !== undefined) this.fail('cik', 'give ticker or cik, not both');
  }

  /** Search scope: one company, a set, or none; singular and plural are mutually exclusive. */
  searchScope(): 'company' | 'company_set' | 'cross_company' {
    const ticker = this.string('ticker', { max: 20 });
    const cik = this.string('cik');
    if (ticker !== undefined) this.ticker('ticker', ticker);
    if (cik !== undefined) this.cik('cik', cik);
    const tickers = this.stringArray('tickers', { maxItems: 100, item: (v, at) => this.ticker(at, v) });
    const ciks = this.stringArray('ciks', { maxItems: 100, item: (v, at) => this.cik(at, v) });
    const singular = ticker !== undefined ? 'ticker' : cik !== undefined ? 'cik' : undefined;
    const plural = tickers !== undefined ? 'tickers' : ciks !== undefined ? 'ciks' : undefined;
    if (singular && plural)
      this.fail(plural, `is mutually exclusive with ${singular}; give one company or a set`);
    if (singular) return 'company';
    if (plural) return 'company_set';
    return 'cross_company';
  }

  date(field: string): void {
    const v = this.string(field);
    if (v !== undefined && !isCalendarDate(v))
      this.fail(field, `must be a date YYYY-MM-DD, got ${excerpt(v)}`);
  }

  /** search/filings `after` (date, 1y to 50y, or all) and `before` (date). */
  filingDates(): void {
    const after = this.string('after');
    if (after !== undefined && after !== 'all') {
      const rel = AFTER_RELATIVE.exec(after);
      if (rel) {
        const years = Number(rel[1]);
        if (years < 1 || years > 50)
          this.fail('after', `relative window must be from 1y to 50y, got ${excerpt(after)}`);
      } else if (!isCalendarDate(after)) {
        this.fail(
          'after',
          `must be YYYY-MM-DD, a relative window 1y to 50y, or "all", got ${excerpt(after)}`,
        );
      }
    }
    this.date('before');
  }

  enumArray(field: string, allowed: readonly string[]): void {
    this.stringArray(field, {
      item: (v, at) => {
        if (!allowed.includes(v)) this.fail(at, `must be one of ${allowed.join(', ')}, got ${excerpt(v)}`);
      },
    });
  }

  oneOf(a: string, b: string): void {
    if (this.has(a) && this.has(b)) this.fail(b, `is mutually exclusive with ${a}; give one`);
    if (!this.has(a) && !this.has(b)) this.fail(a, `${a} or ${b} is required`);
  }
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  return typeof v === 'string'
    ? `the string ${excerpt(v)}`
    : `${typeof v} ${excerpt(JSON.stringify(v) ?? '')}`;
}

function excerpt(s: string): string {
  return JSON.stringify(s.length > 80 ? `${s.slice(0, 77)}...` : s);
}

function isCalendarDate(v: string): boolean {
  const m = ISO_DATE.exec(v);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(y, mo - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}

/** Query terms as the service counts them: whitespace-separated words. */
export function queryTerms(query: string): string[] {
  return query
    .trim()
    .split(/\s+/)
    .filter((t) => t.length > 0);
}

/**
 * Throws RequestValidationError (naming the field) when `body` breaks a documented bound of
 * `operation`. Unknown fields pass through untouched: the service ignores or may accept them.
 */
export function validateRequest(operation: B2bOperation, body: unknown): void {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new RequestValidationError(operation, 'body', 'must be a JSON object');
  }
  const c = new Check(operation, body as Body);
  switch (operation) {
    case 'facts/core':
    case 'facts/full':
    case 'series/catalog':
    case 'dims/catalog':
    case 'evidence/enriched':
      c.companyScope();
      c.metricId();
      return;
    case 'facts/latest':
      c.companyScope();
      c.metricId();
      c.boolean('include_dei');
      c.integer('limit', LIMITS.factsLatestLimit.min, LIMITS.factsLatestLimit.max);
      return;
    case 'facts/latest/by-series':
    case 'facts/core/by-series':
    case 'facts/full/by-series':
      return checkBySeries(c);
    case 'issuer/reference':
      c.companyScope();
      return;
    case 'series/batch':
      return checkSeriesBatch(c);
    case 'telemetry/proof-open':
      return checkProofOpen(c);
    case 'search/entities':
      c.searchScope();
      c.string('query', { required: true, min: LIMITS.searchEntitiesQueryMin, max: LIMITS.queryMaxLength });
      c.enumArray('types', ENTITY_TYPES);
      c.integer('limit', LIMITS.searchEntitiesLimit.min, LIMITS.searchEntitiesLimit.max);
      c.integer('offset', LIMITS.searchEntitiesOffset.min, LIMITS.searchEntitiesOffset.max);
      return;
    case 'search/series':
      c.searchScope();
      c.string('query', { required: true, max: LIMITS.queryMaxLength });
      c.integer('limit', LIMITS.searchSeriesLimit.min, LIMITS.searchSeriesLimit.max);
      c.integer('fetch_top', 0, LIMITS.fetchTopMax);
      return;
    case 'search/filings':
      return checkSearchFilings(c);
    default:
      assertNever(operation, 'operation');
  }
}

/** facts/…/by-series: a company, and exactly one of `series_key` and `series_keys`. */
function checkBySeries(c: Check): void {
  c.companyScope();
  c.metricId();
  c.oneOf('series_key', 'series_keys');
  if (c.has('series_key')) c.seriesKey('series_key', c.string('series_key') ?? '');
  c.stringArray('series_keys', {
    maxItems: LIMITS.seriesKeysPerCall,
    item: (v, at) => c.seriesKey(at, v),
  });
}

function checkSeriesBatch(c: Check): void {
  c.oneOf('ids', 'series_ids');
  const item = (v: string, at: string): void => {
    if (v.trim() === '' || v.length > 200) c.fail(at, 'must be a series id of 1 to 200 characters');
  };
  c.stringArray('ids', { maxItems: LIMITS.seriesIdsPerCall, item });
  c.stringArray('series_ids', { maxItems: LIMITS.seriesIdsPerCall, item });
}

function checkProofOpen(c: Check): void {
  c.string('evidence_key', { required: true, max: 200 });
  const cik = c.string('cik');
  if (cik !== undefined) c.cik('cik', cik);
  c.string('source_accession', { max: 50 });
  const sk = c.string('series_key');
  if (sk !== undefined) c.seriesKey('series_key', sk);
  c.metricId();
  c.string('viewer_url', { max: 2000 });
  c.string('surface', { min: 0, max: 200 });
}

/** search/filings: its bounds depend on the scope (cross-company search is smaller and needs more terms). */
function checkSearchFilings(c: Check): void {
  const scope = c.searchScope();
  const query = c.string('query', { required: true, max: LIMITS.queryMaxLength }) ?? '';
  if (query.trim() === '') c.fail('query', 'must contain at least one term');
  c.enumArray('types', CHUNK_TYPES);
  c.filingDates();
  c.boolean('legal');
  const sort = c.string('sort');
  if (sort !== undefined && sort !== 'recent' && sort !== 'relevance') {
    c.fail('sort', `must be "recent" or "relevance", got ${excerpt(sort)}`);
  }
  checkSearchFilingsLimit(c, scope);
  c.boolean('include_series');
  c.integer('series_limit', LIMITS.searchFilingsSeriesLimit.min, LIMITS.searchFilingsSeriesLimit.max);
  const mc = c.body.min_confidence;
  if (mc !== undefined) {
    if (typeof mc !== 'number' || !Number.isFinite(mc)) {
      c.fail('min_confidence', `must be a number, got ${describe(mc)}`);
    } else if (mc > 1) {
      c.fail('min_confidence', `must be at most 1, got ${mc}`);
    }
  }
  if (scope === 'cross_company' && queryTerms(query).length < LIMITS.crossCompanyMinTerms) {
    c.fail(
      'query',
      `cross-company search needs at least ${LIMITS.crossCompanyMinTerms} query terms, got ${excerpt(query)}`,
    );
  }
}

/** `limit` of search/filings; an integer over the cross-company bound is named as such. */
function checkSearchFilingsLimit(c: Check, scope: ReturnType<Check['searchScope']>): void {
  const max =
    scope === 'cross_company' ? LIMITS.searchFilingsLimit.crossCompanyMax : LIMITS.searchFilingsLimit.max;
  if (c.has('limit') && scope === 'cross_company') {
    const v = c.body.limit;
    if (typeof v === 'number' && Number.isInteger(v) && v > max) {
      c.fail(
        'limit',
        `must be at most ${max} for cross-company search (no ticker, cik, tickers or ciks), got ${v}`,
      );
    }
  }
  c.integer('limit', LIMITS.searchFilingsLimit.min, max);
}

/** Sandbox query parameters (the emulator's shape and bounds, see docs/emulator.md). */
export function validateSandboxQuery(operation: 'sandbox/search' | 'sandbox/facts', query: unknown): void {
  if (typeof query !== 'object' || query === null || Array.isArray(query)) {
    throw new RequestValidationError(operation, 'query', 'must be an object of query parameters');
  }
  const c = new Check(operation, query as Body);
  c.companyScope();
  if (operation === 'sandbox/facts') {
    c.metricId();
    c.integer('limit', LIMITS.sandboxFactsLimit.min, LIMITS.sandboxFactsLimit.max);
    return;
  }
  const q = c.string('query', { required: true, max: LIMITS.queryMaxLength }) ?? '';
  if (q.trim() === '') c.fail('query', 'must contain at least one term');
  c.integer('limit', LIMITS.sandboxSearchLimit.min, LIMITS.sandboxSearchLimit.max);
  const types = c.string('types');
  if (types !== undefined) {
    for (const t of types.split(',')) {
      if (!(CHUNK_TYPES as readonly string[]).includes(t)) {
        c.fail('types', `must be comma-separated chunk types (${CHUNK_TYPES.join(', ')}), got ${excerpt(t)}`);
      }
    }
  }
  c.filingDates();
  c.boolean('legal');
  const sort = c.string('sort');
  if (sort !== undefined && sort !== 'recent' && sort !== 'relevance') {
    c.fail('sort', `must be "recent" or "relevance", got ${excerpt(sort)}`);
  }
}
