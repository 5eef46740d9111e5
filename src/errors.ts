/**
 * The one error hierarchy of filings-export. Every error has a stable `code` (safe to match on,
 * also after serialisation across processes by BullMQ), an optional `cause`, and `retryable`:
 * whether this occurrence may pass by itself (a fact of the error: its status, what the SDK saw).
 * It is not the part job's policy: whether a part is attempted again is FAILURE_POLICY's
 * (src/pipeline/part/failure-policy.ts, `retriedByPolicy`), which reads `retryable` only for the codes
 * whose rule says `onlyIfTransient`. The storage read retry and the warehouse load job read it directly.
 */
import type { QuotaKind, QuotaScope, RateLimitState } from './types.js';

export type ErrorCode =
  // configuration and input
  | 'CONFIG_INVALID'
  | 'INPUT_INVALID'
  | 'DATA_INVALID'
  // client-side validation: the request was never sent
  | 'REQUEST_INVALID'
  // API responses (section 7)
  | 'API_BAD_REQUEST'
  | 'API_KEY_REQUIRED'
  | 'API_KEY_INVALID'
  | 'API_ACCOUNT_DISABLED'
  | 'API_KEY_REVOKED'
  | 'API_KEY_DISABLED'
  | 'API_KEY_EXPIRED'
  | 'API_NOT_ENTITLED'
  | 'API_FORBIDDEN'
  | 'API_NOT_FOUND'
  | 'API_RATE_LIMITED'
  | 'API_QUOTA_EXCEEDED'
  | 'API_SERVER_ERROR'
  | 'API_UNAVAILABLE'
  | 'API_UNEXPECTED_STATUS'
  // transport
  | 'TRANSPORT_TIMEOUT'
  | 'TRANSPORT_RESET'
  | 'TRANSPORT_TRUNCATED'
  | 'TRANSPORT_MALFORMED'
  | 'TRANSPORT_ABORTED'
  // budget, pipeline and output
  | 'BUDGET_EXHAUSTED'
  | 'PLAN_DOES_NOT_FIT'
  | 'SNAPSHOT_STOPPED'
  | 'OUTPUT_FAILED'
  | 'REUSE_SOURCE_CHANGED'
  | 'STORAGE_UNAVAILABLE'
  | 'STORAGE_NOT_FOUND'
  | 'VERIFY_FAILED'
  | 'ICEBERG_COMMIT_FAILED'
  // warehouse loads
  | 'WAREHOUSE_UNAVAILABLE'
  | 'WAREHOUSE_REFUSED'
  | 'WAREHOUSE_SHRINK_REFUSED'
  // infrastructure
  | 'REDIS_UNAVAILABLE'
  | 'INTERNAL';

export interface ErrorOptions {
  cause?: unknown;
}

export class FilingsExportError extends Error {
  readonly code: ErrorCode;
  readonly retryable: boolean;

  constructor(code: ErrorCode, message: string, retryable: boolean, options: ErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.retryable = retryable;
  }
}

/** Bad configuration: names the field and what is wrong. Never retryable. */
export class ConfigError extends FilingsExportError {
  constructor(message: string, options?: ErrorOptions) {
    super('CONFIG_INVALID', message, false, options);
  }
}

/** Bad user input other than config (a tickers file, a CLI argument, a keys file, a data dir). */
export class InputError extends FilingsExportError {
  constructor(message: string, options?: ErrorOptions & { code?: 'INPUT_INVALID' | 'DATA_INVALID' }) {
    super(options?.code ?? 'INPUT_INVALID', message, false, options);
  }
}

/** Context every API-side error carries. Never contains the API key. */
export interface ApiErrorContext {
  /** Operation path, for example `facts/full`. */
  operation: string;
  /** HTTP status, absent for transport failures before a status line. */
  status?: number;
  /** First bytes of the response body, for a person reading the log. */
  bodyExcerpt?: string;
  /** Rate-limit headers of the failing response, when present. */
  rateLimit?: RateLimitState;
}

/** Any failure of one API call: an error response, or a transport failure. */
export class ApiError extends FilingsExportError {
  readonly operation: string;
  readonly status: number | undefined;
  readonly bodyExcerpt: string | undefined;
  readonly rateLimit: RateLimitState;

