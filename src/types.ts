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

/**
 * A part being staged: rows in, one staged file out. Output's writers (a local root, a bucket through
 * a local file) implement it; the part job drives it through the pipeline's port. Stated once, here.
 */
export interface PartWriter {
  /**
   * Adds a row. Returns a promise only when the caller must wait (backpressure). `rawJson`, when
   * given, is the row's own JSON text (`{…}`, UTF-8) saying exactly what JSON.stringify(row) would
   * (RowStream.rawText): it is copied instead of serialising the row again, and must stay
   * unchanged until the returned promise settles (it may be a view of the received body).
   */
  write(row: Record<string, unknown>, rawJson?: Uint8Array): Promise<void> | void;
  /**
   * Adds a row that was never parsed (RowStream.compactRows): its text and field kinds record the
   * same line and the same field list as write() of the parsed row with that text.
   */
  writeText(row: RowText): Promise<void> | void;
  /** Completes the file, fsyncs it and renames it into place. */
  finish(): Promise<StagedPart>;
  /** Discards everything written; the final name is never touched. */
  abort(): Promise<void>;
  /** Rows written so far. */
  readonly rows: number;
  /** Names this staging attempt (random): the sidecar records it, and segments cut from the file. */
  readonly stagingId: string;
  /**
   * The prefix of the file that is complete gzip members already written to disk, which a reader
   * may convert while the rest is staged (early-segments.ts). Undefined before the first member ends.
   */
  written(): WrittenPrefix | undefined;
  /**
   * The uncompressed file of the segment starting at row `skip` (written when the writer was asked
   * for `plainSegmentRows`), handed over to its conversion, which removes it; 'pending' while its
   * last bytes are still being written; undefined when it has none. Absent: the writer writes none.
   */
  takePlainSegment?(skip: number): PlainSegment | 'pending' | undefined;
}

/** A segment's rows, uncompressed, in a file of their own (output/staging/plain-segments.ts). */
export interface PlainSegment {
  /** Absolute path (plainSegmentPath). */
  file: string;
  /** Its size once complete: a shorter file is not read. */
  bytes: number;
}

/*
 * The shapes the pipeline's ports (src/pipeline/part/ports.ts) exchange with the output that satisfies
 * them, stated here once so the port does not import its adapter's modules.
 */

/** The field list of a part: names in order of first appearance with their kinds (output/staging/field-kinds.ts). */
export interface FieldKinds {
  names: string[];
  kinds: number[];
}

/** Field kinds (output/staging/field-kinds.ts), bit flags; a field's kinds are the OR over every row. */
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
 * read from the text (the rule of kindOf in output/staging/field-kinds.ts).
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

/** Complete gzip members on disk at the start of a staged file being written. */
export interface WrittenPrefix {
  /** The file being written (its temporary name) and its final name, both absolute. */
  file: string;
  finalFile: string;
  stagingId: string;
  /** Rows and bytes of the complete members. */
  rows: number;
  bytes: number;
  /** Start (row, byte offset) of each member after the first, up to the first incomplete one at (rows, bytes). */
  members: { row: number; offset: number }[];
  /** Field kinds of every row written so far (the prefix's and more). */
  fields: FieldKinds;
  maxLineChars: number;
  /**
   * Rows below this are not in the gzip file but only in their segments' files (a part staged
   * with `segmentsOutsideGzip`): the file's first member starts at this row, offset 0.
   * @defaultValue 0: the gzip holds every row
   */
  gzipFrom?: number;
}

/** What a converter needs to convert rows [skip, skip + take) of a part being staged. */
export interface SegmentRequest {
  root: string;
  snapshotId: string;
  dataset: DatasetName;
  /** The staged file as it is being written (its temporary name), and its final name. */
  file: string;
  finalFile: string;
  /** The staging attempt (PartWriter stagingId): a segment is used only for the file it was cut from. */
  stagingId: string;
  skip: number;
  take: number;
  /** The bytes holding the rows: [offset, end) of `file`, whose first row is `row`, `rows` rows in all. */
  cut: { offset: number; end: number; row: number; rows: number };
  /** Field kinds of the rows staged so far. */
  fields: FieldKinds;
  /** Longest line so far, UTF-16 units. */
  maxLineChars: number;
  /**
   * Size of the segment's uncompressed file (plainSegmentPath), when the part writer wrote one:
   * read instead of the gzip bytes if it holds exactly this many. @defaultValue none: the gzip bytes
   */
  plainBytes?: number;
  /**
   * The segment's rows are in its uncompressed file only (not in the gzip part): never read the
   * gzip for them, and keep the file unless the conversion succeeds (publishing converts it then).
   * @defaultValue false
   */
  plainOnly?: boolean;
}

export type SegmentOutcome =
  /** `read`: which bytes were converted, the segment's uncompressed file or its gzip members. */
  | { status: 'converted'; path: string; ms: number; read: 'plain' | 'gzip' }
  | { status: 'skipped'; reason: string };

/** Carrying a part over from an earlier published snapshot (output/publish/carry-over.ts). */
export interface CarryOverRequest {
  /** Archive key of the earlier part (manifest part `archive`). */
  archive: string;
  bytes: number;
  sha256: string;
  /** This snapshot's staged part key. */
  to: string;
  /** Parent of the temp copy. @defaultValue os.tmpdir() */
  tmpDir?: string;
}

export type CarryOverResult = { ok: true } | { ok: false; reason: string };

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
