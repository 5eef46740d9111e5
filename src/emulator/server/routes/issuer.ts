/** issuer/reference (4.14): envelope of 2.7 with the one issuer row. */
import { companyScope, envelopeTicker, resolveCompany, type CompanyScope } from '../request-fields.js';
import { defineOperation } from './route-context.js';

export const issuerReference = defineOperation<{ scope: CompanyScope }>({
  id: 'issuer/reference',
  parse: (body) => ({ scope: companyScope(body) }),
  async handle(p, ctx) {
    const company = resolveCompany(ctx.deps.store, p.scope);
    const row = await ctx.deps.store.issuerReference(company.cik);
    return {
      kind: 'json',
      body: {
        scope: 'company',
        ticker: envelopeTicker(p.scope, company),
        cik: company.cik,
        count: 1,
        rows: [row],
      },
    };
  },
});
