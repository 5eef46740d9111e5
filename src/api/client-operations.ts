/**
 * What the client makes of the contract's operations (src/contract/contract-types.ts): which it
 * streams row by row, and what a plain call resolves to.
 */
import type { B2bOperation } from '../contract/contract-types.js';
import type { RateLimitState } from '../types.js';

/** Operations whose rows the client can stream (large responses, constant memory). */
export const STREAM_OPERATIONS = [
  'facts/full',
  'facts/core',
  'facts/latest',
  'evidence/enriched',
  'series/catalog',
  'dims/catalog',
] as const satisfies readonly B2bOperation[];
export type StreamOperation = (typeof STREAM_OPERATIONS)[number];

/** Whether the client can stream `op`'s rows (narrows any operation id, a literal union too). */
export function isStreamOperation(op: string): op is StreamOperation {
  return (STREAM_OPERATIONS as readonly string[]).includes(op);
}

/** What every plain client method resolves to. */
export interface ApiResult<T> {
  data: T;
  status: number;
  rateLimit: RateLimitState;
}
