/**
 * The emulator's search over real HTTP (sections 2.4, 2.5, 4.7–4.9, 4.16): BM25 over the bundled
 * filings' sections, every request rule and bound, the cross-company entitlement, date floors,
 * the registry searches, the sandbox GET, the chunk viewer, and the client's search methods.
 * Expected passages are quoted from the bundled SEC documents; the clock is a TestClock so date
 * floors and freshness are exact.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FilingsClient } from '../../src/api/index.js';
import { ForbiddenError } from '../../src/errors.js';
import { assertValidResponse } from '../helpers/contract.js';
import { TestClock } from '../helpers/clock.js';
import { postOperation, startTestEmulator, type TestEmulator } from '../helpers/emulator.js';

type Json = Record<string, unknown>;
type Chunk = Json & {
  cik: string;
  ticker: string;
  chunk_type: string;
  confidence: number;
  score: number;
  filed_at: string;
  snippet_text: string;
  item: string | null;
  manual_review: { status: string };
  is_fresh: boolean;
};

/** Quoted from Apple's 10-K (FY2024 and FY2025), Item 1A Risk Factors. */
const APPLE_RISK_PHRASE =
  'The Company’s operations and performance depend significantly on global and regional economic conditions';
/** Clock of most tests: 2026-06-01, so the 3-year floor is 2023-06-01 and filings after 2025-06-01 are fresh. */
const NOW = Date.parse('2026-06-01T12:00:00Z');
const DAY = 86_400_000;

let emu: TestEmulator;
const clock = new TestClock(NOW);

beforeAll(async () => {
  emu = await startTestEmulator({ clock });
});
afterAll(async () => {
  await emu?.close();
});
beforeEach(() => clock.set(NOW));

async function search(body: Json, key: string = emu.apiKey, op = 'search/filings') {
  const res = await postOperation<Json>(emu.url, op, body, key);
  if (res.status === 200) assertValidResponse(op, 200, res.body);
  return res;
}

const results = (body: Json): Chunk[] => body.results as Chunk[];
const isoDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

async function expect400(body: Json, field: RegExp, op = 'search/filings'): Promise<void> {
  const res = await search(body, emu.apiKey, op);
  expect(res.status, JSON.stringify(body)).toBe(400);
  expect(String(res.body.error)).toMatch(field);
}

