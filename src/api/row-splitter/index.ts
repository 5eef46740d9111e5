/**
 * Rows of an envelope `{ ...fields, "rows": [ {...}, ... ], ...fields }` from its byte stream: a
 * byte scanner finds where each row ends and complete rows are parsed in batches by the native
 * JSON.parse, with every number literal a double cannot hold exactly quoted first (json-number.ts),
 * so it arrives as its exact text. Chosen by measurement over stream-json's tokenizer
 * (docs/decisions.md "## Client").
 *
 * splitter.ts is the splitter and its quick path for compact bodies; scanner.ts the byte scan;
 * literals.ts the number literals read off the bytes (also for whole bodies); row-text.ts what
 * rawText() hands out. Memory: the bytes of the row in progress (carried over to the next chunk),
 * at most one batch of MAX_BATCH_BYTES of row text and its parsed rows, and the envelope's bytes
 * outside `rows`.
 */
export { decodeQuoting, exactText, inexactLiterals } from './literals.js';
export type { Row } from './row-text.js';
export { MAX_BATCH_BYTES, SplitError } from './scanner.js';
export { RowSplitter, type RowSplitterOptions } from './splitter.js';
