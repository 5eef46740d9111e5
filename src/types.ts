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

/**
 * What a part writer's finish() reports: the staged file relative to the output root, its rows,
 * bytes and sha256. Stated here once: the output's writer returns it, the pipeline's port expects it.
 */
export interface StagedPart {
  file: string;
  rows: number;
  bytes: number;
  sha256: string;
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