describe('search/filings ranking over real filings', () => {
  it('finds the risk-factor chunk of Apple’s 10-K first for a phrase quoted from it', async () => {
    const res = await search({ ticker: 'AAPL', query: APPLE_RISK_PHRASE, sort: 'relevance' });
    expect(res.status).toBe(200);
    const [top] = results(res.body);
    expect(top).toMatchObject({
      cik: '0000320193',
      chunk_type: 'risk',
      item: 'Item 1A',
      part: 'Part I',
      form_type: '10-K',
    });
    expect(top?.snippet_text).toContain(APPLE_RISK_PHRASE);
    expect(top?.rank_mode).toBe('relevance');
    const scores = results(res.body).map((r) => r.score);
    expect(scores.every((s) => s < 0)).toBe(true); // FTS5-style: negative, lower is better
    expect([...scores].sort((a, b) => a - b)).toEqual(scores);
  });

  it('sorts company-scoped results newest filing first by default, best score first within a filing', async () => {
    const res = await search({ ticker: 'AAPL', query: APPLE_RISK_PHRASE });
    expect(res.body.sort).toBe('recent');
    const rows = results(res.body);
    expect(rows[0]?.snippet_text).toContain(APPLE_RISK_PHRASE);
    for (let i = 1; i < rows.length; i++) {
      const [a, b] = [rows[i - 1]!, rows[i]!];
      expect(a.filed_at >= b.filed_at).toBe(true);
      if (a.filed_at === b.filed_at) expect(a.score).toBeLessThanOrEqual(b.score);
    }
  });

  it('answers every chunk field: offsets (both pairs), viewer, review, freshness', async () => {
    const res = await search({ ticker: 'AAPL', query: 'State Aid Decision', limit: 50 });
    const rows = results(res.body);
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) {
      expect(r.html_offset_start).toBe(r.html_start_offset);
      expect(r.html_offset_end).toBe(r.html_end_offset);
      expect(r.source_accession).toBe(r.accession);
      expect(r.source_filed_at).toBe(r.filed_at);
      expect(['verified', 'rejected', 'needs_review']).toContain(r.manual_review.status);
      const age = (NOW - Date.parse(`${r.filed_at}T00:00:00Z`)) / DAY;
      expect(r.is_fresh).toBe(age >= 0 && age <= 365);
    }
    expect(rows.some((r) => r.is_fresh) && rows.some((r) => !r.is_fresh)).toBe(true);
  });

  it('opens the filing at the chunk: viewer_url marks the chunk’s bytes', async () => {
    const res = await search({ ticker: 'AAPL', query: APPLE_RISK_PHRASE, sort: 'relevance', limit: 1 });
    const top = results(res.body)[0]!;
    expect(String(top.viewer_url).startsWith(emu.url)).toBe(true);
    const page = await fetch(String(top.viewer_url));
    expect(page.status).toBe(200);
    const html = await page.text();
    const marked = /<mark id="ffx-evidence">([\s\S]*?)<\/mark>/.exec(html)?.[1] ?? '';
    expect(Buffer.byteLength(marked, 'latin1')).toBe(
      Number(top.html_offset_end) - Number(top.html_offset_start),
    );
    const visible = marked
      .replace(/<[^>]*>/g, '')
      .replace(/&#8217;/g, '’')
      .replace(/&#160;|\s+/g, ' ');
    expect(visible).toContain('Macroeconomic and Industry Risks');
    expect((await fetch(`${emu.url}/viewer/search/${'0'.repeat(64)}`)).status).toBe(404);
  });

  it('filters by chunk types and by min_confidence', async () => {
    const mda = results(
      (await search({ ticker: 'NVDA', query: 'data center revenue', types: ['mda'], limit: 50 })).body,
    );
    expect(mda.length).toBeGreaterThan(0);
    expect(mda.every((r) => r.chunk_type === 'mda')).toBe(true);
    const confident = results(
      (await search({ ticker: 'NVDA', query: 'data center revenue', min_confidence: 0.9, limit: 50 })).body,
    );
    expect(confident.length).toBeGreaterThan(0);
    expect(confident.every((r) => r.confidence >= 0.9)).toBe(true);
  });

  it('expands legal-domain phrases with legal=true and matches the expansions', async () => {
    const plain = await search({ ticker: 'TSLA', query: 'covenant', after: 'all', limit: 50 });
    expect(plain.body).toMatchObject({ legal_mode: false, expanded_terms: [] });
    const legal = await search({ ticker: 'TSLA', query: 'covenant', legal: true, after: 'all', limit: 50 });
    expect(legal.body.legal_mode).toBe(true);
    expect(legal.body.expanded_terms).toEqual(
      expect.arrayContaining(['event of default', 'financial covenant']),
    );
    expect(results(legal.body).length).toBeGreaterThan(results(plain.body).length);
    for (const r of results(legal.body)) {
      expect(r.snippet_text).toMatch(/covenant|default|waiver/i);
    }
    const gc = await search({ tickers: ['AAPL', 'NVDA'], query: 'going concern', legal: true });
    expect(gc.body.expanded_terms).toEqual(expect.arrayContaining(['substantial doubt']));
  });

  it('suggests series of the company with include_series (series_limit default 6, bound 12)', async () => {
    const res = await search({
      ticker: 'AAPL',
      query: 'iPhone net sales',
      include_series: true,
      series_limit: 3,
    });
    const series = (res.body.series_suggestions as { series: Json[] }).series;
    expect(series.length).toBeGreaterThan(0);
    expect(series.length).toBeLessThanOrEqual(3);
    expect(series.every((s) => s.cik === '0000320193' && /^[0-9a-f]{64}$/.test(String(s.series_key)))).toBe(
      true,
    );
    const byDefault = await search({ ticker: 'AAPL', query: 'iPhone net sales', include_series: true });
    expect((byDefault.body.series_suggestions as { series: Json[] }).series.length).toBeLessThanOrEqual(6);
    const without = await search({ ticker: 'AAPL', query: 'iPhone net sales' });
    expect(without.body.series_suggestions).toBeUndefined();
  });
});

describe('search/filings scope rules', () => {
  it('resolves a company by ticker or CIK alike, and a company set by tickers or ciks', async () => {
    const byTicker = await search({ ticker: 'nvda', query: 'Blackwell architecture' });
    const byCik = await search({ cik: '1045810', query: 'Blackwell architecture' });
    expect(byTicker.body).toMatchObject({
      scope: 'company',
      ticker: 'NVDA',
      cik: '0001045810',
      tickers: null,
    });
    expect(results(byCik.body).map((r) => r.chunk_id)).toEqual(results(byTicker.body).map((r) => r.chunk_id));

    const set = await search({ tickers: ['AAPL', 'TSLA'], query: 'supply chain disruptions', limit: 50 });
    expect(set.body).toMatchObject({
      scope: 'company_set',
      tickers: ['AAPL', 'TSLA'],
      ciks: ['0000320193', '0001318605'],
    });
    const ciks = new Set(results(set.body).map((r) => r.cik));
    expect(ciks).toEqual(new Set(['0000320193', '0001318605']));
    const setByCik = await search({
      ciks: ['320193', '1318605'],
      query: 'supply chain disruptions',
      limit: 50,
    });
    expect(results(setByCik.body).length).toBe(results(set.body).length);
  });

  it('answers 404 naming an unknown ticker or CIK, also inside a set', async () => {
    for (const body of [{ ticker: 'ZZZZQ' }, { tickers: ['AAPL', 'ZZZZQ'] }, { cik: '9999999999' }]) {
      const res = await search({ ...body, query: 'risk factors' });
      expect(res.status).toBe(404);
      expect(String(res.body.error)).toMatch(/ZZZZQ|9999999999/);
    }
  });

  it('cross-company: needs the entitlement (403) and two terms, sorts by relevance, enforces confidence ≥ 0.5', async () => {
    const denied = await search({ query: 'supply chain' }, emu.keys.noCrossCompany);
    expect(denied.status).toBe(403);
    expect(denied.body.error).toBe('API key is not entitled for cross-company search');
    assertValidResponse('search/filings', 403, denied.body);
    await expect400({ query: 'semiconductors' }, /at least 2 terms/);
    await expect400({ query: 'supply chain', limit: 26 }, /limit must be an integer from 1 to 25/);

    const res = await search({
      query: 'supply chain disruptions',
      sort: 'recent',
      min_confidence: 0.1,
      limit: 25,
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ scope: 'cross_company', ticker: null, cik: null, sort: 'relevance' });
    const rows = results(res.body);
    expect(rows.length).toBe(25);
    expect(new Set(rows.map((r) => r.cik)).size).toBeGreaterThan(1);
    expect(rows.every((r) => r.confidence >= 0.5 && r.rank_mode === 'relevance')).toBe(true);
    const scores = rows.map((r) => r.score);
    expect([...scores].sort((a, b) => a - b)).toEqual(scores);
  });

  it('rejects mixed or malformed scope fields with 400 naming them', async () => {
    await expect400({ ticker: 'AAPL', tickers: ['NVDA'], query: 'risk' }, /scope combination/);
    await expect400({ ticker: 'AAPL', cik: '320193', query: 'risk' }, /scope combination/);
    await expect400({ tickers: ['AAPL'], ciks: ['320193'], query: 'risk' }, /scope combination/);
    await expect400({ tickers: [], query: 'risk' }, /tickers/);
    await expect400({ ciks: ['abc'], query: 'risk' }, /ciks\[0\]/);
  });
});

describe('search/filings date floors', () => {
  it('gives a single-term company-scoped query an automatic 3-year floor and says why', async () => {
    clock.set(Date.parse('2028-03-01T08:00:00Z'));
    const res = await search({ ticker: 'AAPL', query: 'iPhone', limit: 50 });
    expect(res.body.applied_filed_at_after).toBe('2025-03-01');
    expect(String(res.body.applied_filed_at_after_reason)).toMatch(/3-year/);
    const rows = results(res.body);
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((r) => r.filed_at >= '2025-03-01')).toBe(true);
    // Apple's FY2024 10-K (filed 2024-11-01) is below the floor; after=all brings it back.
    const old = await search({ ticker: 'AAPL', query: 'iPhone', before: '2024-12-31' });
    expect(results(old.body)).toEqual([]);
    const all = await search({ ticker: 'AAPL', query: 'iPhone', before: '2024-12-31', after: 'all' });
    expect(all.body.applied_filed_at_after).toBeNull();
    expect(String(all.body.applied_filed_at_after_reason)).toMatch(/after=all/);
    expect(results(all.body).length).toBeGreaterThan(0);
    expect(results(all.body).every((r) => r.filed_at <= '2024-12-31')).toBe(true);
    expect(all.body.applied_filed_at_before).toBe('2024-12-31');
  });

  it('applies no automatic floor to multi-term or cross-company queries', async () => {
    clock.set(Date.parse('2028-03-01T08:00:00Z'));
    const two = await search({ ticker: 'AAPL', query: 'iPhone sales', limit: 50 });
    expect(two.body.applied_filed_at_after).toBeNull();
    expect(results(two.body).some((r) => r.filed_at < '2025-03-01')).toBe(true);
  });

  it('takes after as a relative window (named in the reason) or a date', async () => {
    const rel = await search({ ticker: 'AAPL', query: 'iPhone', after: '1y', limit: 50 });
    expect(rel.body.applied_filed_at_after).toBe(isoDay(NOW - 365 * DAY));
    expect(String(rel.body.applied_filed_at_after_reason)).toMatch(/1y/);
    expect(results(rel.body).every((r) => r.filed_at >= '2025-06-01')).toBe(true);
    const fifty = await search({ ticker: 'AAPL', query: 'iPhone', after: '50y' });
    expect(fifty.body.applied_filed_at_after).toBe('1976-06-01');
    const date = await search({ ticker: 'AAPL', query: 'iPhone', after: '2025-09-01', limit: 50 });
    expect(date.body.applied_filed_at_after).toBe('2025-09-01');
    expect(results(date.body).every((r) => r.filed_at >= '2025-09-01')).toBe(true);
  });
});

