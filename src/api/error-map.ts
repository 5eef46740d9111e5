/**
 * Maps one failed call to the error classes of src/errors.ts: HTTP status + body shape (section 7)
 * for error responses, undici error codes and body accounting for transport failures. Messages are
 * written for the person reading the log: operation, what happened, what to do. None of them ever
 * contains the API key (redactSecret runs over every message and excerpt).
 */
import type { ApiError } from '../errors.js';
import {
  AuthenticationError,
  BackendUnavailableError,
  BadRequestError,
  ForbiddenError,
  NotFoundError,
  QuotaExceededError,
  RateLimitedError,
  ServerError,
  TransportError,
  UnexpectedStatusError,
  type ApiErrorContext,
  type ForbiddenCode,
  type TransportCode,
} from '../errors.js';
import type { RateLimitState } from '../types.js';
import { counted } from '../counted.js';

/** Characters of a response body kept on an error. */
export const BODY_EXCERPT_CHARS = 500;

/** Removes every occurrence of `secret` from `text`. */
export function redactSecret(text: string, secret: string | undefined): string {
  if (!secret) return text;
  return text.split(secret).join('[REDACTED]');
}

/** The thing a request is about, named in 404 messages. */
export interface Subject {
  what: string;
  label: string;
  identifier: string;
}

export interface ResponseFailure {
  operation: string;
  status: number;
  /** Raw body text (possibly partial); only an excerpt is kept. */
  bodyText: string;
  rateLimit: RateLimitState;
  /** What the request named, for 404 messages: `{ what: 'company', label: 'ticker ZZZZ', identifier: 'ZZZZ' }`. */
  subject?: Subject;
  apiKey?: string;
}

