/** evidence/enriched (4.13): the evidence envelope (2.6), newest filing first. */
import { companyRowsOperation } from './company-envelope.js';

export const evidenceEnriched = companyRowsOperation('evidence/enriched', (ctx, cik, m) =>
  ctx.deps.store.evidence(cik, m),
);
