/**
 * `GET /api/sandbox/search?query=…&ticker=…|cik=…&limit=…` (4.16, our shape): search/filings for one
 * company without a key. Company-scoped only (ticker or cik required: no cross-company search
 * without an entitled key), `limit` default 5, 1 to 10; optional `types` (comma-separated chunk
 * types), `after`, `before`, `sort`, `legal` (true/false) follow search/filings, including the
 * automatic 3-year floor of single-term queries. Same envelope as search/filings. Like the sandbox
 * facts GET it is not rate-limited or counted.
 */
import { HttpError, badRequest } from '../../server/http-error.js';
import { sendJson, urlRewriter } from '../../server/respond.js';
import type { RawRoute } from '../../server/routes/route-context.js';
import { parseFilingSearch, runFilingSearch } from '../query/index.js';
import { searchService } from './deps.js';

export const SANDBOX_SEARCH_LIMIT_DEFAULT = 5;
export const SANDBOX_SEARCH_LIMIT_MAX = 10;

const ALLOWED = new Set(['query', 'ticker', 'cik', 'limit', 'types', 'after', 'before', 'sort', 'legal']);

/** The query string as a search/filings body; 400 on sandbox-only rules. */
export function sandboxSearchBody(q: URLSearchParams): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const key of q.keys()) {
    if (!ALLOWED.has(key)) {
      throw badRequest(`${key} is not a sandbox search parameter (allowed: ${[...ALLOWED].join(', ')})`);
    }
  }
  for (const f of ['query', 'ticker', 'cik', 'after', 'before', 'sort'] as const) {
    const v = q.get(f);
    if (v !== null) body[f] = v;
  }
  if (body.ticker === undefined && body.cik === undefined) {
    throw badRequest('ticker or cik is required: the sandbox searches one company');
  }
  const limit = q.get('limit');
  if (limit !== null) {
    const n = /^\d+$/.test(limit) ? Number(limit) : NaN;
    if (!(n >= 1 && n <= SANDBOX_SEARCH_LIMIT_MAX)) {
      throw badRequest(`limit must be an integer from 1 to ${SANDBOX_SEARCH_LIMIT_MAX} in the sandbox`);
    }
    body.limit = n;
  } else body.limit = SANDBOX_SEARCH_LIMIT_DEFAULT;
  const types = q.get('types');
  if (types !== null) body.types = types.split(',').map((t) => t.trim());
  const legal = q.get('legal');
  if (legal !== null) {
    if (legal !== 'true' && legal !== 'false') throw badRequest('legal must be true or false');
    body.legal = legal === 'true';
  }
  return body;
}

export const sandboxSearch: RawRoute = {
  method: 'GET',
  pattern: /^\/api\/sandbox\/search$/,
  async handle({ res, url, deps }) {
    try {
      const params = parseFilingSearch(sandboxSearchBody(url.searchParams), null);
      const body = await runFilingSearch(searchService(deps), params, deps.clock.now());
      await sendJson(res, 200, body, {}, { rewrite: urlRewriter(deps.publicUrl()) });
    } catch (err: unknown) {
      if (!(err instanceof HttpError)) throw err;
      await sendJson(res, err.status, { error: err.message });
    }
  },
};
