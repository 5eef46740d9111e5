/**
 * What every single-company data operation shares (facts, catalogs, evidence, sandbox facts): the
 * `ticker`/`cik` + `metric_id` request fields and the company envelope of 2.3 around the rows:
 * scope, ticker, cik, metric_id, count, [truncated, total_available], rows (rows last, streamed).
 */
import type { Company } from '../../store.js';
import {
  companyScope,
  envelopeTicker,
  optionalMetricId,
  resolveCompany,
  type Body,
  type CompanyScope,
} from '../request-fields.js';
import {
  defineOperation,
  type B2bRoute,
  type B2bOperationId,
  type OperationContext,
  type OperationResponse,
} from './route-context.js';

/** The request fields of a single-company operation. */
export interface CompanyParams {
  scope: CompanyScope;
  metricId: string | undefined;
}

/** `ticker` or `cik` (exactly one) and the optional `metric_id`; 400 naming the field otherwise. */
export function parseCompanyParams(body: Body): CompanyParams {
  return { scope: companyScope(body), metricId: optionalMetricId(body) };
}

/** The envelope fields before the rows; `extra` (truncated, total_available) goes after count. */
export function companyEnvelopeFields(
  p: CompanyParams,
  company: Company,
  count: number,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    scope: 'company',
    ticker: envelopeTicker(p.scope, company),
    cik: company.cik,
    metric_id: p.metricId ?? null,
    count,
    ...extra,
  };
}

/** The company envelope around `rows`, streamed. */
export function companyEnvelope(
  p: CompanyParams,
  company: Company,
  rows: readonly unknown[],
  extra: Record<string, unknown> = {},
): OperationResponse {
  return { kind: 'envelope', fields: companyEnvelopeFields(p, company, rows.length, extra), rows };
}

/** Rows of one company (and metric) from the store. */
export type CompanyRowsQuery = (
  ctx: OperationContext,
  cik: string,
  metricId: string | undefined,
) => Promise<readonly unknown[]>;

/**
 * An operation answering every row `query` gives for the requested company: parse, resolve (404
 * naming the ticker or CIK), envelope.
 */
export function companyRowsOperation(id: B2bOperationId, query: CompanyRowsQuery): B2bRoute {
  return defineOperation<CompanyParams>({
    id,
    parse: parseCompanyParams,
    async handle(p, ctx) {
      const company = resolveCompany(ctx.deps.store, p.scope);
      return companyEnvelope(p, company, await query(ctx, company.cik, p.metricId));
    },
  });
}
