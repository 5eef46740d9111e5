/**
 * Reading the data dir's SEC files: the layout and its gzip reader, the companyfacts, submissions
 * and tickers JSON, the inline XBRL and classic instance scanners, and which filing a bundled
 * document belongs to.
 */
export { defaultDataDir, readDataFile, scanDataDir, type DataFile, type DataLayout } from './files.js';
export { loadFilingDocuments, loadLabelLinkbases, type FilingDocument } from './filing-documents.js';
export { edgarDocumentUrl, edgarFilingIndexUrl, filedAtIsRecorded, identifyFiling, parseReadmeCatalog, type FilingIdentity, type ReadmeCatalogEntry } from './filing-identity.js';
export { parseXbrlInstance } from './instance.js';
export { parseInlineXbrl, type DocumentFact, type ParsedFilingDocument, type TableLocation } from './ixbrl.js';
export { parseJson, parseJsonQuotingKeys } from './json.js';
export { parseCompanyFacts, parseSubmissions, parseTickers, type CompanyFacts, type CompanyFactsObservation, type SubmissionFiling, type Submissions, type TickerEntry } from './sec-json.js';
export { decodeEntities, type DimensionMember } from './xbrl-common.js';
