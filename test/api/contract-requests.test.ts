/**
 * The client's request validation (src/api/validate.ts) and the OpenAPI request schemas
 * (src/contract/openapi.yaml) state the same bounds: for each case both accept, or both reject (and the
 * client names the field). Also: every schema of the document compiles under ajv's strict mode.
 */
import { describe, expect, test } from 'vitest';
import { RequestValidationError } from '../../src/errors.js';
import { validateRequest as clientValidate, validateSandboxQuery } from '../../src/api/validate.js';
import { B2B_OPERATIONS, type B2bOperation } from '../../src/contract/contract-types.js';
import { contract, validateRequest as contractValidate } from '../helpers/contract.js';

const KEY = 'a'.repeat(64);
const keys = (n: number): string[] => Array.from({ length: n }, (_, i) => i.toString(16).padStart(64, '0'));

/** [operation, body, field the client must name (undefined = valid)] */
const CASES: Array<[B2bOperation, unknown, string | undefined]> = [
  ['facts/full', { ticker: 'AAPL' }, undefined],
  ['facts/full', { cik: '0000320193', metric_id: 'us-gaap#Revenues' }, undefined],
  ['facts/full', {}, 'ticker'],
  ['facts/full', { ticker: 'AAPL', cik: '0000320193' }, 'cik'],
  ['facts/full', { ticker: '' }, 'ticker'],
  ['facts/full', { ticker: 'AA PL' }, 'ticker'],
  ['facts/full', { cik: 'CIK320193' }, 'cik'],
  ['facts/full', { ticker: 'AAPL', metric_id: 'Revenues' }, 'metric_id'],
  ['facts/core', { ticker: 'AAPL', metric_id: 7 }, 'metric_id'],
  ['evidence/enriched', { ticker: 'BRK-B' }, undefined],
  ['series/catalog', { ticker: 42 }, 'ticker'],
  ['dims/catalog', { cik: '1045810' }, undefined],
  ['facts/latest', { ticker: 'AAPL', limit: 1 }, undefined],
  ['facts/latest', { ticker: 'AAPL', limit: 500, include_dei: true }, undefined],
  ['facts/latest', { ticker: 'AAPL', limit: 0 }, 'limit'],
  ['facts/latest', { ticker: 'AAPL', limit: 501 }, 'limit'],
  ['facts/latest', { ticker: 'AAPL', limit: 2.5 }, 'limit'],
  ['facts/latest', { ticker: 'AAPL', include_dei: 'yes' }, 'include_dei'],
  ['facts/latest/by-series', { ticker: 'AAPL', series_key: KEY }, undefined],
  ['facts/core/by-series', { ticker: 'AAPL', series_keys: keys(100) }, undefined],
  ['facts/full/by-series', { ticker: 'AAPL', series_keys: keys(101) }, 'series_keys'],
  ['facts/core/by-series', { ticker: 'AAPL', series_keys: [] }, 'series_keys'],
  ['facts/core/by-series', { ticker: 'AAPL', series_key: KEY.toUpperCase() }, 'series_key'],
  ['facts/core/by-series', { ticker: 'AAPL', series_keys: [KEY, 'abc'] }, 'series_keys[1]'],
  ['facts/core/by-series', { ticker: 'AAPL' }, 'series_key'],
  ['facts/core/by-series', { ticker: 'AAPL', series_key: KEY, series_keys: [KEY] }, 'series_keys'],
  ['issuer/reference', { ticker: 'NVDA' }, undefined],
  ['issuer/reference', {}, 'ticker'],
  ['series/batch', { ids: ['s1', 's2'] }, undefined],
  ['series/batch', { series_ids: ['s1'] }, undefined],
  ['series/batch', { ids: Array.from({ length: 101 }, (_, i) => `s${i}`) }, 'ids'],
  ['series/batch', { ids: ['s1'], series_ids: ['s2'] }, 'series_ids'],
  ['series/batch', {}, 'ids'],
  ['series/batch', { ids: [''] }, 'ids[0]'],
  ['telemetry/proof-open', { evidence_key: 'ev1', surface: 'dashboard' }, undefined],
  ['telemetry/proof-open', { cik: '0000320193' }, 'evidence_key'],
  ['telemetry/proof-open', { evidence_key: 'ev1', series_key: 'nope' }, 'series_key'],
  ['search/entities', { query: 'revenue' }, undefined],
  ['search/entities', { query: 'r' }, 'query'],
  ['search/entities', { query: 'revenue', limit: 50, offset: 200, types: ['metric', 'series'] }, undefined],
  ['search/entities', { query: 'revenue', limit: 51 }, 'limit'],
  ['search/entities', { query: 'revenue', offset: 201 }, 'offset'],
  ['search/entities', { query: 'revenue', types: ['chart'] }, 'types[0]'],
  ['search/entities', { query: 'revenue', ticker: 'AAPL', tickers: ['MSFT'] }, 'tickers'],
  ['search/entities', { query: 'revenue', tickers: ['AAPL', 'MSFT'] }, undefined],
  ['search/series', { query: 'revenue', fetch_top: 5 }, undefined],
  ['search/series', { query: 'revenue', fetch_top: 6 }, 'fetch_top'],
  ['search/series', {}, 'query'],
  ['search/filings', { query: 'going concern', ticker: 'AAPL', limit: 50 }, undefined],
  ['search/filings', { query: 'going concern', limit: 25 }, undefined],
  ['search/filings', { query: 'going concern', limit: 26 }, 'limit'],
  ['search/filings', { query: 'going concern', ticker: 'AAPL', limit: 51 }, 'limit'],
  ['search/filings', { query: 'going concern', ticker: 'AAPL', limit: 0 }, 'limit'],
  ['search/filings', { query: 'x y', ticker: 'AAPL', after: '3y', before: '2025-01-31' }, undefined],
  ['search/filings', { query: 'x y', ticker: 'AAPL', after: 'all' }, undefined],
  ['search/filings', { query: 'x y', ticker: 'AAPL', after: '51y' }, 'after'],
  ['search/filings', { query: 'x y', ticker: 'AAPL', after: 'last year' }, 'after'],
  ['search/filings', { query: 'x y', ticker: 'AAPL', before: '2025/01/31' }, 'before'],
  ['search/filings', { query: 'x y', ticker: 'AAPL', sort: 'oldest' }, 'sort'],
  ['search/filings', { query: 'x y', ticker: 'AAPL', series_limit: 12, include_series: true }, undefined],
  ['search/filings', { query: 'x y', ticker: 'AAPL', series_limit: 13 }, 'series_limit'],
  ['search/filings', { query: 'x y', ticker: 'AAPL', min_confidence: 1.01 }, 'min_confidence'],
  ['search/filings', { query: 'x y', ticker: 'AAPL', types: ['mda', 'risk'] }, undefined],
  ['search/filings', { query: 'x y', ticker: 'AAPL', types: ['footnotes'] }, 'types[0]'],
];

