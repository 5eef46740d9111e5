/** POST /api/b2b/search/series (section 4.8): series-only search, `fetch_top` hydrates `top_series`. */
import { defineOperation } from '../../server/routes/route-context.js';
import { parseSeriesSearch, runSeriesSearch, type SeriesSearchParams } from '../query/index.js';
import { searchService } from './deps.js';

export const searchSeries = defineOperation<SeriesSearchParams>({
  id: 'search/series',
  parse: (body, ctx) => parseSeriesSearch(body, ctx.auth),
  async handle(params, ctx) {
    return { kind: 'json', body: await runSeriesSearch(searchService(ctx.deps), params) };
  },
});
