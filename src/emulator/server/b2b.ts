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
import type { B2bRoute, OperationContext, OperationResponse, ServerDeps } from './routes/route-context.js';
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
  const x = new B2bExchange(p, op, req, res, signal);
  try {
    const raw = await readBody(req, p.maxBodyBytes);
    const auth = await x.admit();
    if (auth === undefined) return;
    const ctx: OperationContext = { operation: op.id, auth, deps: p.deps, signal };
    const body = parseJsonObject(raw);
    const params = op.parse(body, ctx);
    const fault = await x.injectFault(body);
    if (fault === 'answered') return;
    await x.answer(await op.handle(params, ctx), fault);
  } catch (err: unknown) {
    await x.failed(err);
  } finally {
    p.stats.record(x.record);
    p.deps.logger.debug(
      { operation: op.id, key: x.record.keyId, status: x.record.status, fault: x.record.fault },
      'emulator: request',
    );
  }
}

/** One `/api/b2b/*` request on its way through the pipeline, and what the stats record of it. */
class B2bExchange {
  readonly record: RequestRecord;
  /** The key's window once admitted (undefined: no X-RateLimit-* headers). */
  private window: WindowState | undefined;

  constructor(
    private readonly p: B2bPipeline,
    private readonly op: B2bRoute,
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
    private readonly signal: AbortSignal,
  ) {
    this.record = { keyId: undefined, operation: op.id, status: 0 };
  }

  /** Authentication, then the rate window and quotas; undefined once refused (answered). */
  async admit(): Promise<AuthenticatedKey | undefined> {
    const authResult = this.p.authenticator.authenticate(this.req.headers['x-api-key']);
    if (!authResult.ok) {
      this.record.keyId = authResult.keyId;
      await this.fail(authResult.status, authResult.error);
      return undefined;
    }
    const auth: AuthenticatedKey = authResult.auth;
    this.record.keyId = auth.key.id;
    const admission = this.p.limiter.admit(auth, this.op.countsMonthly !== false);
    // A key set to hide its limit answers with no window state: no X-RateLimit-* headers.
    this.window = auth.key.rate_limit_headers === false ? undefined : admission.window;
    if (!admission.ok) {
      this.record.status = 429;
      this.record.limitKind = admission.kind;
      await sendJson(this.res, 429, admission.body, {
        ...rateHeaders(this.window),
        'Retry-After': admission.retryAfterS,
      });
      return undefined;
    }
    return auth;
  }

  /**
   * The fault of this request (header or plan) and the latency before answering; 503/500 and
   * reset faults are answered here ('answered'), body faults are returned for the answer.
   */
  async injectFault(body: Record<string, unknown>): Promise<Fault | undefined | 'answered'> {
    const { p, req } = this;
    const faultHeader = header(req, 'x-emulator-fault');
    if (faultHeader !== undefined && !isFaultKind(faultHeader)) {
      throw new HttpError(400, `X-Emulator-Fault must be one of ${FAULT_KINDS.join(', ')}`);
    }
    const fault = p.faults.decide({
      operation: this.op.id,
      tickers: tickersOf(p.deps, body),
      headerKind: faultHeader,
      headerMs: headerInt(req, 'x-emulator-fault-ms'),
      dataRequest: this.op.dataRequest !== false,
    });
    const latency =
      fault === undefined ? (headerInt(req, 'x-emulator-fault-ms') ?? p.latencyMs) : p.latencyMs;
    if (latency > 0) await p.delay(latency, this.signal);
    if (!fault) return undefined;
    this.record.fault = true;
    if (fault.kind === '503' || fault.kind === '500') {
      await this.fail(Number(fault.kind), FAULT_MESSAGES[fault.kind]);
      return 'answered';
    }
    if (fault.kind === 'reset') {
      this.record.status = 0;
      req.socket.destroy();
      return 'answered';
    }
    return fault;
  }

  /** The operation's answer: a JSON body, or an envelope whose rows are streamed. */
  async answer(result: OperationResponse, fault: Fault | undefined): Promise<void> {
    const { p, res, signal } = this;
    const bodyFault = toBodyFault(fault, p.delay);
    const baseUrl = p.deps.publicUrl();
    const rewrite = urlRewriter(baseUrl);
    if (result.kind === 'json') {
      const status = result.status ?? 200;
      this.record.status = status;
      await sendJson(res, status, result.body, this.headersFor(status), {
        fault: bodyFault,
        signal,
        rewrite,
      });
      return;
    }
    this.record.status = 200;
    await streamEnvelope(
      res,
      200,
      result.fields,
      result.rowsField ?? 'rows',
      result.rows,
      this.headersFor(200),
      {
        fault: bodyFault,
        signal,
        rewrite,
        cache: p.rowsCache === undefined ? undefined : { cache: p.rowsCache, key: baseUrl },
      },
    );
  }

  /** A request error: its own status (400, 404…), a cut connection, or a 500 naming what failed. */
  async failed(err: unknown): Promise<void> {
    const { res } = this;
    if (err instanceof HttpError) {
      if (!res.headersSent) await this.fail(err.status, err.message, err.headers);
      return;
    }
    if (err instanceof ClientGoneError || this.signal.aborted) {
      res.destroy();
      return;
    }
    const e = toError(err);
    this.p.deps.logger.error({ err: e, operation: this.op.id }, 'emulator: operation failed');
    if (res.headersSent) {
      res.destroy();
      return;
    }
    await this.fail(500, `Internal server error: ${e.message}`);
  }

  private headersFor(status: number): Headers {
    return NO_RATE_HEADERS.has(status) ? {} : rateHeaders(this.window);
  }

  private async fail(status: number, error: string, extra: Headers = {}): Promise<void> {
    this.record.status = status;
    await sendJson(this.res, status, { error }, { ...this.headersFor(status), ...extra });
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