describe('search/filings bounds', () => {
  it('answers 400 naming the field for every bound', async () => {
    const base = { ticker: 'AAPL', query: 'iPhone sales' };
    await expect400({ ticker: 'AAPL' }, /query is required/);
    await expect400({ ...base, query: '   ' }, /query/);
    await expect400({ ...base, query: 'the of and' }, /searchable term/);
    await expect400({ ...base, query: 'x'.repeat(501) }, /query must be at most 500/);
    await expect400({ ...base, limit: 0 }, /limit must be an integer from 1 to 50/);
    await expect400({ ...base, limit: 51 }, /limit must be an integer from 1 to 50/);
    await expect400({ ...base, limit: 2.5 }, /limit/);
    await expect400({ ...base, series_limit: 0 }, /series_limit must be an integer from 1 to 12/);
    await expect400({ ...base, series_limit: 13 }, /series_limit/);
    await expect400({ ...base, min_confidence: 1.01 }, /min_confidence/);
    await expect400({ ...base, min_confidence: 'high' }, /min_confidence/);
    await expect400({ ...base, types: ['risk', 'bogus'] }, /types\[1\]/);
    await expect400({ ...base, types: [] }, /types/);
    for (const after of ['0y', '51y', '2025-02-30', 'last year'])
      await expect400({ ...base, after }, /after must be/);
    await expect400({ ...base, before: '2025/01/01' }, /before must be/);
    await expect400(
      { ...base, after: '2025-06-01', before: '2025-01-01' },
      /after .* must not be later than before/,
    );
    await expect400({ ...base, sort: 'newest' }, /sort must be/);
    await expect400({ ...base, legal: 'yes' }, /legal must be a boolean/);
    await expect400({ ...base, include_series: 1 }, /include_series must be a boolean/);
  });

  it('accepts the extremes of every bound', async () => {
    for (const extra of [
      { limit: 1 },
      { limit: 50 },
      { series_limit: 12, include_series: true },
      { min_confidence: 1 },
    ]) {
      expect((await search({ ticker: 'AAPL', query: 'iPhone sales', ...extra })).status).toBe(200);
    }
  });
});

