/**
 * FilingsClient: one typed method per operation of the Filing Facts API (section 4), plus
 * `stream()` for the large responses. Every call validates its request first (validate.ts: a bad
 * request never reaches the network, so it never spends budget), sends exactly one request (no
 * retries: retry policy belongs to the pipeline and its budget), and returns the data with the
 * rate-limit state of the response, or throws an error class of src/errors.ts carrying that state.
 */
import { ConfigError, UnexpectedStatusError } from '../errors.js';
import { systemClock, type Clock } from '../types.js';
import { errorFromResponse, redactSecret, type Subject } from './error-map.js';
import { transportError } from './error-map.js';
import { ExtractError, parseJsonLossless } from './row-extractor.js';
import { BodyRowStream, type RowStream } from './row-stream.js';
import { discardBody, readBytes, readErrorText, Transport, type RawResponse } from './transport.js';
import type {
  B2bOperation,
  B2bOperations,
  OperationId,
  SandboxFactsEnvelope,
  SandboxFactsQuery,
  SandboxSearchEnvelope,
  SandboxSearchQuery,
  SeriesBlob,
} from '../contract/contract-types.js';
import { isStreamOperation, type ApiResult, type StreamOperation } from './client-operations.js';
import { validateRequest, validateSandboxQuery } from './validate.js';

export interface FilingsClientOptions {
  /** Base URL of the API, e.g. `http://127.0.0.1:8787` (a path prefix is kept). */
  baseUrl: string;
  /** Plaintext API key, sent as X-API-Key on `/api/b2b/*` calls only. Empty: no header is sent. */
  apiKey: string;
  /** Keep-alive connections in the pool. @defaultValue 8 */
  connections?: number;
  /** TCP connect timeout. @defaultValue 10000 */
  connectTimeoutMs?: number;
  /** Time from sending the request to the complete response headers. @defaultValue 30000 */
  headersTimeoutMs?: number;
  /** Longest silence between two body chunks. @defaultValue 60000 */
  bodyTimeoutMs?: number;
  /** User-Agent header. @defaultValue `filings-export/0.1 (undici)` */
  userAgent?: string;
  /** Time source for Retry-After HTTP-dates. @defaultValue systemClock */
  clock?: Clock;
}

export interface CallOptions {
  /** Aborts the call (TRANSPORT_ABORTED), also while a stream is being read. */
  signal?: AbortSignal;
  /** Extra request headers, e.g. `X-Emulator-Fault` in tests. */
  headers?: Record<string, string>;
  /** Per-call override of the client's headersTimeoutMs. */
  headersTimeoutMs?: number;
  /** Per-call override of the client's bodyTimeoutMs. */
  bodyTimeoutMs?: number;
  /**
   * stream() only: keep each row's received JSON text for RowStream.rawText (one copy of the row
   * bytes). @defaultValue false
   */
  rawText?: boolean;
}

const B2B_PREFIX = '/api/b2b/';

function positiveInt(name: string, v: number | undefined, fallback: number): number {
  if (v === undefined) return fallback;
  if (!Number.isSafeInteger(v) || v <= 0)
    throw new ConfigError(`FilingsClient: ${name} must be a positive integer, got ${v}`);
  return v;
}

/** The company (or other thing) a request names, for 404 messages. */
function subjectOf(body: unknown): Subject | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const b = body as Record<string, unknown>;
  if (typeof b.ticker === 'string')
    return { what: 'company', label: `ticker ${b.ticker}`, identifier: b.ticker };
  if (typeof b.cik === 'string') return { what: 'company', label: `cik ${b.cik}`, identifier: b.cik };
  return undefined;
}

export class FilingsClient {
  readonly #apiKey: string;
  readonly #transport: Transport;
  readonly #clock: Clock;
  #closed = false;