  constructor(
    code: ErrorCode,
    message: string,
    retryable: boolean,
    ctx: ApiErrorContext,
    options?: ErrorOptions,
  ) {
    super(code, message, retryable, options);
    this.operation = ctx.operation;
    this.status = ctx.status;
    this.bodyExcerpt = ctx.bodyExcerpt;
    this.rateLimit = ctx.rateLimit ?? {};
  }
}

/** The client refused to send a request that breaks a documented bound: no budget was spent. */
export class RequestValidationError extends FilingsExportError {
  readonly operation: string;
  readonly field: string;
  constructor(operation: string, field: string, message: string) {
    super('REQUEST_INVALID', `${operation}: ${field}: ${message}`, false);
    this.operation = operation;
    this.field = field;
  }
}

/** 400: the request was malformed. Permanent. */
export class BadRequestError extends ApiError {
  constructor(message: string, ctx: ApiErrorContext) {
    super('API_BAD_REQUEST', message, false, ctx);
  }
}

/** 401: no key or an unknown key. Permanent: stop everything, retries cannot help. */
export class AuthenticationError extends ApiError {
  constructor(code: 'API_KEY_REQUIRED' | 'API_KEY_INVALID', message: string, ctx: ApiErrorContext) {
    super(code, message, false, ctx);
  }
}

export type ForbiddenCode =
  | 'API_ACCOUNT_DISABLED'
  | 'API_KEY_REVOKED'
  | 'API_KEY_DISABLED'
  | 'API_KEY_EXPIRED'
  | 'API_NOT_ENTITLED'
  | 'API_FORBIDDEN';

/** 403: the account or key may not be used (section 7 reasons). Permanent. */
export class ForbiddenError extends ApiError {
  constructor(code: ForbiddenCode, message: string, ctx: ApiErrorContext) {
    super(code, message, false, ctx);
  }
}

/** 404: unknown ticker or CIK. Permanent for this company; other companies go on. */
export class NotFoundError extends ApiError {
  /** The identifier the server named, or the one requested. */
  readonly identifier: string | undefined;
  constructor(message: string, ctx: ApiErrorContext & { identifier?: string }) {
    super('API_NOT_FOUND', message, false, ctx);
    this.identifier = ctx.identifier;
  }
}

/** 429 per-minute rate limit: wait retryAfterMs, then the same request succeeds. */
export class RateLimitedError extends ApiError {
  readonly retryAfterMs: number;
  readonly limit: number | undefined;
  readonly windowMs: number;
  constructor(
    message: string,
    ctx: ApiErrorContext & { retryAfterMs: number; limit?: number; windowMs?: number },
  ) {
    super('API_RATE_LIMITED', message, true, ctx);
    this.retryAfterMs = ctx.retryAfterMs;
    this.limit = ctx.limit;
    this.windowMs = ctx.windowMs ?? 60_000;
  }
}

/** 429 quota: the daily or monthly allowance is spent; waiting until its reset is the only remedy. */
export class QuotaExceededError extends ApiError {
  readonly quota: QuotaKind;
  readonly scope: QuotaScope;
  readonly limit: number | undefined;
  readonly used: number | undefined;
  /** Retry-After of the response, when sent. */
  readonly retryAfterMs: number | undefined;
  constructor(
    message: string,
    ctx: ApiErrorContext & {
      quota: QuotaKind;
      scope: QuotaScope;
      limit?: number;
      used?: number;
      retryAfterMs?: number;
    },
  ) {
    super('API_QUOTA_EXCEEDED', message, true, ctx);
    this.quota = ctx.quota;
    this.scope = ctx.scope;
    this.limit = ctx.limit;
    this.used = ctx.used;
    this.retryAfterMs = ctx.retryAfterMs;
  }
}

/** 503 `Facts backend unavailable`: transient, retry with backoff. */
export class BackendUnavailableError extends ApiError {
  constructor(message: string, ctx: ApiErrorContext) {
    super('API_UNAVAILABLE', message, true, ctx);
  }
}

/** 500 or another 5xx: retry with backoff. */
export class ServerError extends ApiError {
  constructor(message: string, ctx: ApiErrorContext) {
    super('API_SERVER_ERROR', message, true, ctx);
  }
}

/** A status the interface does not list. Retryable only for 5xx. */
export class UnexpectedStatusError extends ApiError {
  constructor(message: string, ctx: ApiErrorContext) {
    super('API_UNEXPECTED_STATUS', message, (ctx.status ?? 0) >= 500, ctx);
  }
}

