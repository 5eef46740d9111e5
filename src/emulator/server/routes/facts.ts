/**
 * The facts family (sections 4.1 to 4.6): facts/latest, facts/core, facts/full and their
 * by-series forms. Envelope of 2.3: scope, ticker, cik, metric_id, count, [truncated,
 * total_available], rows (rows last, streamed).
 */
import type { Company, FactRow } from '../../store.js';
import {
  companyScope,
  envelopeTicker,
  optionalBoolean,
  optionalInteger,
  optionalMetricId,
  resolveCompany,
  seriesKeys,
  type Body,
  type CompanyScope,
} from '../validate.js';
import { defineOperation, type OperationContext, type OperationResponse } from './types.js';

export const LATEST_LIMIT_DEFAULT = 100;
export const LATEST_LIMIT_MAX = 500;

interface FactsParams {
  scope: CompanyScope;
  metricId: string | undefined;
}

function parseFacts(body: Body): FactsParams {
  return { scope: companyScope(body), metricId: optionalMetricId(body) };
}

/** The facts envelope of 2.3 around `rows`. */
export function factsEnvelope(
  p: FactsParams,
  company: Company,
  rows: readonly FactRow[],
  extra: Record<string, unknown> = {},
): OperationResponse {
  return {
    kind: 'envelope',
    fields: {
      scope: 'company',
      ticker: envelopeTicker(p.scope, company),
      cik: company.cik,
      metric_id: p.metricId ?? null,
      count: rows.length,
      ...extra,
    },
    rows,
  };
}

type FactsQuery = (ctx: OperationContext, cik: string, metricId?: string) => Promise<readonly FactRow[]>;

const queries = {
  latest: (ctx, cik, m) => ctx.deps.store.factsLatest(cik, m),
  core: (ctx, cik, m) => ctx.deps.store.factsCore(cik, m),
  full: (ctx, cik, m) => ctx.deps.store.factsFull(cik, m),
} satisfies Record<string, FactsQuery>;

interface LatestParams extends FactsParams {
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
    ...parseFacts(body),
    includeDei: optionalBoolean(body, 'include_dei') ?? false,
    limit: optionalInteger(body, 'limit', 1, LATEST_LIMIT_MAX) ?? LATEST_LIMIT_DEFAULT,
  }),
  async handle(p, ctx) {
    const company = resolveCompany(ctx.deps.store, p.scope);
    const rows = await queries.latest(ctx, company.cik, p.metricId);
    if (p.metricId !== undefined) return factsEnvelope(p, company, rows);
    const kept = p.includeDei ? rows : rows.filter((r) => !r.metric_id.startsWith('dei#'));
    if (kept.length <= p.limit) return factsEnvelope(p, company, kept);
    return factsEnvelope(p, company, kept.slice(0, p.limit), {
      truncated: true,
      total_available: kept.length,
    });
  },
});

export const factsCore = defineOperation<FactsParams>({
  id: 'facts/core',
  parse: parseFacts,
  async handle(p, ctx) {
    const company = resolveCompany(ctx.deps.store, p.scope);
    return factsEnvelope(p, company, await queries.core(ctx, company.cik, p.metricId));
  },
});

export const factsFull = defineOperation<FactsParams>({
  id: 'facts/full',
  parse: parseFacts,
  async handle(p, ctx) {
    const company = resolveCompany(ctx.deps.store, p.scope);
    return factsEnvelope(p, company, await queries.full(ctx, company.cik, p.metricId));
  },
});

interface BySeriesParams extends FactsParams {
  seriesKeys: Set<string>;
}

/** 4.2, 4.5, 4.6: the base query restricted to the requested series keys (unknown keys: no rows). */
function bySeries(id: string, query: FactsQuery) {
  return defineOperation<BySeriesParams>({
    id,
    parse: (body) => ({ ...parseFacts(body), seriesKeys: new Set(seriesKeys(body)) }),
    async handle(p, ctx) {
      const company = resolveCompany(ctx.deps.store, p.scope);
      const rows = await query(ctx, company.cik, p.metricId);
      return factsEnvelope(
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
