/**
 * The emulator's data layer: real SEC files (companyfacts, submissions, inline XBRL filings, the
 * tickers map) turned into the rows of the Filing Facts API. See docs/emulator.md, section Data.
 */
export { loadStore, type DataStore, type LoadStoreOptions } from './load-store.js';
export { defaultDataDir, scanDataDir, readDataFile, type DataFile, type DataLayout } from './files.js';
export { loadFilingDocuments, type FilingDocument } from './filing-documents.js';
export {
  identifyFiling,
  edgarDocumentUrl,
  edgarFilingIndexUrl,
  parseReadmeCatalog,
  type FilingIdentity,
} from './filing-identity.js';
export { parseInlineXbrl, type ParsedFilingDocument, type DocumentFact, type TableLocation } from './ixbrl.js';
export { parseXbrlInstance } from './instance.js';
export {
  parseDecimal,
  formatDecimal,
  decimalFields,
  addDecimal,
  subtractDecimal,
  compareDecimal,
  type Decimal,
} from './decimal.js';
export { parseJson, parseJsonQuotingKeys } from './json.js';
export { unitInfo, type UnitInfo } from './units.js';
export { sha256Hex, seriesIdentity, seriesIdOf, cikOfId } from './keys.js';
export { SYNTHETIC_CIK_START } from './synthetic.js';
