/**
 * One company's served rows, built from its parsed sources: the winning facts, fact and evidence
 * rows, facts/core normalisation, catalogs and series, the issuer reference and the as-of cut.
 */
export { checkAsOf, filedBy, latestFilingDate } from './as-of.js';
export { type SeriesEntry } from './catalogs.js';
export { CompanyData, type CompanyIdentity, type CompanyInputs, type MetricSlice } from './company.js';
export { issuerReference } from './issuer.js';
