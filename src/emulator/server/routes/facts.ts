/**
 * The facts family (sections 4.1 to 4.6): facts/latest, facts/core, facts/full and their
 * by-series forms. Envelope of 2.3 (company-envelope.ts): scope, ticker, cik, metric_id, count,
 * [truncated, total_available], rows (rows last, streamed).
 */
import type { FactRow } from '../../store.js';
import { optionalBoolean, optionalInteger, resolveCompany, seriesKeys } from '../request-fields.js';
import {
  companyEnvelope,
  companyRowsOperation,
  parseCompanyParams,
  type CompanyParams,
} from './company-envelope.js';
import { defineOperation, type B2bOperationId, type OperationContext } from './route-context.js';

export const LATEST_LIMIT_DEFAULT = 100;
export const LATEST_LIMIT_MAX = 500;

type FactsQuery = (ctx: OperationContext, cik: string, metricId?: string) => Promise<readonly FactRow[]>;

const queries = {
  latest: (ctx, cik, m) => ctx.deps.store.factsLatest(cik, m),
  core: (ctx, cik, m) => ctx.deps.store.factsCore(cik, m),
  full: (ctx, cik, m) => ctx.deps.store.factsFull(cik, m),
} satisfies Record<string, FactsQuery>;

interface LatestParams extends CompanyParams {
  includeDei: boolean;
  limit: number;
}

/**
 * 4.1. Bounds are validated whether or not metric_id is given (schema validation), but include_dei
 * and limit only apply to unscoped requests: with metric_id nothing is capped or filtered.
 */
export const factsLatest = defineOperation<LatestParams>({
  id: 'facts/latest',
  parse: (body) => ({
    ...parseCompanyParams(body),
    includeDei: optionalBoolean(body, 'include_dei') ?? false,
    limit: optionalInteger(body, 'limit', 1, LATEST_LIMIT_MAX) ?? LATEST_LIMIT_DEFAULT,
  }),
  async handle(p, ctx) {
    const company = resolveCompany(ctx.deps.store, p.scope);
    const rows = await queries.latest(ctx, company.cik, p.metricId);
    if (p.metricId !== undefined) return companyEnvelope(p, company, rows);
    const kept = p.includeDei ? rows : rows.filter((r) => !r.metric_id.startsWith('dei#'));
    if (kept.length <= p.limit) return companyEnvelope(p, company, kept);
    return companyEnvelope(p, company, kept.slice(0, p.limit), {
      truncated: true,
      total_available: kept.length,
    });
  },
});

export const factsCore = companyRowsOperation('facts/core', queries.core);
export const factsFull = companyRowsOperation('facts/full', queries.full);

interface BySeriesParams extends CompanyParams {
  seriesKeys: Set<string>;
}

/** 4.2, 4.5, 4.6: the base query restricted to the requested series keys (unknown keys: no rows). */
function bySeries(id: B2bOperationId, query: FactsQuery) {
  return defineOperation<BySeriesParams>({
    id,
    parse: (body) => ({ ...parseCompanyParams(body), seriesKeys: new Set(seriesKeys(body)) }),
    async handle(p, ctx) {
      const company = resolveCompany(ctx.deps.store, p.scope);
      const rows = await query(ctx, company.cik, p.metricId);
      return companyEnvelope(
        p,
        company,
        rows.filter((r) => p.seriesKeys.has(r.series_key)),
      );
    },
  });
}

export const factsLatestBySeries = bySeries('facts/latest/by-series', queries.latest);
export const factsCoreBySeries = bySeries('facts/core/by-series', queries.core);
/** 4.6, our path: every fact incl. dimensional rows of the given series; request as core/by-series. */
export const factsFullBySeries = bySeries('facts/full/by-series', queries.full);
