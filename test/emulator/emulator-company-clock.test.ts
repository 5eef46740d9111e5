/**
 * Per-company as-of dates: `POST /_emulator/clock` `{"as_of": …, "companies": {"AAPL": …}}` plays a
 * night where only Apple filed (its FY2025 10-K, filed 2025-10-31). Apple answers as of its own
 * date; every other company, Apple's synthetic clones included, as of the global one. Over real HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadStore, type DataStore } from '../../src/emulator/data/index.js';
import { postOperation, startTestEmulator, type TestEmulator } from '../helpers/emulator.js';

type Row = Record<string, unknown>;
const FY2025_10K = '0000320193-25-000079';
const APPLE_CIK = '0000320193';
const BEFORE = '2025-10-30';
const AFTER = '2025-11-05';

let store: DataStore;
let emu: TestEmulator;
let clone: string;
beforeAll(async () => {
  // One synthetic clone per real company, so Apple has one.
  store = await loadStore({ validate: false, synthetic: 12 });
  const c = store.companies().find((x) => x.synthetic && store.sourceCikOf(x.cik) === APPLE_CIK);
  if (c === undefined) throw new Error('no synthetic clone of Apple');
  clone = c.cik;
  emu = await startTestEmulator({ store, asOf: BEFORE });
}, 120_000);
afterAll(async () => {
  await emu?.close();
  await store?.close();
});

async function setClock(body: unknown): Promise<{ status: number; body: Row }> {
  const res = await fetch(`${emu.url}/_emulator/clock`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Row };
}

async function getClock(): Promise<Row> {
  return (await (await fetch(`${emu.url}/_emulator/clock`)).json()) as Row;
}

async function answer(operation: string, body: Row): Promise<Row> {
  const res = await postOperation<Row>(emu.url, operation, body, emu.apiKey);
  expect(res.status, `${operation} ${JSON.stringify(body)}`).toBe(200);
  return res.body;
}

/** Every per-company answer the exporter and the viewer use, for one company. */
async function answers(scope: Row): Promise<Row> {
  const out: Row = {};
  for (const op of ['facts/full', 'facts/core', 'evidence/enriched', 'series/catalog', 'issuer/reference'])
    out[op] = await answer(op, scope);
  const catalog = out['series/catalog'] as { rows: Row[] };
  const ids = catalog.rows.slice(0, 5).map((r) => r.series_id);
  out['series/batch'] = await answer('series/batch', { ids });
  out['search/filings'] = await answer('search/filings', {
    ...scope,
    query: 'net sales',
    after: 'all',
    limit: 50,
  });
  return out;
}

const accessions = (a: Row): unknown[] =>
  (a['facts/full'] as { rows: Row[] }).rows.map((r) => r.source_accession);

const factAccessions = (body: Row): unknown[] => (body.rows as Row[]).map((r) => r.source_accession);

describe('per-company as-of dates', () => {
  it('changes only the overridden company; its synthetic clone and the others keep the global date', async () => {
    const scopes = { apple: { ticker: 'AAPL' }, clone: { cik: clone }, msft: { ticker: 'MSFT' } };
    const snapshot = async (): Promise<Record<string, Row>> => ({
      apple: await answers(scopes.apple),
      clone: await answers(scopes.clone),
      msft: await answers(scopes.msft),
    });
    expect((await setClock({ as_of: BEFORE })).status).toBe(200);
    const before = await snapshot();
    expect((await setClock({ as_of: AFTER })).status).toBe(200);
    const after = await snapshot();
    expect(accessions(before.apple as Row)).not.toContain(FY2025_10K);
    expect(accessions(after.apple as Row)).toContain(FY2025_10K);

    const set = await setClock({ as_of: BEFORE, companies: { AAPL: AFTER } });
    expect(set).toEqual({
      status: 200,
      body: { ok: true, as_of: BEFORE, companies: { [APPLE_CIK]: AFTER } },
    });
    expect(await getClock()).toEqual({ as_of: BEFORE, companies: { [APPLE_CIK]: AFTER } });
    const mixed = await snapshot();
    expect(mixed.apple).toEqual(after.apple);
    expect(mixed.clone).toEqual(before.clone);
    expect(mixed.msft).toEqual(before.msft);
    // The clone did change across the global night: keeping the global date is a real difference.
    expect(after.clone).not.toEqual(before.clone);
  }, 120_000);

  it('takes a CIK as well as a ticker, and null for everything bundled', async () => {
    expect(
      (await setClock({ as_of: BEFORE, companies: { '320193': null, [clone]: AFTER } })).body.companies,
    ).toEqual({ [APPLE_CIK]: null, [clone]: AFTER });
    expect(factAccessions(await answer('facts/full', { ticker: 'AAPL' }))).toContain(FY2025_10K);
    expect(factAccessions(await answer('facts/full', { ticker: 'MSFT' })).length).toBeGreaterThan(0);
    // A POST without companies replaces the whole clock: no overrides remain.
    expect((await setClock({ as_of: BEFORE })).body).toEqual({ ok: true, as_of: BEFORE, companies: {} });
    expect(factAccessions(await answer('facts/full', { ticker: 'AAPL' }))).not.toContain(FY2025_10K);
  });

  it('answers bad input with a 400 naming what is wrong, and changes nothing', async () => {
    await setClock({ as_of: BEFORE, companies: { AAPL: AFTER } });
    const kept = { as_of: BEFORE, companies: { [APPLE_CIK]: AFTER } };
    const cases: [unknown, RegExp][] = [
      [{ as_of: AFTER, companies: { NOPE: AFTER } }, /companies: unknown company "NOPE"/],
      [{ as_of: AFTER, companies: { AAPL: '2025-02-30' } }, /companies\.AAPL must be a calendar date/],
      [{ as_of: AFTER, companies: { AAPL: 20251105 } }, /companies\.AAPL must be a calendar date.*20251105/],
      [{ as_of: AFTER, companies: ['AAPL'] }, /companies must be an object/],
      [{ as_of: AFTER, companies: 'AAPL=2025-11-05' }, /companies must be an object/],
      [
        { as_of: AFTER, companies: { AAPL: AFTER, '320193': BEFORE } },
        /names company 0000320193 a second time with another date/,
      ],
      [{ as_of: 'soon', companies: { AAPL: AFTER } }, /as_of must be a calendar date/],
    ];
    for (const [body, message] of cases) {
      const res = await setClock(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(String(res.body.error)).toMatch(message);
      expect(await getClock()).toEqual(kept);
    }
  });

  it('starts with asOfCompanies, and refuses an unknown company at start naming it', async () => {
    const other = await startTestEmulator({ store, asOf: BEFORE, asOfCompanies: { aapl: AFTER } });
    try {
      expect(await (await fetch(`${other.url}/_emulator/clock`)).json()).toEqual({
        as_of: BEFORE,
        companies: { [APPLE_CIK]: AFTER },
      });
    } finally {
      await other.close();
    }
    await expect(startTestEmulator({ store, asOf: BEFORE, asOfCompanies: { NOPE: AFTER } })).rejects.toThrow(
      /asOfCompanies: unknown company "NOPE"/,
    );
  });
});
