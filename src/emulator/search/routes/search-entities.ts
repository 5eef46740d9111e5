/** POST /api/b2b/search/entities (section 4.7): registry search over metrics, members and series. */
import { defineOperation } from '../../server/routes/route-context.js';
import { parseEntitySearch, runEntitySearch, type EntitySearchParams } from '../query/index.js';
import { searchService } from './deps.js';

export const searchEntities = defineOperation<EntitySearchParams>({
  id: 'search/entities',
  parse: (body, ctx) => parseEntitySearch(body, ctx.auth),
  async handle(params, ctx) {
    return { kind: 'json', body: await runEntitySearch(searchService(ctx.deps), params) };
  },
});
