/**
 * The emulator plays nights: with an as-of date, filings filed after it do not exist. In the
 * bundled data only Apple filed between 2025-10-30 and 2025-11-05 (its FY2025 10-K, accession
 * 0000320193-25-000079, filed 2025-10-31), so moving the clock across that night changes Apple's
 * facts, evidence, catalog and search chunks and nobody else's. Over real HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postOperation, startTestEmulator, type TestEmulator } from '../helpers/emulator.js';

type Row = Record<string, unknown>;
const FY2025_10K = '0000320193-25-000079';

let emu: TestEmulator;
beforeAll(async () => {
  emu = await startTestEmulator({ asOf: '2025-10-30' });
});
afterAll(async () => {
  await emu?.close();
});

async function clock(asOf?: string | null): Promise<{ status: number; body: Row }> {
  const res =
    asOf === undefined
      ? await fetch(`${emu.url}/_emulator/clock`)
      : await fetch(`${emu.url}/_emulator/clock`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ as_of: asOf }),
        });
  return { status: res.status, body: (await res.json()) as Row };
}

async function rows(operation: string, ticker: string): Promise<Row[]> {
  const res = await postOperation<{ rows: Row[] }>(emu.url, operation, { ticker }, emu.apiKey);
  expect(res.status, operation).toBe(200);
  return res.body.rows;
}

describe('the emulator as of a date', () => {
  it('answers the start-up as-of date, and a later one set at run time', async () => {
    expect(await clock()).toEqual({ status: 200, body: { as_of: '2025-10-30', companies: {} } });
    const before = await rows('facts/full', 'AAPL');
    expect(before.length).toBeGreaterThan(0);
    expect(before.some((r) => r.source_accession === FY2025_10K)).toBe(false);
    expect(before.every((r) => String(r.source_filed_at) <= '2025-10-30')).toBe(true);
    const catalogBefore = await rows('series/catalog', 'AAPL');
    const evidenceBefore = await rows('evidence/enriched', 'AAPL');
    const issuerBefore = await postOperation<{ rows: Row[] }>(
      emu.url,
      'issuer/reference',
      { ticker: 'AAPL' },
      emu.apiKey,
    );

    expect(await clock('2025-11-05')).toEqual({
      status: 200,
      body: { ok: true, as_of: '2025-11-05', companies: {} },
    });
    const after = await rows('facts/full', 'AAPL');
    expect(after.some((r) => r.source_accession === FY2025_10K)).toBe(true);
    expect(after.length).toBeGreaterThan(before.length);
    expect(await rows('series/catalog', 'AAPL')).not.toEqual(catalogBefore);
    expect((await rows('evidence/enriched', 'AAPL')).length).toBeGreaterThan(evidenceBefore.length);
    const issuerAfter = await postOperation<{ rows: Row[] }>(
      emu.url,
      'issuer/reference',
      { ticker: 'AAPL' },
      emu.apiKey,
    );
    expect(String(issuerBefore.body.rows[0]?.as_of_date) <= '2025-10-30').toBe(true);
    expect(issuerAfter.body.rows[0]?.as_of_date).toBe('2025-10-31');
  });

  it('changes nothing for the companies that filed nothing that night', async () => {
    const at = async (asOf: string): Promise<Row[][]> => {
      await clock(asOf);
      return Promise.all(['NVDA', 'MSFT', 'GOOGL'].map((t) => rows('series/catalog', t)));
    };
    expect(await at('2025-10-30')).toEqual(await at('2025-11-05'));
  });

  it('hides search chunks of a filing made after the date', async () => {
    const search = async (): Promise<Row[]> => {
      const res = await postOperation<{ results: Row[] }>(
        emu.url,
        'search/filings',
        { ticker: 'AAPL', query: 'net sales', after: 'all', limit: 50 },
        emu.apiKey,
      );
      expect(res.status).toBe(200);
      return res.body.results;
    };
    await clock('2025-10-30');
    expect((await search()).some((r) => r.accession === FY2025_10K)).toBe(false);
    await clock('2025-11-05');
    expect((await search()).some((r) => r.accession === FY2025_10K)).toBe(true);
  });

  it('null goes back to everything bundled; a bad date is a 400 naming the field', async () => {
    expect((await clock(null)).body).toEqual({ ok: true, as_of: null, companies: {} });
    expect((await rows('facts/full', 'AAPL')).some((r) => r.source_accession === FY2025_10K)).toBe(true);
    const bad = await clock('2025-02-30');
    expect(bad.status).toBe(400);
    expect(String(bad.body.error)).toMatch(/as_of must be a calendar date YYYY-MM-DD, got "2025-02-30"/);
    const missing = await fetch(`${emu.url}/_emulator/clock`, { method: 'POST', body: '{}' });
    expect(missing.status).toBe(400);
    expect((await clock()).body).toEqual({ as_of: null, companies: {} });
  });

  it('refuses a bad --as-of at start with one line', async () => {
    await expect(startTestEmulator({ asOf: '31/10/2025' })).rejects.toThrow(
      /asOf must be a calendar date YYYY-MM-DD, got "31\/10\/2025"/,
    );
  });
});
