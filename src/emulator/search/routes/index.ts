/**
 * The search routes (search/filings, search/entities, search/series, the sandbox search and the
 * chunk viewer), registered in src/emulator/server/routes/index.ts.
 */
export { chunkViewer } from './chunk-viewer.js';
export { searchEntities } from './search-entities.js';
export { searchFilings } from './search-filings.js';
export { searchSeries } from './search-series.js';
export { sandboxSearch } from './sandbox-search.js';
