/**
 * series/catalog (4.10) and dims/catalog (4.11). Their envelope mirrors the facts envelope:
 * scope, ticker, cik, metric_id, count, rows (the seed shows only `scope` and rows).
 */
import type { Row } from '../../store.js';
import {
  companyScope,
  envelopeTicker,
  optionalMetricId,
  resolveCompany,
  type CompanyScope,
} from '../validate.js';
import { defineOperation, type OperationContext } from './types.js';

interface CatalogParams {
  scope: CompanyScope;
  metricId: string | undefined;
}

function catalog(
  id: string,
  query: (ctx: OperationContext, cik: string, m?: string) => Promise<readonly Row[]>,
) {
  return defineOperation<CatalogParams>({
    id,
    parse: (body) => ({ scope: companyScope(body), metricId: optionalMetricId(body) }),
    async handle(p, ctx) {
      const company = resolveCompany(ctx.deps.store, p.scope);
      const rows = await query(ctx, company.cik, p.metricId);
      return {
        kind: 'envelope',
        fields: {
          scope: 'company',
          ticker: envelopeTicker(p.scope, company),
          cik: company.cik,
          metric_id: p.metricId ?? null,
          count: rows.length,
        },
        rows,
      };
    },
  });
}

export const seriesCatalog = catalog('series/catalog', (ctx, cik, m) => ctx.deps.store.seriesCatalog(cik, m));
export const dimsCatalog = catalog('dims/catalog', (ctx, cik, m) => ctx.deps.store.dimsCatalog(cik, m));