describe('search/entities and search/series', () => {
  it('ranks metrics, members and series of the registry (rank lower is better) with types, limit, offset', async () => {
    const res = await search({ ticker: 'AAPL', query: 'revenue', limit: 10 }, emu.apiKey, 'search/entities');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      scope: 'company',
      ticker: 'AAPL',
      cik: '0000320193',
      limit: 10,
      offset: 0,
      count: 10,
    });
    const rows = res.body.results as Json[];
    const ranks = rows.map((r) => Number(r.rank));
    expect([...ranks].sort((a, b) => a - b)).toEqual(ranks);
    expect(rows.every((r) => /revenue/i.test(String(r.title)))).toBe(true);

    const page = await search(
      { ticker: 'AAPL', query: 'revenue', limit: 3, offset: 2 },
      emu.apiKey,
      'search/entities',
    );
    expect((page.body.results as Json[]).map((r) => r.entity_id)).toEqual(
      rows.slice(2, 5).map((r) => r.entity_id),
    );

    const members = await search(
      { ticker: 'AAPL', query: 'iPhone', types: ['member'] },
      emu.apiKey,
      'search/entities',
    );
    const m = members.body.results as Json[];
    expect(m.length).toBeGreaterThan(0);
    expect(m.every((r) => r.entity_type === 'member' && r.series_key === null)).toBe(true);
    const series = await search(
      { ticker: 'AAPL', query: 'iPhone', types: ['series'] },
      emu.apiKey,
      'search/entities',
    );
    for (const r of series.body.results as Json[]) expect(r.series_key).toMatch(/^[0-9a-f]{64}$/);
  });

  it('needs the cross-company entitlement for registry search without a company (403)', async () => {
    for (const op of ['search/entities', 'search/series']) {
      const res = await search({ query: 'revenue' }, emu.keys.noCrossCompany, op);
      expect(res.status).toBe(403);
      expect(res.body.error).toBe('API key is not entitled for cross-company search');
    }
    const set = await search(
      { tickers: ['AAPL', 'NVDA'], query: 'revenue', limit: 50 },
      emu.apiKey,
      'search/entities',
    );
    expect(set.body).toMatchObject({ scope: 'company_set', ciks: ['0000320193', '0001045810'] });
    const ciks = new Set((set.body.results as Json[]).map((r) => r.cik));
    expect(ciks).toEqual(new Set(['0000320193', '0001045810']));
  });

  it('bounds entity search: query ≥ 2 characters, limit 1–50, offset 0–200, known types', async () => {
    const op = 'search/entities';
    await expect400({ ticker: 'AAPL', query: 'r' }, /at least 2 characters/, op);
    await expect400(
      { ticker: 'AAPL', query: 'revenue', limit: 51 },
      /limit must be an integer from 1 to 50/,
      op,
    );
    await expect400({ ticker: 'AAPL', query: 'revenue', limit: 0 }, /limit/, op);
    await expect400(
      { ticker: 'AAPL', query: 'revenue', offset: 201 },
      /offset must be an integer from 0 to 200/,
      op,
    );
    await expect400({ ticker: 'AAPL', query: 'revenue', types: ['fact'] }, /types\[0\]/, op);
    const limits = await search({ ticker: 'AAPL', query: 'revenue' }, emu.apiKey, op);
    expect(limits.body).toMatchObject({ limit: 20, offset: 0 });
    expect((await search({ ticker: 'ZZZZQ', query: 'revenue' }, emu.apiKey, op)).status).toBe(404);
  });

  it('search/series enriches hits and hydrates top_series (2.8) with fetch_top ≤ 5', async () => {
    const op = 'search/series';
    const res = await search(
      { ticker: 'AAPL', query: 'iPhone net sales', limit: 4, fetch_top: 2 },
      emu.apiKey,
      op,
    );
    expect(res.status).toBe(200);
    const rows = res.body.results as Json[];
    expect(rows.length).toBe(4);
    expect(rows.every((r) => r.company_name === 'Apple Inc.' && r.ticker === 'AAPL')).toBe(true);
    const top = res.body.top_series as Json[];
    expect(top.map((t) => t.series_id)).toEqual(rows.slice(0, 2).map((r) => r.series_id));
    const batch = await search({ ids: top.map((t) => t.series_id) }, emu.apiKey, 'series/batch');
    expect(batch.body.series).toEqual(top);
    expect(String((top[0]!.serving as Json).blob_url)).toMatch(/\/s\/series\//);
    await expect400(
      { ticker: 'AAPL', query: 'iPhone', fetch_top: 6 },
      /fetch_top must be an integer from 0 to 5/,
      op,
    );
    await expect400(
      { ticker: 'AAPL', query: 'iPhone', limit: 51 },
      /limit must be an integer from 1 to 50/,
      op,
    );
    const none = await search({ ticker: 'AAPL', query: 'iPhone' }, emu.apiKey, op);
    expect(none.body.top_series).toBeUndefined();
    expect(none.body.limit).toBe(10);
  });
});

