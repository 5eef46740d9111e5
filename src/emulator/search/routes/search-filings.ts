/** POST /api/b2b/search/filings (section 4.9): BM25 over chunked filing sections. */
import { defineOperation } from '../../server/routes/route-context.js';
import { parseFilingSearch, runFilingSearch, type FilingSearchParams } from '../query/index.js';
import { searchService } from './deps.js';

export const searchFilings = defineOperation<FilingSearchParams>({
  id: 'search/filings',
  parse: (body, ctx) => parseFilingSearch(body, ctx.auth),
  async handle(params, ctx) {
    const body = await runFilingSearch(searchService(ctx.deps), params, ctx.deps.clock.now());
    return { kind: 'json', body };
  },
});