  constructor(opts: FilingsClientOptions) {
    if (typeof opts.baseUrl !== 'string' || !/^https?:\/\//.test(opts.baseUrl)) {
      throw new ConfigError(
        `FilingsClient: baseUrl must be an http(s) URL, got ${JSON.stringify(opts.baseUrl)}`,
      );
    }
    if (typeof opts.apiKey !== 'string') throw new ConfigError('FilingsClient: apiKey must be a string');
    if (/[\r\n]/.test(opts.apiKey))
      throw new ConfigError('FilingsClient: apiKey must not contain line breaks');
    this.#apiKey = opts.apiKey.trim();
    this.#clock = opts.clock ?? systemClock;
    this.#transport = new Transport({
      baseUrl: opts.baseUrl,
      connections: positiveInt('connections', opts.connections, 8),
      connectTimeoutMs: positiveInt('connectTimeoutMs', opts.connectTimeoutMs, 10_000),
      headersTimeoutMs: positiveInt('headersTimeoutMs', opts.headersTimeoutMs, 30_000),
      bodyTimeoutMs: positiveInt('bodyTimeoutMs', opts.bodyTimeoutMs, 60_000),
      userAgent: opts.userAgent ?? 'filings-export/0.1 (undici)',
      clock: this.#clock,
    });
  }

  // ------------------------------------------------------------------ keyed operations (section 4)
  factsLatest(body: B2bOperations['facts/latest']['request'], opts?: CallOptions) {
    return this.call('facts/latest', body, opts);
  }
  factsLatestBySeries(body: B2bOperations['facts/latest/by-series']['request'], opts?: CallOptions) {
    return this.call('facts/latest/by-series', body, opts);
  }
  factsCore(body: B2bOperations['facts/core']['request'], opts?: CallOptions) {
    return this.call('facts/core', body, opts);
  }
  factsFull(body: B2bOperations['facts/full']['request'], opts?: CallOptions) {
    return this.call('facts/full', body, opts);
  }
  factsCoreBySeries(body: B2bOperations['facts/core/by-series']['request'], opts?: CallOptions) {
    return this.call('facts/core/by-series', body, opts);
  }
  factsFullBySeries(body: B2bOperations['facts/full/by-series']['request'], opts?: CallOptions) {
    return this.call('facts/full/by-series', body, opts);
  }
  searchEntities(body: B2bOperations['search/entities']['request'], opts?: CallOptions) {
    return this.call('search/entities', body, opts);
  }
  searchSeries(body: B2bOperations['search/series']['request'], opts?: CallOptions) {
    return this.call('search/series', body, opts);
  }
  searchFilings(body: B2bOperations['search/filings']['request'], opts?: CallOptions) {
    return this.call('search/filings', body, opts);
  }
  seriesCatalog(body: B2bOperations['series/catalog']['request'], opts?: CallOptions) {
    return this.call('series/catalog', body, opts);
  }
  dimsCatalog(body: B2bOperations['dims/catalog']['request'], opts?: CallOptions) {
    return this.call('dims/catalog', body, opts);
  }
  seriesBatch(body: B2bOperations['series/batch']['request'], opts?: CallOptions) {
    return this.call('series/batch', body, opts);
  }
  evidenceEnriched(body: B2bOperations['evidence/enriched']['request'], opts?: CallOptions) {
    return this.call('evidence/enriched', body, opts);
  }
  issuerReference(body: B2bOperations['issuer/reference']['request'], opts?: CallOptions) {
    return this.call('issuer/reference', body, opts);
  }
  telemetryProofOpen(body: B2bOperations['telemetry/proof-open']['request'], opts?: CallOptions) {
    return this.call('telemetry/proof-open', body, opts);
  }

  /**
   * Any keyed operation by id: validates, sends one POST, parses the whole body (numbers a double
   * cannot hold exactly stay strings). Use `stream()` for large responses.
   */
  async call<Op extends B2bOperation>(
    operation: Op,
    body: B2bOperations[Op]['request'],
    opts: CallOptions = {},
  ): Promise<ApiResult<B2bOperations[Op]['response']>> {
    validateRequest(operation, body);
    const res = await this.post(operation, body, opts);
    await this.throwIfError(res, subjectOf(body));
    return {
      data: (await this.parseBody(res)) as B2bOperations[Op]['response'],
      status: res.status,
      rateLimit: res.rateLimit,
    };
  }

  /**
   * Streams the rows of a large response (facts/full, facts/core, facts/latest, evidence/enriched,
   * series/catalog, dims/catalog). Resolves once the status line and headers arrived; error
   * statuses reject here with their error class. Rows are parsed from the byte stream as they come.
   */
  async stream<Op extends StreamOperation>(
    operation: Op,
    body: B2bOperations[Op]['request'],
    opts: CallOptions = {},
  ): Promise<RowStream> {
    if (!isStreamOperation(operation)) {
      throw new ConfigError(`FilingsClient.stream: ${String(operation)} has no rows to stream; use call()`);
    }
    validateRequest(operation, body);
    const res = await this.post(operation, body, opts);
    await this.throwIfError(res, subjectOf(body));
    return new BodyRowStream(res, { rawText: opts.rawText === true });
  }

  // ------------------------------------------------------------------ keyless GET operations
  /** `GET /api/sandbox/search` (no key). */
  async sandboxSearch(
    query: SandboxSearchQuery,
    opts: CallOptions = {},
  ): Promise<ApiResult<SandboxSearchEnvelope>> {
    validateSandboxQuery('sandbox/search', query);
    return this.getJson('sandbox/search', `/api/sandbox/search?${toQuery(query)}`, opts, subjectOf(query));
  }

  /** `GET /api/sandbox/facts` (no key). */
  async sandboxFacts(
    query: SandboxFactsQuery,
    opts: CallOptions = {},
  ): Promise<ApiResult<SandboxFactsEnvelope>> {
    validateSandboxQuery('sandbox/facts', query);
    return this.getJson('sandbox/facts', `/api/sandbox/facts?${toQuery(query)}`, opts, subjectOf(query));
  }

  /** `GET /s/series/<series_id>/<version>`: the immutable blob behind `serving.blob_url`. */
  async seriesBlob(
    seriesId: string,
    version: number,
    opts: CallOptions = {},
  ): Promise<ApiResult<SeriesBlob>> {
    if (seriesId === '') throw new ConfigError('FilingsClient.seriesBlob: seriesId must not be empty');
    if (!Number.isSafeInteger(version) || version < 0) {
      throw new ConfigError(
        `FilingsClient.seriesBlob: version must be a non-negative integer, got ${version}`,
      );
    }
    const label = `${seriesId} version ${version}`;
    return this.getJson('series/blob', `/s/series/${encodeURIComponent(seriesId)}/${version}`, opts, {
      what: 'series blob',
      label,
      identifier: seriesId,
    });
  }

  /**
   * `GET /api/evidence/<evidence_id>/open`: does not follow the redirect; returns where it points
   * (the viewer URL with the figure highlighted).
   */
  async evidenceOpen(evidenceId: string, opts: CallOptions = {}): Promise<ApiResult<{ location: string }>> {
    if (evidenceId === '') throw new ConfigError('FilingsClient.evidenceOpen: evidenceId must not be empty');
    const res = await this.send(
      'evidence/open',
      'GET',
      `/api/evidence/${encodeURIComponent(evidenceId)}/open`,
      undefined,
      opts,
      false,
    );
    await this.throwIfError(res, { what: 'evidence', label: evidenceId, identifier: evidenceId });
    discardBody(res.body);
    const loc = res.headers.location;
    const location = Array.isArray(loc) ? loc[0] : loc;
    if (res.status < 300 || res.status >= 400 || location === undefined) {
      throw new UnexpectedStatusError(
        `evidence/open: expected a redirect with a Location header, got HTTP ${res.status}`,
        {
          operation: 'evidence/open',
          status: res.status,
          rateLimit: res.rateLimit,
        },
      );
    }
    return { data: { location }, status: res.status, rateLimit: res.rateLimit };
  }

  /**
   * Requests queued, under way, or answered with a body not yet read to the end or released: what
   * close() would wait for. 0 when idle; a body left unreleased keeps it above 0 for ever.
   */
  requestsInFlight(): number {
    return this.#transport.inFlight;
  }

  /** Closes the connection pool; in-flight calls finish first. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#transport.close();
  }

  // ------------------------------------------------------------------ internals
  private post(operation: B2bOperation, body: unknown, opts: CallOptions): Promise<RawResponse> {
    return this.send(operation, 'POST', B2B_PREFIX + operation, JSON.stringify(body), opts, true);
  }

  private async getJson<T>(
    operation: OperationId,
    path: string,
    opts: CallOptions,
    subject?: Subject,
  ): Promise<ApiResult<T>> {
    const res = await this.send(operation, 'GET', path, undefined, opts, false);
    await this.throwIfError(res, subject);
    return { data: (await this.parseBody(res)) as T, status: res.status, rateLimit: res.rateLimit };
  }

  private send(
    operation: OperationId,
    method: 'GET' | 'POST',
    path: string,
    body: string | undefined,
    opts: CallOptions,
    withKey: boolean,
  ): Promise<RawResponse> {
    if (this.#closed) throw new ConfigError(`FilingsClient: ${operation} called after close()`);
    const headers: Record<string, string> = {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (withKey && this.#apiKey !== '') headers['x-api-key'] = this.#apiKey;
    Object.assign(headers, opts.headers);
    return this.#transport.send({
      operation,
      method,
      path,
      headers,
      ...(body !== undefined ? { body } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
      ...(opts.headersTimeoutMs !== undefined ? { headersTimeoutMs: opts.headersTimeoutMs } : {}),
      ...(opts.bodyTimeoutMs !== undefined ? { bodyTimeoutMs: opts.bodyTimeoutMs } : {}),
      ...(this.#apiKey !== '' ? { secret: this.#apiKey } : {}),
    });
  }

  /** Throws the error class of a non-2xx/3xx response (reading its body, bounded). */
  private async throwIfError(res: RawResponse, subject: Subject | undefined): Promise<void> {
    if (res.status < 400) return;
    const bodyText = await readErrorText(res);
    throw errorFromResponse({
      operation: res.operation,
      status: res.status,
      bodyText,
      rateLimit: res.rateLimit,
      ...(subject ? { subject } : {}),
      ...(this.#apiKey !== '' ? { apiKey: this.#apiKey } : {}),
    });
  }

  private async parseBody(res: RawResponse): Promise<unknown> {
    const bytes = await readBytes(res);
    try {
      return parseJsonLossless(bytes);
    } catch (err) {
      const text = bytes.toString('utf8');
      const incomplete = err instanceof ExtractError && err.kind === 'truncated';
      throw transportError({
        operation: res.operation,
        code: incomplete ? 'TRANSPORT_TRUNCATED' : 'TRANSPORT_MALFORMED',
        detail: incomplete
          ? `the response body ended in the middle of the JSON (${text.length} characters)`
          : `the response body is not valid JSON: ${redactSecret((err as Error).message, this.#apiKey)}`,
        status: res.status,
        bodyText: text.slice(0, 1000),
        rateLimit: res.rateLimit,
        cause: err,
        ...(this.#apiKey !== '' ? { apiKey: this.#apiKey } : {}),
      });
    }
  }
}

function toQuery(query: object): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v !== undefined && v !== null) params.set(k, String(v));
  }
  return params.toString();
}
