/**
 * The search operations' request rules and answers: scope, dates, legal expansion, snippets, and
 * search/filings, search/entities and search/series.
 */
export {
  parseEntitySearch,
  parseSeriesSearch,
  runEntitySearch,
  runSeriesSearch,
  type EntitySearchParams,
  type SeriesSearchParams,
} from './entity-search.js';
export { parseFilingSearch, runFilingSearch, type FilingSearchParams } from './filing-search.js';