describe('client validation agrees with the OpenAPI request schemas', () => {
  test.each(CASES.map(([op, body, field], i) => [i, op, body, field] as const))(
    'case %i: %s %j → %s',
    (_i, op, body, field) => {
      let thrown: unknown;
      try {
        clientValidate(op, body);
      } catch (err) {
        thrown = err;
      }
      const contractErrors = contractValidate(op, body);
      if (field === undefined) {
        expect(thrown).toBeUndefined();
        expect(contractErrors).toEqual([]);
      } else {
        expect(thrown).toBeInstanceOf(RequestValidationError);
        expect((thrown as RequestValidationError).field).toBe(field);
        expect((thrown as RequestValidationError).message).toMatch(
          new RegExp(`^${op}: ${field.replace(/[[\]]/g, '\\$&')}: `),
        );
        expect(contractErrors.length).toBeGreaterThan(0);
      }
    },
  );

  test('rules the schema cannot express are still enforced by the client', () => {
    expect(() => clientValidate('search/filings', { query: 'revenue' })).toThrow(
      'search/filings: query: cross-company search needs at least 2 query terms, got "revenue"',
    );
    expect(() => clientValidate('search/filings', { query: '   ', ticker: 'AAPL' })).toThrow(
      /query: must contain at least one term/,
    );
  });
});

const SANDBOX_CASES: Array<
  ['sandbox/search' | 'sandbox/facts', Record<string, unknown>, string | undefined]
