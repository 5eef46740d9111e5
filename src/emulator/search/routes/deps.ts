/** The SearchService of the emulator a route runs in. */
import { defaultDataDir } from '../../data/index.js';
import type { ServerDeps } from '../../server/routes/route-context.js';
import { searchServiceFor, type SearchService } from '../service.js';

export function searchService(deps: ServerDeps): SearchService {
  return searchServiceFor({
    store: deps.store,
    logger: deps.logger,
    dataDir: deps.dataDir ?? defaultDataDir(),
  });
}
