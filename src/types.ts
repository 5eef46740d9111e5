/**
 * Central types of filings-export.
 *
 * Glossary
 * - snapshot: one export run, named by a deterministic id (`nightly-2026-11-21`, `adhoc-…`). It is
 *   published when its manifest and `_SUCCESS` marker exist; until then it is not there for readers.
 * - dataset: one kind of exported table, backed by one API operation (facts_full ← facts/full,
 *   evidence ← evidence/enriched, series_catalog ← series/catalog, …).
 * - part: the unit of work and of retry: one (ticker, dataset) of a snapshot, exactly one API
 *   request per attempt, written to one staged file and reported as a pointer (path, rows, bytes, sha256).
 * - partition: a Hive-style folder of a dataset in the output (`<dataset>/snapshot_date=YYYY-MM-DD/`).
 * - budget: what the exporter may still spend against the API key: requests in the current rate
 *   window plus the daily and monthly quotas, shared through Redis by every worker.
 * - window: the API's fixed 60 s rate-limit window per key (X-RateLimit-Limit/Remaining/Reset).
 * - quota: the daily and monthly request allowances, counted per account first and then per key;
 *   they reset at 00:00 UTC and on the first day of the month (UTC).
 */

/** Datasets come from the registry (src/datasets/registry.ts): one entry per dataset. */
import type { DatasetName } from './datasets/index.js';
export { DATASETS, DEFAULT_DATASETS, isDatasetName, type DatasetName } from './datasets/index.js';

/** Output formats of a snapshot. */
export const OUTPUT_FORMATS = ['parquet', 'ndjson'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** Field kinds (output/staged-part/field-kinds.ts), bit flags; a field's kinds are the OR over every row. */
export const Kind = {
  NULL: 1,
  STRING: 2,
  /** A string shaped YYYY-MM-DD (not STRING). */
  DATE_STRING: 4,
  /** A safe integer. */
  INT: 8,
  /** A number that is not a safe integer (fraction, exponent, or beyond 2^53). */
  FLOAT: 16,
  BOOLEAN: 32,
  /** An array whose elements are all strings (empty arrays count here). */
  STRING_ARRAY: 64,
  /** Any other array. */
  ARRAY: 128,
  OBJECT: 256,
  /** A bigint (written as a raw JSON integer). */
  BIGINT: 512,
} as const;

/**
 * A row handed out as its received text, not parsed (RowStream.compactRows): compact ASCII JSON,
 * exactly what JSON.stringify of the parsed row writes, with the kind of each top-level field
 * read from the text (the rule of kindOf in output/staged-part/field-kinds.ts).
 */
export class RowText {
  constructor(
    /** `{…}`: a view of the received body, valid until the next row is asked for. */
    readonly text: Uint8Array,
    /** The row's names in order (shared by the rows of a batch). */
    readonly names: readonly string[],
    /** Kind bits: `kinds[at + i]` is the kind of `names[i]` in this row. */
    readonly kinds: readonly number[],
    readonly at: number,
  ) {}
}

/** Time source. Injected everywhere time matters so quota resets and windows are testable in seconds. */
export interface Clock {
  /** Milliseconds since the Unix epoch. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/**
 * Rate-limit state read from one response: X-RateLimit-* and Retry-After headers.
 * Every field is optional because the interface omits the headers on 400/401/403 bodies.
 */
export interface RateLimitState {
  /** X-RateLimit-Limit: requests allowed per window for the key. */
  limit?: number;
  /** X-RateLimit-Remaining: requests left in the current window. */
  remaining?: number;
  /** X-RateLimit-Reset as epoch milliseconds (the header carries Unix seconds). */
  resetAtMs?: number;
  /** Retry-After in milliseconds, from delta-seconds or an HTTP-date (429 responses). */
  retryAfterMs?: number;
}

/** Quota kinds and scopes of the interface (section 7, 429 quota body). */
export type { QuotaKind, QuotaScope } from './contract/vocabulary.js';

/** Terminal and intermediate states of a part, as recorded in status and the manifest. */
export type PartStatus = 'pending' | 'done' | 'not_found' | 'bad_request' | 'failed';

/** What a finished part reports to its snapshot: a pointer to the staged file, never the rows. */
export interface PartPointer {
  dataset: DatasetName;
  ticker: string;
  status: PartStatus;
  /** Staged file relative to the output root; absent when the part produced no file. */
  file?: string;
  rows: number;
  bytes: number;
  sha256?: string;
  /** Human-readable reason for not_found / bad_request / failed, or why a part was fetched again. */
  message?: string;
  /** series_catalog parts: the catalog fingerprint (pipeline/part/catalog-fingerprint.ts), when computable. */
  fingerprint?: string;
  /** Rows carried over from this earlier published snapshot instead of a request. */
  reusedFrom?: string;
}

/** Exhaustiveness guard for switches over unions. */
export function assertNever(value: never, what = 'value'): never {
  throw new Error(`unexpected ${what}: ${JSON.stringify(value)}`);
}