> = [
  ['sandbox/facts', { ticker: 'AAPL', limit: 20 }, undefined],
  ['sandbox/facts', { cik: '0000320193', metric_id: 'us-gaap#Revenues' }, undefined],
  ['sandbox/facts', { ticker: 'AAPL', limit: 21 }, 'limit'],
  ['sandbox/facts', { ticker: 'A A' }, 'ticker'],
  [
    'sandbox/search',
    { query: 'revenue', ticker: 'AAPL', limit: 10, types: 'mda,risk', sort: 'relevance' },
    undefined,
  ],
  ['sandbox/search', { query: 'revenue', ticker: 'AAPL', limit: 11 }, 'limit'],
  ['sandbox/search', { query: 'revenue', ticker: 'AAPL', types: 'mda,footnotes' }, 'types'],
  ['sandbox/search', { query: 'revenue', ticker: 'AAPL', after: '60y' }, 'after'],
];

test.each(SANDBOX_CASES)('sandbox: %s %j → %s', (op, query, field) => {
  let thrown: unknown;
  try {
    validateSandboxQuery(op, query);
  } catch (err) {
    thrown = err;
  }
  const errors = contractValidate(op, query);
  if (field === undefined) {
    expect(thrown).toBeUndefined();
    expect(errors).toEqual([]);
  } else {
    expect((thrown as RequestValidationError).field).toBe(field);
    expect(errors.length).toBeGreaterThan(0);
  }
});

describe('the OpenAPI document', () => {
  test('every operation of section 4 (plus sandbox, blob and evidence open) is in it, and every schema compiles strictly', () => {
    const c = contract();
    expect(new Set(c.operations())).toEqual(
      new Set([...B2B_OPERATIONS, 'sandbox/search', 'sandbox/facts', 'series/blob', 'evidence/open']),
    );
    for (const op of c.operations()) {
      for (const status of c.statuses(op))
        expect(Array.isArray(c.validateResponse(op, Number(status), {}))).toBe(true);
      expect(Array.isArray(c.validateRequest(op, {}))).toBe(true);
    }
  });

  test('both 429 shapes validate; a body of neither shape does not', () => {
    const c = contract();
    expect(
      c.validateResponse('facts/full', 429, {
        error: 'Rate limit exceeded',
        retryAfter: 3,
        limit: 60,
        windowMs: 60000,
      }),
    ).toEqual([]);
    expect(
      c.validateResponse('facts/full', 429, {
        error: 'daily quota exceeded',
        quota: 'daily',
        scope: 'api_key',
        limit: 3,
        used: 3,
      }),
    ).toEqual([]);
    expect(
      c.validateResponse('facts/full', 429, { error: 'Rate limit exceeded', retryAfter: 3 }),
    ).not.toEqual([]);
    expect(
      c.validateResponse('facts/full', 429, {
        error: 'daily quota exceeded',
        quota: 'weekly',
        scope: 'account',
        limit: 3,
        used: 3,
      }),
    ).not.toEqual([]);
  });

  test('value_num as a JSON number breaks the contract (exact decimals are strings)', () => {
    const row = {
      fact_key: KEY,
      series_key: KEY,
      cik: '0000320193',
      current_ticker: 'AAPL',
      metric_id: 'us-gaap#Revenues',
      metric_label: 'Revenues',
      period_key: 'duration:2023-10-01..2024-09-28',
      period_kind: 'duration',
      period_start: '2023-10-01',
      period_end: '2024-09-28',
      period_end_year: 2024,
      period_end_quarter: 3,
      unit_signature: 'monetary:USD',
      unit_class: 'monetary',
      currency: 'USD',
      value_num: '391035000000',
      value_scaled_int: '391035',
      scale: 6,
      source_accession: '0000320193-24-000123',
      source_form_type: '10-K',
      source_is_amendment: false,
      source_is_current_filing_period: true,
      source_filed_at: '2024-11-01',
      evidence_key: null,
      evidence_url: null,
      is_consolidated: true,
    };
    const env = {
      scope: 'company',
      ticker: 'AAPL',
      cik: '0000320193',
      metric_id: null,
      count: 1,
      rows: [row],
    };
    expect(validateResponseOf('facts/core', env)).toEqual([]);
    expect(
      validateResponseOf('facts/core', { ...env, rows: [{ ...row, value_num: 391035000000 }] }),
    ).not.toEqual([]);
  });
});

function validateResponseOf(op: string, body: unknown): string[] {
  return contract().validateResponse(op, 200, body);
}
