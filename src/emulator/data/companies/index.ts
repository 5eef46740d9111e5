/**
 * The company universe: the registry of the real companies of a data dir, and synthetic issuers
 * (planned clones, their rewritten views, SYNBIG's generated rows).
 */
export { CloneRewriter, mappedView } from './clone.js';
export { buildRegistry, type RealCompany } from './company-registry.js';
export { SYNTHETIC_CIK_START, planSynthetic, virtualFactRows } from './synthetic.js';
export { CompanyIndex, type CompanyEntry } from './company-index.js';
export { type Registry } from './company-registry.js';