describe('sandbox search (GET, no key)', () => {
  it('searches one company without a key, 5 results by default, at most 10', async () => {
    const res = await fetch(
      `${emu.url}/api/sandbox/search?query=${encodeURIComponent('supply chain')}&ticker=AAPL`,
    );
    expect(res.status).toBe(200);
    const body = (await res.json()) as Json;
    expect(body).toMatchObject({ scope: 'company', ticker: 'AAPL' });
    expect(results(body).length).toBe(5);
    const ten = await fetch(`${emu.url}/api/sandbox/search?query=iPhone&ticker=AAPL&limit=10&types=risk,mda`);
    const tenBody = (await ten.json()) as Json;
    expect(results(tenBody).every((r) => r.chunk_type === 'risk' || r.chunk_type === 'mda')).toBe(true);
    for (const [qs, msg] of [
      ['query=iPhone&ticker=AAPL&limit=11', /limit/],
      ['query=supply+chain', /ticker or cik is required/],
      ['query=iPhone&ticker=AAPL&fetch=1', /fetch is not a sandbox search parameter/],
    ] as const) {
      const bad = await fetch(`${emu.url}/api/sandbox/search?${qs}`);
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as Json).error).toMatch(msg);
    }
  });
});

describe('FilingsClient search methods against the emulator', () => {
  it('searchFilings, searchEntities, searchSeries and sandboxSearch return the envelopes', async () => {
    const client = new FilingsClient({ baseUrl: emu.url, apiKey: emu.apiKey });
    try {
      const filings = await client.searchFilings({
        ticker: 'AAPL',
        query: APPLE_RISK_PHRASE,
        sort: 'relevance',
        limit: 3,
      });
      expect(filings.status).toBe(200);
      expect(filings.data.results[0]?.chunk_type).toBe('risk');
      expect(filings.rateLimit.limit).toBeGreaterThan(0);
      const entities = await client.searchEntities({ ticker: 'AAPL', query: 'revenue', limit: 2 });
      expect(entities.data.results).toHaveLength(2);
      const series = await client.searchSeries({ ticker: 'AAPL', query: 'iPhone', fetch_top: 1 });
      expect(series.data.top_series).toHaveLength(1);
      const sandbox = await client.sandboxSearch({ ticker: 'AAPL', query: 'iPhone', limit: 2 });
      expect(sandbox.data.results).toHaveLength(2);
    } finally {
      await client.close();
    }
    const unentitled = new FilingsClient({ baseUrl: emu.url, apiKey: emu.keys.noCrossCompany });
    try {
      const err = await unentitled.searchFilings({ query: 'supply chain' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ForbiddenError);
      expect((err as ForbiddenError).code).toBe('API_NOT_ENTITLED');
    } finally {
      await unentitled.close();
    }
  });
});
