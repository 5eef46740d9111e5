/**
 * `GET /api/sandbox/facts?ticker=…&cik=…&metric_id=…&limit=…` (4.16, our shape): verified
 * consolidated facts (as facts/core) of one company without a key, newest period first, capped at
 * `limit` (default 10, 1 to 20) with truncated/total_available as on facts/latest. Sandbox
 * requests are not rate-limited or counted by the emulator.
 */
import { HttpError } from '../http-error.js';
import { sendJson, streamEnvelope, urlRewriter } from '../respond.js';
import { optionalInteger, resolveCompany } from '../request-fields.js';
import { companyEnvelopeFields, parseCompanyParams } from './company-envelope.js';
import type { RawRoute } from './route-context.js';

export const SANDBOX_LIMIT_DEFAULT = 10;
export const SANDBOX_LIMIT_MAX = 20;

export const sandboxFacts: RawRoute = {
  method: 'GET',
  pattern: /^\/api\/sandbox\/facts$/,
  async handle({ res, url, deps, signal }) {
    const q = url.searchParams;
    const body: Record<string, unknown> = {};
    for (const f of ['ticker', 'cik', 'metric_id', 'tickers', 'ciks']) {
      const v = q.get(f);
      if (v !== null) body[f] = v;
    }
    const limitText = q.get('limit');
    if (limitText !== null) body.limit = /^-?\d+$/.test(limitText) ? Number(limitText) : limitText;
    try {
      const p = parseCompanyParams(body);
      const limit = optionalInteger(body, 'limit', 1, SANDBOX_LIMIT_MAX) ?? SANDBOX_LIMIT_DEFAULT;
      const company = resolveCompany(deps.store, p.scope);
      const rows = await deps.store.factsCore(company.cik, p.metricId);
      const kept = rows.slice(0, limit);
      const extra = rows.length > limit ? { truncated: true, total_available: rows.length } : {};
      await streamEnvelope(
        res,
        200,
        companyEnvelopeFields(p, company, kept.length, extra),
        'rows',
        kept,
        {},
        { signal, rewrite: urlRewriter(deps.publicUrl()) },
      );
    } catch (err: unknown) {
      if (!(err instanceof HttpError)) throw err;
      await sendJson(res, err.status, { error: err.message });
    }
  },
};
