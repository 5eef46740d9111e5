/** evidence/enriched (4.13): the evidence envelope (2.6), newest filing first. */
import {
  companyScope,
  envelopeTicker,
  optionalMetricId,
  resolveCompany,
  type CompanyScope,
} from '../validate.js';
import { defineOperation } from './types.js';

export const evidenceEnriched = defineOperation<{ scope: CompanyScope; metricId: string | undefined }>({
  id: 'evidence/enriched',
  parse: (body) => ({ scope: companyScope(body), metricId: optionalMetricId(body) }),
  async handle(p, ctx) {
    const company = resolveCompany(ctx.deps.store, p.scope);
    const rows = await ctx.deps.store.evidence(company.cik, p.metricId);
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