export type TransportCode =
  | 'TRANSPORT_TIMEOUT'
  | 'TRANSPORT_RESET'
  | 'TRANSPORT_TRUNCATED'
  | 'TRANSPORT_MALFORMED'
  | 'TRANSPORT_ABORTED';

/** The request or response did not complete: timeouts, resets, truncated or malformed bodies. */
export class TransportError extends ApiError {
  constructor(code: TransportCode, message: string, ctx: ApiErrorContext, options?: ErrorOptions) {
    // An abort is the caller's own decision: retrying it would ignore that decision.
    super(code, message, code !== 'TRANSPORT_ABORTED', ctx, options);
  }
}

/** The exporter's own budget (configured quota or plan) forbids the request. */
export class BudgetError extends FilingsExportError {
  constructor(code: 'BUDGET_EXHAUSTED' | 'PLAN_DOES_NOT_FIT', message: string, options?: ErrorOptions) {
    super(code, message, code === 'BUDGET_EXHAUSTED', options);
  }
}

/**
 * Writing, publishing or verifying output failed. `REUSE_SOURCE_CHANGED` (a published file an
 * incremental snapshot reuses went missing or changed after its parts were decided) is retryable:
 * the retry decides those parts again, and fetches them. `ICEBERG_COMMIT_FAILED` (a published
 * snapshot's Iceberg commit) is retryable as its cause is: the snapshot stays published either way.
 */
export class OutputError extends FilingsExportError {
  constructor(
    code: 'OUTPUT_FAILED' | 'VERIFY_FAILED' | 'REUSE_SOURCE_CHANGED' | 'ICEBERG_COMMIT_FAILED',
    message: string,
    options?: ErrorOptions,
  ) {
    const retryable =
      code === 'REUSE_SOURCE_CHANGED' || (code === 'ICEBERG_COMMIT_FAILED' && isRetryable(options?.cause));
    super(code, message, retryable, options);
  }
}

/**
 * The output root cannot be used (missing bucket, refused credentials, unreachable endpoint, a
 * local root that is not a writable directory) or an object is missing. The message names the root.
 */
export class StorageError extends FilingsExportError {
  constructor(
    code: 'STORAGE_UNAVAILABLE' | 'STORAGE_NOT_FOUND',
    message: string,
    retryable: boolean,
    options?: ErrorOptions,
  ) {
    super(code, message, retryable, options);
  }
}

/** Turns anything thrown into an Error without losing what it was. Use in every catch. */
export function coerceError(err: unknown): Error {
  if (err instanceof Error) return err;
  if (typeof err === 'string') return new Error(err);
  try {
    return new Error(`non-error thrown: ${JSON.stringify(err)}`);
  } catch {
    return new Error(`non-error thrown: ${String(err)}`);
  }
}

/** Redis cannot be reached: names the URL (password redacted). Retryable: it may come back. */
export class InfraError extends FilingsExportError {
  constructor(code: 'REDIS_UNAVAILABLE', message: string, options?: ErrorOptions) {
    super(code, message, true, options);
  }
}

/** Whether an error (of any origin) may succeed on retry. Unknown errors count as retryable. */
export function isRetryable(err: unknown): boolean {
  return err instanceof FilingsExportError ? err.retryable : true;
}

/**
 * A warehouse `load` could not run: the database is unreachable or busy with another loader
 * (UNAVAILABLE, retryable), it refused us (wrong password, a table altered by hand: REFUSED), or
 * the load would empty a table or remove most of its companies (SHRINK_REFUSED: `--allow-shrink`).
 * Messages never hold a password.
 */
export class WarehouseError extends FilingsExportError {
  constructor(
    code: 'WAREHOUSE_UNAVAILABLE' | 'WAREHOUSE_REFUSED' | 'WAREHOUSE_SHRINK_REFUSED',
    message: string,
    options?: ErrorOptions,
  ) {
    super(code, message, code === 'WAREHOUSE_UNAVAILABLE', options);
  }
}

/** Stable code of any error, INTERNAL for foreign ones. */
export function errorCode(err: unknown): ErrorCode {
  return err instanceof FilingsExportError ? err.code : 'INTERNAL';
}
