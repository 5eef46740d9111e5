/**
 * Every non-search operation of the emulator over real HTTP against the real bundled data:
 * envelopes (2.3, 2.6–2.8), the rules of section 4 (caps, dei# exclusion, by-series, request
 * order), the bounds of section 8, 400/404/405/413 bodies, URL fields, blobs, evidence links and
 * the viewer, and the sandbox facts. Expected rows come from the same store loaded in process
 * (the HTTP layer must pass them through unchanged apart from URL prefixes) and from the SEC files.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUNDLED_DATA_DIR } from '../../src/emulator/index.js';
import type { EmulatorStore, FactRow, Row } from '../../src/emulator/store.js';
import { validateResponse } from '../helpers/contract.js';
import {
  bundledTestStore,
  headerRecord,
  postOperation,
  startTestEmulator,
  type TestEmulator,
} from '../helpers/emulator.js';

let emu: TestEmulator;
let store: EmulatorStore;
const AAPL_CIK = '0000320193';

beforeAll(async () => {
  store = await bundledTestStore();
  emu = await startTestEmulator({ store });
});
afterAll(() => emu.close());

/** What the HTTP layer should make of a store row: absolute-path URL fields get the base URL. */
function withBase<T>(value: T): T {
  return JSON.parse(JSON.stringify(value).replace(/"([A-Za-z0-9_]*_url)":"\//g, `"$1":"${emu.url}/`)) as T;
}

async function call(operation: string, body: unknown) {
  const res = await postOperation<Record<string, unknown> & { rows: Row[] }>(
    emu.url,
    operation,
    body,
    emu.apiKey,
  );
  return res;
}

function expectContract(operation: string, res: { status: number; body: unknown; headers: Headers }): void {
  expect(validateResponse(operation, res.status, res.body, headerRecord(res.headers))).toEqual([]);
}

function readGz(path: string): string {
  return gunzipSync(readFileSync(join(BUNDLED_DATA_DIR, path))).toString('utf8');
}

describe('facts', () => {
  it('facts/full passes every store row through, with the facts envelope', async () => {
    const res = await call('facts/full', { ticker: 'aapl' });
    expect(res.status).toBe(200);
    const expected = await store.factsFull(AAPL_CIK);
    expect(res.body).toMatchObject({
      scope: 'company',
      ticker: 'AAPL',
      cik: AAPL_CIK,
      metric_id: null,
      count: expected.length,
    });
    expect(res.body.rows).toEqual(withBase(expected));
    expect(res.body).not.toHaveProperty('truncated');
    expectContract('facts/full', res);
  });

  it("Apple's FY2024 revenue is the SEC's 391035000000 from accession 0000320193-24-000123", async () => {
    const metric = 'us-gaap#RevenueFromContractWithCustomerExcludingAssessedTax';
    const facts = JSON.parse(readGz('companyfacts/CIK0000320193.json.gz')) as {
      facts: Record<
        string,
        Record<
          string,
          {
            units: Record<string, { accn: string; start?: string; end: string; val: number; form: string }[]>;
          }
        >
      >;
    };
    const sec = facts.facts['us-gaap']?.RevenueFromContractWithCustomerExcludingAssessedTax?.units.USD?.find(
      (f) => f.accn === '0000320193-24-000123' && f.start === '2023-10-01' && f.end === '2024-09-28',
    );
    expect(sec?.val).toBe(391035000000);
    const res = await call('facts/core', { cik: '320193', metric_id: metric });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ cik: AAPL_CIK, ticker: 'AAPL', metric_id: metric });
    const row = res.body.rows.find((r) => r.period_key === 'duration:2023-10-01..2024-09-28');
    expect(row).toMatchObject({ metric_id: metric, value_num: String(sec?.val), currency: 'USD' });
    expect(res.body.rows.every((r) => r.metric_id === metric)).toBe(true);
    expectContract('facts/core', res);
  });

  it('facts/core equals the store, newest period first', async () => {
    const res = await call('facts/core', { ticker: 'NVDA' });
    const expected = await store.factsCore('0001045810');
    expect(res.body.count).toBe(expected.length);
    expect(res.body.rows).toEqual(withBase(expected));
    const ends = res.body.rows.map((r) => String(r.period_end));
    expect([...ends].sort().reverse()).toEqual(ends);
  });

  it('facts/latest excludes dei#, caps at 100 by default and reports truncated + total_available', async () => {
    const all = await store.factsLatest(AAPL_CIK);
    const nonDei = all.filter((r) => !r.metric_id.startsWith('dei#'));
    expect(all.length).toBeGreaterThan(nonDei.length);
    expect(nonDei.length).toBeGreaterThan(100);
    const res = await call('facts/latest', { ticker: 'AAPL' });
    expect(res.body).toMatchObject({ count: 100, truncated: true, total_available: nonDei.length });
    expect(res.body.rows).toEqual(withBase(nonDei.slice(0, 100)));
    expectContract('facts/latest', res);

    const dei = await call('facts/latest', { ticker: 'AAPL', include_dei: true, limit: 500 });
    expect(dei.body.count).toBe(Math.min(500, all.length));
    expect(dei.body.rows.some((r) => String(r.metric_id).startsWith('dei#'))).toBe(true);
    if (all.length > 500) expect(dei.body).toMatchObject({ truncated: true, total_available: all.length });
    else expect(dei.body).not.toHaveProperty('truncated');

    const one = await call('facts/latest', { ticker: 'AAPL', limit: 1 });
    expect(one.body).toMatchObject({ count: 1, truncated: true, total_available: nonDei.length });
  });

  it('facts/latest with metric_id is never capped or filtered, dei# included', async () => {
    const deiRow = (await store.factsLatest(AAPL_CIK)).find((r) => r.metric_id.startsWith('dei#'));
    if (!deiRow) throw new Error('AAPL has no dei# fact in the store');
    const res = await call('facts/latest', {
      ticker: 'AAPL',
      metric_id: deiRow.metric_id,
      limit: 1,
      include_dei: false,
    });
    const expected = await store.factsLatest(AAPL_CIK, deiRow.metric_id);
    expect(res.body.rows).toEqual(withBase(expected));
    expect(res.body).not.toHaveProperty('truncated');
    expect(res.body).not.toHaveProperty('total_available');
  });

  it('a company with few latest rows is not marked truncated', async () => {
    const res = await call('facts/latest', { ticker: 'AAPL', limit: 500 });
    const nonDei = (await store.factsLatest(AAPL_CIK)).filter((r) => !r.metric_id.startsWith('dei#'));
    if (nonDei.length <= 500) {
      expect(res.body.count).toBe(nonDei.length);
      expect(res.body).not.toHaveProperty('truncated');
    } else {
      expect(res.body).toMatchObject({ count: 500, truncated: true });
    }
  });

  it('limit bounds: 1 to 500, integers only', async () => {
    for (const limit of [0, 501, 1.5, '10', -1]) {
      const res = await call('facts/latest', { ticker: 'AAPL', limit });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'limit must be an integer from 1 to 500' });
      expectContract('facts/latest', res);
    }
    const bad = await call('facts/latest', { ticker: 'AAPL', include_dei: 'yes' });
    expect(bad.body).toEqual({ error: 'include_dei must be a boolean' });
  });

  describe('by-series', () => {
    let keys: string[];
    beforeAll(async () => {
      const latest = await store.factsLatest(AAPL_CIK);
      keys = [...new Set(latest.map((r) => r.series_key))].slice(0, 3);
    });

    const ops: [string, (cik: string) => Promise<readonly FactRow[]>][] = [
      ['facts/latest/by-series', (cik) => store.factsLatest(cik)],
      ['facts/core/by-series', (cik) => store.factsCore(cik)],
      ['facts/full/by-series', (cik) => store.factsFull(cik)],
    ];
    for (const [operation, query] of ops) {
      it(`${operation} returns the rows of the requested series only`, async () => {
        const res = await call(operation, { ticker: 'AAPL', series_keys: keys });
        expect(res.status).toBe(200);
        const expected = (await query(AAPL_CIK)).filter((r) => keys.includes(r.series_key));
        expect(expected.length).toBeGreaterThan(0);
        expect(res.body).toMatchObject({
          scope: 'company',
          ticker: 'AAPL',
          cik: AAPL_CIK,
          metric_id: null,
          count: expected.length,
        });
        expect(res.body.rows).toEqual(withBase(expected));
        expectContract(operation, res);
        const single = await call(operation, { cik: AAPL_CIK, series_key: keys[0] });
        expect(single.body.rows).toEqual(withBase(expected.filter((r) => r.series_key === keys[0])));
      });
    }

    it('series keys: at most 100, 64 lowercase hex, exactly one of series_key / series_keys', async () => {
      const key = keys[0] ?? '';
      const cases: [Record<string, unknown>, string][] = [
        [{ series_keys: Array(101).fill(key) }, 'series_keys must have at most 100 items (got 101)'],
        [{ series_keys: [] }, 'series_keys must have at least 1 item'],
        [{ series_keys: [key, key.toUpperCase()] }, 'series_keys[1] must be 64 lowercase hex characters'],
        [{ series_keys: key }, 'series_keys must be an array of series keys'],
        [{ series_key: key.slice(1) }, 'series_key must be 64 lowercase hex characters'],
        [
          { series_key: key, series_keys: [key] },
          'series_key and series_keys are mutually exclusive; give one',
        ],
        [{}, 'series_key or series_keys is required'],
      ];
      for (const [extra, error] of cases) {
        const res = await call('facts/core/by-series', { ticker: 'AAPL', ...extra });
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ error });
      }
      const hundred = await call('facts/latest/by-series', {
        ticker: 'AAPL',
        series_keys: Array(100).fill(key),
      });
      expect(hundred.status).toBe(200);
      const unknown = await call('facts/latest/by-series', { ticker: 'AAPL', series_key: 'f'.repeat(64) });
      expect(unknown.body).toMatchObject({ count: 0, rows: [] });
    });
  });
});

describe('catalogs, series and blobs', () => {
  it('series/catalog and dims/catalog: envelope like the facts envelope, rows from the store', async () => {
    for (const [operation, query] of [
      ['series/catalog', (cik: string) => store.seriesCatalog(cik)],
      ['dims/catalog', (cik: string) => store.dimsCatalog(cik)],
    ] as const) {
      const res = await call(operation, { ticker: 'AAPL' });
      const expected = await query(AAPL_CIK);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        scope: 'company',
        ticker: 'AAPL',
        cik: AAPL_CIK,
        metric_id: null,
        count: expected.length,
      });
      expect(res.body.rows).toEqual(withBase(expected));
      expectContract(operation, res);
    }
  });

  it('series/batch keeps request order, omits unknown ids, and its blob_url serves an immutable blob', async () => {
    const catalog = await store.seriesCatalog(AAPL_CIK);
    const ids = catalog
      .map((r) => r.series_id)
      .filter((id): id is string => typeof id === 'string')
      .slice(0, 3);
    expect(ids.length).toBe(3);
    const [a = '', b = '', c = ''] = ids;
    const res = await postOperation<{ series: Row[] }>(
      emu.url,
      'series/batch',
      { ids: [c, 'no-such-series', a, b, a] },
      emu.apiKey,
    );
    expect(res.status).toBe(200);
    expect(res.body.series.map((s) => s.series_id)).toEqual([c, a, b]);
    expect(res.body.series[0]).toEqual(withBase(await store.seriesById(c)));
    expect(validateResponse('series/batch', 200, res.body, headerRecord(res.headers))).toEqual([]);
    const alt = await postOperation<{ series: Row[] }>(
      emu.url,
      'series/batch',
      { series_ids: [b] },
      emu.apiKey,
    );
    expect(alt.body.series.map((s) => s.series_id)).toEqual([b]);

    const serving = res.body.series[0]?.serving as { blob_url: string; series_version: number };
    expect(serving.blob_url.startsWith(`${emu.url}/s/series/`)).toBe(true);
    const blob = await fetch(serving.blob_url);
    expect(blob.status).toBe(200);
    expect(blob.headers.get('cache-control')).toContain('immutable');
    const etag = blob.headers.get('etag');
    expect(etag).toBeTruthy();
    expect(await blob.json()).toEqual(await store.seriesBlob(c, serving.series_version));
    const again = await fetch(serving.blob_url, { headers: { 'if-none-match': etag ?? '' } });
    expect(again.status).toBe(304);
    const missing = await fetch(`${emu.url}/s/series/${encodeURIComponent(c)}/999999`);
    expect(missing.status).toBe(404);
  });

  it('series/batch bounds: 1 to 100 ids, ids or series_ids', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ ids: Array.from({ length: 101 }, (_, i) => `s${i}`) }, 'ids must have at most 100 items (got 101)'],
      [{ ids: [] }, 'ids must have at least 1 item'],
      [{ ids: ['a'], series_ids: ['b'] }, 'ids and series_ids are mutually exclusive; give one'],
      [{ series_ids: [1] }, 'series_ids[0] must be a non-empty series id string'],
      [{}, 'ids (or series_ids) is required'],
    ];
    for (const [body, error] of cases) {
      const res = await postOperation(emu.url, 'series/batch', body, emu.apiKey);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error });
    }
    const hundred = await postOperation(
      emu.url,
      'series/batch',
      { ids: Array.from({ length: 100 }, (_, i) => `s${i}`) },
      emu.apiKey,
    );
    expect(hundred).toMatchObject({ status: 200, body: { series: [] } });
  });
});

describe('evidence, viewer and issuer', () => {
  it('evidence/enriched: rows from the store, newest filing first, URLs on the emulator', async () => {
    const res = await call('evidence/enriched', { ticker: 'AAPL' });
    const expected = await store.evidence(AAPL_CIK);
    expect(res.body).toMatchObject({
      scope: 'company',
      ticker: 'AAPL',
      cik: AAPL_CIK,
      count: expected.length,
    });
    expect(res.body.rows).toEqual(withBase(expected));
    const filed = res.body.rows.map((r) => String(r.source_filed_at));
    expect([...filed].sort().reverse()).toEqual(filed);
    expectContract('evidence/enriched', res);
  });

  it('evidence_url redirects to a viewer that serves the real document with the figure marked', async () => {
    const rows = await store.evidence(AAPL_CIK);
    const ev = rows.find((r) => r.html_start_offset !== null && r.evidence_url !== null);
    if (!ev) throw new Error('no AAPL evidence with offsets');
    const loc = await store.evidenceLocation(ev.evidence_key);
    if (!loc?.documentPath || loc.start === null || loc.end === null) throw new Error('no document location');
    const open = await fetch(`${emu.url}${ev.evidence_url ?? ''}`, { redirect: 'manual' });
    expect(open.status).toBe(302);
    const location = open.headers.get('location') ?? '';
    expect(location.startsWith(emu.url)).toBe(true);
    const page = await fetch(location);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    const html = Buffer.from(await page.arrayBuffer());
    const doc = await store.readDocument(loc.documentPath);
    const figure = doc.subarray(loc.start, loc.end);
    const marked = Buffer.concat([Buffer.from('<mark id="ffx-evidence">'), figure, Buffer.from('</mark>')]);
    expect(html.includes(marked)).toBe(true);
    expect(html.length).toBeGreaterThan(doc.length);
    const unknown = await fetch(`${emu.url}/api/evidence/no-such-evidence/open`, { redirect: 'manual' });
    expect(unknown.status).toBe(404);
  });

  it('issuer/reference: the issuer row from submissions', async () => {
    const submissions = JSON.parse(readGz('submissions/CIK0000320193.json.gz')) as {
      name: string;
      sic: string;
    };
    const res = await call('issuer/reference', { ticker: 'AAPL' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ scope: 'company', ticker: 'AAPL', cik: AAPL_CIK, count: 1 });
    expect(res.body.rows).toHaveLength(1);
    expect(res.body.rows[0]).toMatchObject({
      cik: AAPL_CIK,
      current_ticker: 'AAPL',
      issuer_name: submissions.name,
      sic_code: submissions.sic,
    });
    expectContract('issuer/reference', res);
  });

  it('telemetry/proof-open: 202 {ok:true}; evidence_key required', async () => {
    const ok = await call('telemetry/proof-open', { evidence_key: 'abc', surface: 'tests', cik: AAPL_CIK });
    expect(ok).toMatchObject({ status: 202, body: { ok: true } });
    expectContract('telemetry/proof-open', ok);
    expect((await call('telemetry/proof-open', { surface: 'x' })).body).toEqual({
      error: 'evidence_key is required',
    });
    expect((await call('telemetry/proof-open', { evidence_key: 5 })).body).toEqual({
      error: 'evidence_key must be a non-empty string',
    });
    expect((await call('telemetry/proof-open', { evidence_key: 'a', surface: 1 })).body).toEqual({
      error: 'surface must be a non-empty string',
    });
  });
});

describe('bad requests', () => {
  const companyOps = [
    'facts/latest',
    'facts/core',
    'facts/full',
    'series/catalog',
    'dims/catalog',
    'evidence/enriched',
    'issuer/reference',
  ];

  it('scope: required, exclusive, singular only, well-formed', async () => {
    for (const operation of companyOps) {
      const cases: [unknown, string][] = [
        [{}, 'ticker or cik is required'],
        [{ ticker: 'AAPL', cik: AAPL_CIK }, 'Unsupported scope combination: give ticker or cik, not both'],
        [
          { tickers: ['AAPL'] },
          'Unsupported scope combination: tickers is accepted by search endpoints only; give ticker or cik',
        ],
        [
          { ciks: [AAPL_CIK], ticker: 'AAPL' },
          'Unsupported scope combination: ciks is accepted by search endpoints only; give ticker or cik',
        ],
        [{ ticker: 42 }, 'ticker must be a ticker symbol string (1 to 20 letters, digits, "." or "-")'],
        [{ cik: 320193 }, 'cik must be a string of up to 10 digits (zero-padded 10-digit CIK)'],
        [{ cik: '00003201930' }, 'cik must be a string of up to 10 digits (zero-padded 10-digit CIK)'],
      ];
      for (const [body, error] of cases) {
        const res = await call(operation, body);
        expect(res.status, `${operation} ${JSON.stringify(body)}`).toBe(400);
        expect(res.body).toEqual({ error });
      }
    }
    const metric = await call('facts/core', { ticker: 'AAPL', metric_id: 'Revenues' });
    expect(metric.body).toEqual({
      error: 'metric_id must have the form <taxonomy>#<Concept>, for example us-gaap#Revenues',
    });
  });

  it('unknown ticker or CIK: 404 naming it', async () => {
    for (const operation of companyOps) {
      const t = await call(operation, { ticker: 'ZZZQ' });
      expect(t).toMatchObject({ status: 404, body: { error: 'Unknown ticker: ZZZQ' } });
      expectContract(operation, t);
      const c = await call(operation, { cik: '0000000001' });
      expect(c).toMatchObject({ status: 404, body: { error: 'Unknown CIK: 0000000001' } });
    }
  });

  it('malformed JSON, a non-object body and an empty body are 400', async () => {
    const cases: [string, RegExp][] = [
      ['{"ticker": "AAPL"', /^Malformed JSON: /],
      ['[1,2]', /^Request body must be a JSON object$/],
      ['"AAPL"', /^Request body must be a JSON object$/],
      ['', /^Malformed JSON: request body is empty/],
    ];
    for (const [raw, error] of cases) {
      const res = await postOperation<{ error: string }>(emu.url, 'facts/full', raw, emu.apiKey);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(error);
    }
  });

  it('a body over 1 MiB is 413; GET on an operation is 405; an unknown operation 404', async () => {
    const big = await postOperation<{ error: string }>(
      emu.url,
      'facts/full',
      { ticker: 'AAPL', pad: 'x'.repeat(1_100_000) },
      emu.apiKey,
    );
    expect(big.status).toBe(413);
    expect(big.body.error).toMatch(/^Request body too large/);
    const get = await fetch(`${emu.url}/api/b2b/facts/full`, { headers: { 'x-api-key': emu.apiKey } });
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    expect(((await get.json()) as { error: string }).error).toMatch(/not allowed/);
    const unknown = await postOperation<{ error: string }>(
      emu.url,
      'facts/everything',
      { ticker: 'AAPL' },
      emu.apiKey,
    );
    expect(unknown).toMatchObject({
      status: 404,
      body: { error: 'Unknown operation: /api/b2b/facts/everything' },
    });
  });
});

describe('sandbox facts (no key)', () => {
  it('serves capped consolidated facts of one company', async () => {
    const res = await fetch(`${emu.url}/api/sandbox/facts?ticker=AAPL&limit=5`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      rows: Row[];
      count: number;
      truncated?: boolean;
      total_available?: number;
    };
    const core = await store.factsCore(AAPL_CIK);
    expect(body).toMatchObject({
      scope: 'company',
      ticker: 'AAPL',
      cik: AAPL_CIK,
      count: 5,
      truncated: true,
      total_available: core.length,
    });
    expect(body.rows).toEqual(withBase(core.slice(0, 5)));
    expect(validateResponse('sandbox/facts', 200, body)).toEqual([]);
  });

  it('400 on a bad limit, 404 on an unknown ticker', async () => {
    const bad = await fetch(`${emu.url}/api/sandbox/facts?ticker=AAPL&limit=21`);
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ error: 'limit must be an integer from 1 to 20' });
    const unknown = await fetch(`${emu.url}/api/sandbox/facts?ticker=ZZZQ`);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ error: 'Unknown ticker: ZZZQ' });
  });
});

describe('public URL and streaming robustness', () => {
  it('URL fields and redirects use --public-url', async () => {
    const e = await startTestEmulator({ publicUrl: 'https://filings.example/base/' });
    try {
      const res = await postOperation<{ rows: Row[] }>(
        e.url,
        'evidence/enriched',
        { ticker: 'AAPL' },
        e.apiKey,
      );
      const withUrl = res.body.rows.find((r) => typeof r.evidence_url === 'string');
      expect(String(withUrl?.evidence_url)).toMatch(/^https:\/\/filings\.example\/base\/api\/evidence\//);
      const path = String(withUrl?.evidence_url).slice('https://filings.example/base'.length);
      const open = await fetch(`${e.url}${path}`, { redirect: 'manual' });
      expect(open.headers.get('location')).toMatch(/^https:\/\/filings\.example\/base\/viewer\/evidence\//);
    } finally {
      await e.close();
    }
  });

  it('a client that drops a large response mid-stream does not disturb the next request', async () => {
    const controller = new AbortController();
    const res = await fetch(`${emu.url}/api/b2b/facts/full`, {
      method: 'POST',
      headers: { 'x-api-key': emu.apiKey },
      body: JSON.stringify({ ticker: 'AAPL' }),
      signal: controller.signal,
    });
    const reader = res.body?.getReader();
    await reader?.read();
    controller.abort();
    const next = await call('facts/full', { ticker: 'AAPL' });
    expect(next.status).toBe(200);
    expect(next.body.count).toBe((await store.factsFull(AAPL_CIK)).length);
  });
});
