/**
 * series/catalog (4.10) and dims/catalog (4.11). Their envelope mirrors the facts envelope:
 * scope, ticker, cik, metric_id, count, rows (the seed shows only `scope` and rows).
 */
import { companyRowsOperation } from './company-envelope.js';

export const seriesCatalog = companyRowsOperation('series/catalog', (ctx, cik, m) =>
  ctx.deps.store.seriesCatalog(cik, m),
);
export const dimsCatalog = companyRowsOperation('dims/catalog', (ctx, cik, m) =>
  ctx.deps.store.dimsCatalog(cik, m),
);
