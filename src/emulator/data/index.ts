/**
 * The emulator's data layer: real SEC files (companyfacts, submissions, inline XBRL filings, the
 * tickers map) turned into the rows of the Filing Facts API. See docs/emulator.md, section Data.
 */
export { loadStore, type DataStore, type LoadStoreOptions } from './load-store.js';
export type { Restatement } from './restatement.js';
export {
  defaultDataDir,
  scanDataDir,
  readDataFile,
  loadFilingDocuments,
  identifyFiling,
  filedAtIsRecorded,
  edgarDocumentUrl,
  edgarFilingIndexUrl,
  parseReadmeCatalog,
  parseInlineXbrl,
  parseXbrlInstance,
  parseJson,
  parseJsonQuotingKeys,
  parseCompanyFacts,
  parseSubmissions,
  decodeEntities,
  type DataFile,
  type DataLayout,
  type FilingDocument,
  type FilingIdentity,
  type ReadmeCatalogEntry,
  type ParsedFilingDocument,
  type DocumentFact,
  type TableLocation,
  type CompanyFacts,
  type SubmissionFiling,
} from './sec/index.js';
export {
  parseDecimal,
  formatDecimal,
  decimalFields,
  addDecimal,
  subtractDecimal,
  compareDecimal,
  unitInfo,
  sha256Hex,
  seriesIdentity,
  seriesIdOf,
  cikOfId,
  type Decimal,
  type UnitInfo,
} from './fields/index.js';
export { checkAsOf } from './rows/index.js';
export { companyAsOfView, parseCompanyDates, type CompanyDates } from './company-as-of.js';
export { SYNTHETIC_CIK_START } from './companies/index.js';
