/**
 * Public API of the Filing Facts client (src/api). Everything the pipeline, CLI and tests use.
 */
export { FilingsClient, type FilingsClientOptions, type CallOptions } from './client.js';
export type { RowStream } from './row-stream.js';
export { parseRateLimit, parseRetryAfter, parseHttpDate, type HeaderBag } from './rate-limit.js';
export { parseJsonNumber } from './json-number.js';
export { validateRequest, validateSandboxQuery, LIMITS, CHUNK_TYPES, ENTITY_TYPES } from './validate.js';
export { createRowExtractor, parseJsonLossless, type RowExtractor } from './row-extractor.js';
export { errorFromResponse, redactSecret } from './error-map.js';
export * from '../contract/contract-types.js';
export * from './client-operations.js';
