/**
 * The pipeline every `/api/b2b/*` request goes through, in this order (docs/emulator.md):
 *   route (404 unknown operation, 405 not POST) → body size (413) → auth (401/403) →
 *   rate window (429) → quotas, account then key (429) → JSON + fields (400) → fault → latency →
 *   lookup (404) and answer.
 * A request admitted by the limits counts against window and quotas whatever happens next.
 * X-RateLimit-* headers go on every response of an admitted or limited request except 202, 400,
 * 401 and 403 (section 4), and never for a key whose keys-file entry says `rate_limit_headers:
 * false` (its limit still applies, undisclosed); 429s add Retry-After.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { toError } from '../errors.js';
import type { AuthenticatedKey, Authenticator } from '../auth/authenticator.js';
import { FAULT_KINDS, isFaultKind, type Fault, type FaultPlan } from '../faults/fault-plan.js';
import type { Limiter } from '../limits/key-limiter.js';
import type { WindowState } from '../limits/rate-window.js';
import type { Delay } from '../runtime.js';
import { parseJsonObject, readBody } from './body.js';
import { HttpError } from './http-error.js';
import {
  ClientGoneError,
  sendJson,
  streamEnvelope,
  urlRewriter,
  type BodyFault,
  type Headers,
} from './respond.js';
import type { B2bRoute, OperationContext, ServerDeps } from './routes/route-context.js';
import type { RowsTextCache } from './rows-cache.js';
import type { RequestRecord, Stats } from './stats.js';

export interface B2bPipeline {
  deps: ServerDeps;
  authenticator: Authenticator;
  limiter: Limiter;
  faults: FaultPlan;
  stats: Stats;
  /** Delay before every data response. @defaultValue 0 */
  latencyMs: number;
  /** How latency and slow-body pauses wait. */
  delay: Delay;
  /** Serialised rows of lists served repeatedly. @defaultValue none (every answer serialised) */
  rowsCache?: RowsTextCache;
  maxBodyBytes?: number;
}

/** Statuses whose bodies carry no rate-limit headers (section 4). */
const NO_RATE_HEADERS = new Set([202, 400, 401, 403]);

export const FAULT_MESSAGES = {
  '503': 'Facts backend unavailable',
  '500': 'Internal server error: facts lookup failed',
} as const;

function rateHeaders(w: WindowState | undefined): Headers {
  if (!w) return {};
  return {
    'X-RateLimit-Limit': w.limit,
    'X-RateLimit-Remaining': w.remaining,
    'X-RateLimit-Reset': Math.floor(w.resetAtMs / 1000),
  };
}

