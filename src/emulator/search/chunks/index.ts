/**
 * Bundled 10-K/10-Q documents cut into classified search chunks: the document list, HTML text
 * blocks, section classification, chunking and the review state of a chunk.
 */
export { buildCorpus, type Chunk, type Corpus } from './corpus.js';
export { listFilingDocuments, type ListedFiling } from './filing-list.js';
export { CHUNK_TYPES, isChunkType, type ChunkType } from './sections.js';
