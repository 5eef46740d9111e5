/**
 * What searches run over: the one tokenizer of documents and queries, BM25, the filing chunk index
 * and the entity registry (metrics, members, series).
 */
export { ENTITY_TYPES, EntityRegistry, round6, type EntityType } from './entity-registry.js';
export { FilingIndex, type ChunkHit } from './filing-index.js';
export { normaliseTerm, queryTerms } from './tokenize.js';