export async function handleB2b(
  p: B2bPipeline,
  op: B2bRoute,
  req: IncomingMessage,
  res: ServerResponse,
  signal: AbortSignal,
): Promise<void> {
  const record: RequestRecord = { keyId: undefined, operation: op.id, status: 0 };
  let window: WindowState | undefined;
  const headersFor = (status: number): Headers => (NO_RATE_HEADERS.has(status) ? {} : rateHeaders(window));
  const fail = async (status: number, error: string, extra: Headers = {}): Promise<void> => {
    record.status = status;
    await sendJson(res, status, { error }, { ...headersFor(status), ...extra });
  };
  try {
    const raw = await readBody(req, p.maxBodyBytes);
    const authResult = p.authenticator.authenticate(req.headers['x-api-key']);
    if (!authResult.ok) {
      record.keyId = authResult.keyId;
      await fail(authResult.status, authResult.error);
      return;
    }
    const auth: AuthenticatedKey = authResult.auth;
    record.keyId = auth.key.id;

    const admission = p.limiter.admit(auth, op.countsMonthly !== false);
    // A key set to hide its limit answers with no window state: no X-RateLimit-* headers.
    window = auth.key.rate_limit_headers === false ? undefined : admission.window;
    if (!admission.ok) {
      record.status = 429;
      record.limitKind = admission.kind;
      await sendJson(res, 429, admission.body, {
        ...rateHeaders(window),
        'Retry-After': admission.retryAfterS,
      });
      return;
    }

    const ctx: OperationContext = { operation: op.id, auth, deps: p.deps, signal };
    const body = parseJsonObject(raw);
    const params = op.parse(body, ctx);

    const faultHeader = header(req, 'x-emulator-fault');
    if (faultHeader !== undefined && !isFaultKind(faultHeader)) {
      throw new HttpError(400, `X-Emulator-Fault must be one of ${FAULT_KINDS.join(', ')}`);
    }
    const fault = p.faults.decide({
      operation: op.id,
      tickers: tickersOf(p.deps, body),
      headerKind: faultHeader,
      headerMs: headerInt(req, 'x-emulator-fault-ms'),
      dataRequest: op.dataRequest !== false,
    });
    const latency =
      fault === undefined ? (headerInt(req, 'x-emulator-fault-ms') ?? p.latencyMs) : p.latencyMs;
    if (latency > 0) await p.delay(latency, signal);
    if (fault) {
      record.fault = true;
      if (fault.kind === '503' || fault.kind === '500') {
        await fail(Number(fault.kind), FAULT_MESSAGES[fault.kind]);
        return;
      }
      if (fault.kind === 'reset') {
        record.status = 0;
        req.socket.destroy();
        return;
      }
    }

    const result = await op.handle(params, ctx);
    const bodyFault = toBodyFault(fault, p.delay);
    const baseUrl = p.deps.publicUrl();
    const rewrite = urlRewriter(baseUrl);
    if (result.kind === 'json') {
      const status = result.status ?? 200;
      record.status = status;
      await sendJson(res, status, result.body, headersFor(status), { fault: bodyFault, signal, rewrite });
    } else {
      record.status = 200;
      await streamEnvelope(
        res,
        200,
        result.fields,
        result.rowsField ?? 'rows',
        result.rows,
        headersFor(200),
        {
          fault: bodyFault,
          signal,
          rewrite,
          cache: p.rowsCache === undefined ? undefined : { cache: p.rowsCache, key: baseUrl },
        },
      );
    }
  } catch (err: unknown) {
    if (err instanceof HttpError) {
      if (!res.headersSent) await fail(err.status, err.message, err.headers);
      return;
    }
    if (err instanceof ClientGoneError || signal.aborted) {
      res.destroy();
      return;
    }
    const e = toError(err);
    p.deps.logger.error({ err: e, operation: op.id }, 'emulator: operation failed');
    if (res.headersSent) {
      res.destroy();
      return;
    }
    await fail(500, `Internal server error: ${e.message}`);
  } finally {
    p.stats.record(record);
    p.deps.logger.debug(
      { operation: op.id, key: record.keyId, status: record.status, fault: record.fault },
      'emulator: request',
    );
  }
}

function toBodyFault(fault: Fault | undefined, delay: Delay): BodyFault | undefined {
  if (fault?.kind === 'truncate') return { kind: 'truncate' };
  if (fault?.kind === 'slow') return { kind: 'slow', pauseMs: fault.ms ?? 500, delay };
  return undefined;
}

/** Tickers of the requested company, for ticker-filtered fault rules. */
function tickersOf(deps: ServerDeps, body: Record<string, unknown>): string[] {
  const scope: { ticker?: string; cik?: string } = {};
  if (typeof body.ticker === 'string') scope.ticker = body.ticker.trim();
  else if (typeof body.cik === 'string') scope.cik = body.cik.trim();
  else return [];
  const company = deps.store.resolve(scope);
  const own = scope.ticker !== undefined ? [scope.ticker.toUpperCase()] : [];
  return company ? [...own, ...company.tickers] : own;
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return (Array.isArray(v) ? v[0] : v)?.trim().toLowerCase();
}

function headerInt(req: IncomingMessage, name: string): number | undefined {
  const v = header(req, name);
  return v !== undefined && /^\d+$/.test(v) ? Number(v) : undefined;
}
