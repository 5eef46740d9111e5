/**
 * The contract of a route module. `/api/b2b/*` operations are rows of a table (routes/index.ts):
 * the shared pipeline authenticates, limits, parses JSON and injects faults, then calls
 *   1. `parse(body, ctx)`: validate synchronously, throw HttpError 400 (or 403 for a missing
 *      entitlement, see requireEntitlement) naming the field; return typed params;
 *   2. `handle(params, ctx)`: look up (throw HttpError 404 naming the ticker) and return the response.
 * Non-key routes (GET: blobs, viewer, sandbox) are `RawRoute`s with their own path pattern.
 *
 * Adding an operation: one module under routes/ exporting a `B2bRoute` (via defineOperation),
 * and one line in routes/index.ts.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../../runtime.js';
import type { EmulatorClock } from '../../runtime.js';
import type { AuthenticatedKey } from '../../auth/authenticator.js';
import { hasEntitlement, notEntitledMessage } from '../../auth/entitlements.js';
import type { EmulatorStore } from '../../store.js';
import { HttpError } from '../http-error.js';
import type { Body } from '../request-fields.js';
import type { B2bOperation } from '../../../contract/contract-types.js';

/** The contract's `/api/b2b/*` operation ids: a route's id must be one (TypeScript names a typo). */
export type B2bOperationId = B2bOperation;

/** What every route may use. */
export interface ServerDeps {
  store: EmulatorStore;
  clock: EmulatorClock;
  logger: Logger;
  /** Public base URL without trailing slash, prefixed to `…_url` fields that hold absolute paths. */
  publicUrl(): string;
  /** Data dir of the SEC files; search reads filing documents from it. @defaultValue bundled data/sec */
  dataDir?: string;
}

export interface OperationContext {
  /** Operation id, e.g. `facts/full`. */
  operation: string;
  /** The authenticated key and its account. */
  auth: AuthenticatedKey;
  deps: ServerDeps;
  /** Aborted when the client disconnects or the emulator closes. */
  signal: AbortSignal;
}

/**
 * What an operation answers. `envelope` is streamed: fields first, then `rowsField` (default
 * `rows`) in chunks; use it for anything that can be large. URL fields are rewritten in both.
 */
export type OperationResponse =
  | { kind: 'json'; status?: number; body: unknown }
  | { kind: 'envelope'; fields: Record<string, unknown>; rowsField?: string; rows: readonly unknown[] };

export interface B2bRoute<P = unknown> {
  /** Path after `/api/b2b/`. */
  id: B2bOperationId;
  /** Subject to `--fault-rate` (data requests). @defaultValue true */
  dataRequest?: boolean;
  /** Counts toward the monthly quota (false only for telemetry). @defaultValue true */
  countsMonthly?: boolean;
  parse(body: Body, ctx: OperationContext): P;
  handle(params: P, ctx: OperationContext): Promise<OperationResponse>;
}

/** Erases the params type so operations of different params fit one table. */
export function defineOperation<P>(op: B2bRoute<P>): B2bRoute {
  return op as unknown as B2bRoute;
}

/** For search routes: 403 `API key is not entitled for cross-company search` (or another). */
export function requireEntitlement(ctx: OperationContext, entitlement: string): void {
  if (!hasEntitlement(ctx.auth, entitlement)) throw new HttpError(403, notEntitledMessage(entitlement));
}

export interface RawRouteContext {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  /** Capture groups of the route pattern, URI-decoded. */
  params: string[];
  deps: ServerDeps;
  signal: AbortSignal;
}

/** A route outside `/api/b2b/`: no key, no limits, no faults. */
export interface RawRoute {
  method: 'GET' | 'POST' | 'DELETE';
  /** Matched against the URL path (no query). */
  pattern: RegExp;
  handle(ctx: RawRouteContext): Promise<void>;
}