function parseBody(text: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v)
      ? (v as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

function int(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

const FORBIDDEN: Record<string, { code: ForbiddenCode; advice: string }> = {
  'Account is disabled': {
    code: 'API_ACCOUNT_DISABLED',
    advice: 'the account is suspended; contact the API provider',
  },
  'API key has been revoked': {
    code: 'API_KEY_REVOKED',
    advice: 'create a new key in the developer portal and update FILINGS_API_KEY',
  },
  'API key is disabled': {
    code: 'API_KEY_DISABLED',
    advice: 're-enable the key in the developer portal or use another key',
  },
  'API key has expired': {
    code: 'API_KEY_EXPIRED',
    advice: 'create a new key in the developer portal and update FILINGS_API_KEY',
  },
};

/** An error response → the matching ApiError subclass. */
export function errorFromResponse(f: ResponseFailure): ApiError {
  const redactedText = redactSecret(f.bodyText, f.apiKey);
  const body = parseBody(f.bodyText);
  const serverMessage = redactSecret(typeof body?.error === 'string' ? body.error : '', f.apiKey);
  const shown = serverMessage !== '' ? serverMessage : excerptOf(redactedText) || '(empty body)';
  const ctx: ApiErrorContext = {
    operation: f.operation,
    status: f.status,
    bodyExcerpt: excerptOf(redactedText),
    rateLimit: f.rateLimit,
  };
  const op = f.operation;
  const say = (text: string): string => redactSecret(`${op}: ${text}`, f.apiKey);

  switch (f.status) {
    case 400:
      return new BadRequestError(say(`the API rejected the request as invalid (400): ${shown}`), ctx);
    case 401:
      if (serverMessage === 'API key required') {
        return new AuthenticationError(
          'API_KEY_REQUIRED',
          say('no API key was sent (401 API key required); set FILINGS_API_KEY'),
          ctx,
        );
      }
      return new AuthenticationError(
        'API_KEY_INVALID',
        say(`the API key was not recognised (401 ${shown}); check FILINGS_API_KEY`),
        ctx,
      );
    case 403: {
      const known = FORBIDDEN[serverMessage];
      if (known) return new ForbiddenError(known.code, say(`${serverMessage} (403); ${known.advice}`), ctx);
      if (serverMessage.startsWith('API key is not entitled for')) {
        return new ForbiddenError(
          'API_NOT_ENTITLED',
          say(`${serverMessage} (403); the key lacks this entitlement, ask the provider to enable it`),
          ctx,
        );
      }
      return new ForbiddenError('API_FORBIDDEN', say(`access forbidden (403): ${shown}`), ctx);
    }
    case 404: {
      const sub = f.subject;
      const what = sub ? `${sub.what} not found: ${sub.label}` : 'not found';
      return new NotFoundError(say(`${what} (404 ${shown})`), {
        ...ctx,
        ...(sub ? { identifier: sub.identifier } : {}),
      });
    }
    case 429:
      return tooManyRequests(f, body, shown, ctx, say);
    case 500:
      return new ServerError(say(`the API failed with a server error (500): ${shown}; retry later`), ctx);
    case 503:
      return new BackendUnavailableError(
        say(`the facts backend is temporarily unavailable (503 ${shown}); retry with backoff`),
        ctx,
      );
    default:
      return new UnexpectedStatusError(say(`unexpected HTTP status ${f.status}: ${shown}`), ctx);
  }
}

function tooManyRequests(
  f: ResponseFailure,
  body: Record<string, unknown> | undefined,
  shown: string,
  ctx: ApiErrorContext,
  say: (text: string) => string,
): ApiError {
  const quota = body?.quota;
  const scope = body?.scope;
  if ((quota === 'daily' || quota === 'monthly') && (scope === 'account' || scope === 'api_key')) {
    const limit = int(body?.limit);
    const used = int(body?.used);
    const usage = limit !== undefined ? ` (${used ?? '?'} of ${counted(limit, 'request')} used)` : '';
    const who = scope === 'account' ? 'the account (all its keys together)' : 'this API key';
    const resets = quota === 'daily' ? 'at 00:00 UTC' : 'on the first day of the next month (UTC)';
    return new QuotaExceededError(say(`${quota} quota exceeded for ${who}${usage}; it resets ${resets}`), {
      ...ctx,
      quota,
      scope,
      ...(limit !== undefined ? { limit } : {}),
      ...(used !== undefined ? { used } : {}),
      ...(f.rateLimit.retryAfterMs !== undefined ? { retryAfterMs: f.rateLimit.retryAfterMs } : {}),
    });
  }
  // Rate limit (or an unknown 429 shape, which we treat as one: waiting is the safe reading).
  const bodyRetry = int(body?.retryAfter);
  const retryAfterMs =
    f.rateLimit.retryAfterMs ?? (bodyRetry !== undefined ? bodyRetry * 1000 : undefined) ?? 60_000;
  const limit = int(body?.limit) ?? f.rateLimit.limit;
  const windowMs = int(body?.windowMs) ?? 60_000;
  const per = limit !== undefined ? ` (${counted(limit, 'request')} per minute for this key)` : '';
  return new RateLimitedError(
    say(
      `rate limit exceeded${per}; retry in ${Math.ceil(retryAfterMs / 1000)} s${body?.error === 'Rate limit exceeded' ? '' : ` (429 ${shown})`}`,
    ),
    { ...ctx, retryAfterMs, ...(limit !== undefined ? { limit } : {}), windowMs },
  );
}

function excerptOf(text: string): string {
  return text.length > BODY_EXCERPT_CHARS ? `${text.slice(0, BODY_EXCERPT_CHARS)}…` : text;
}

export interface TransportFailure {
  operation: string;
  code: TransportCode;
  /** What happened, in words (without the operation prefix). */
  detail: string;
  status?: number;
  bodyText?: string;
  rateLimit?: RateLimitState;
  cause?: unknown;
  apiKey?: string;
}

export function transportError(f: TransportFailure): TransportError {
  const ctx: ApiErrorContext = {
    operation: f.operation,
    ...(f.status !== undefined ? { status: f.status } : {}),
    ...(f.bodyText !== undefined ? { bodyExcerpt: excerptOf(redactSecret(f.bodyText, f.apiKey)) } : {}),
    rateLimit: f.rateLimit ?? {},
  };
  return new TransportError(f.code, redactSecret(`${f.operation}: ${f.detail}`, f.apiKey), ctx, {
    cause: f.cause,
  });
}

/** Where a transport failure happened: before the status line, or while reading the body. */
export type TransportPhase = 'request' | 'body';

const TIMEOUT_CODES: Record<string, string> = {
  UND_ERR_CONNECT_TIMEOUT: 'connecting to the API timed out',
  UND_ERR_HEADERS_TIMEOUT: 'the API did not send response headers in time',
  UND_ERR_BODY_TIMEOUT: 'the API stopped sending the response body (body timeout)',
  ETIMEDOUT: 'the connection timed out',
};

const RESET_CODES = new Set([
  'ECONNRESET',
  'EPIPE',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_DESTROYED',
  'UND_ERR_RES_CONTENT_LENGTH_MISMATCH',
]);

function errCode(err: unknown): string | undefined {
  let e: unknown = err;
  for (let depth = 0; depth < 4 && typeof e === 'object' && e !== null; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && (code in TIMEOUT_CODES || RESET_CODES.has(code))) return code;
    e = (e as { cause?: unknown }).cause;
  }
  const top = (err as { code?: unknown } | null)?.code;
  return typeof top === 'string' ? top : undefined;
}

/** Connection failures that say where the request went: what happened, and what to check. */
const NO_CONNECTION: Record<string, [string, string]> = {
  ECONNREFUSED: ['was refused', 'nothing listens at that address; check FILINGS_API_URL (api.url)'],
  ENOTFOUND: ['failed', 'the host name was not found; check FILINGS_API_URL (api.url)'],
  EHOSTUNREACH: ['failed', 'the host is unreachable'],
  ENETUNREACH: ['failed', 'the network is unreachable'],
};

/** What happened to a request that got no status line, naming the URL it went to. */
function noAnswer(code: string | undefined, message: string, url: string | undefined): string {
  const to = url !== undefined ? ` to ${url}` : '';
  const words = code !== undefined ? NO_CONNECTION[code] : undefined;
  if (words !== undefined) return `the connection${to} ${words[0]} (${code}): ${words[1]}`;
  return `the connection${to} was reset before a response arrived (${code ?? message})`;
}

/**
 * An exception from undici (or from reading the body) → TransportError. A connection that dies
 * while the body is being read is a truncated body (TRANSPORT_TRUNCATED): part of the response
 * arrived; before the status line it is a reset (TRANSPORT_RESET).
 */
export function classifyTransport(
  err: unknown,
  ctx: {
    operation: string;
    phase: TransportPhase;
    aborted: boolean;
    status?: number;
    bodyBytes?: number;
    declaredBytes?: number;
    rateLimit?: RateLimitState;
    apiKey?: string;
    /** What arrived of the body, for the excerpt. */
    bodyText?: string;
    /** The API's base URL, named when no connection could be made. */
    url?: string;
  },
): TransportError {
  const base = {
    operation: ctx.operation,
    cause: err,
    apiKey: ctx.apiKey,
    ...(ctx.status !== undefined ? { status: ctx.status } : {}),
    ...(ctx.rateLimit !== undefined ? { rateLimit: ctx.rateLimit } : {}),
    ...(ctx.bodyText !== undefined ? { bodyText: ctx.bodyText } : {}),
  };
  if (ctx.aborted)
    return transportError({
      ...base,
      code: 'TRANSPORT_ABORTED',
      detail: 'the call was aborted by the caller',
    });
  const code = errCode(err);
  const message = err instanceof Error ? err.message : String(err);
  if (code !== undefined && code in TIMEOUT_CODES) {
    return transportError({ ...base, code: 'TRANSPORT_TIMEOUT', detail: `${TIMEOUT_CODES[code]} (${code})` });
  }
  if (ctx.phase === 'body') {
    const got = ctx.bodyBytes ?? 0;
    const of = ctx.declaredBytes !== undefined ? ` of ${ctx.declaredBytes} declared` : '';
    return transportError({
      ...base,
      code: 'TRANSPORT_TRUNCATED',
      detail: `the response body was cut off after ${got} bytes${of} (${code ?? message})`,
    });
  }
  if ((code !== undefined && RESET_CODES.has(code)) || /socket|closed|reset/i.test(message)) {
    return transportError({ ...base, code: 'TRANSPORT_RESET', detail: noAnswer(code, message, ctx.url) });
  }
  return transportError({
    ...base,
    code: 'TRANSPORT_RESET',
    detail: `the request failed: ${code ?? ''} ${message}`.trim(),
  });
}
