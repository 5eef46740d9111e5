/**
 * The serialised-rows cache (src/emulator/server/rows-cache.ts): a list is serialised on its first
 * serve, recorded on its second and written from the record afterwards. Over real HTTP the three
 * answers must be byte for byte the same and equal to the store's rows; URL fields must carry each
 * emulator's own base URL even when two emulators share a store; a body fault still applies to a
 * recorded list. The cache's own rules (second serve, short lists, size cap, base-URL key) are
 * checked directly.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RowsTextCache } from '../../src/emulator/server/rows-cache.js';
import type { EmulatorStore } from '../../src/emulator/store.js';
import { bundledTestStore, startTestEmulator, type TestEmulator } from '../helpers/emulator.js';

const NVDA_CIK = '0001045810';

async function factsFullText(emu: TestEmulator, headers: Record<string, string> = {}): Promise<string> {
  const res = await fetch(`${emu.url}/api/b2b/facts/full`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': emu.apiKey, ...headers },
    body: JSON.stringify({ cik: NVDA_CIK }),
  });
  expect(res.status).toBe(200);
  return res.text();
}

describe('facts/full served repeatedly', () => {
  let store: EmulatorStore;
  let a: TestEmulator;
  let b: TestEmulator;
  beforeAll(async () => {
    store = await bundledTestStore();
    a = await startTestEmulator({ store });
    b = await startTestEmulator({ store, publicUrl: 'http://exports.example:9000/ffx' });
  });
  afterAll(async () => {
    await a.close();
    await b.close();
  });

  it('answers the same bytes on the first, second (recorded) and third (from the record) serve', async () => {
    const first = await factsFullText(a);
    const second = await factsFullText(a);
    const third = await factsFullText(a);
    expect(second).toBe(first);
    expect(third).toBe(first);
    const body = JSON.parse(first) as { count: number; rows: { fact_key: string; evidence_url: string }[] };
    const rows = await store.factsFull(NVDA_CIK);
    expect(body.count).toBe(rows.length);
    expect(body.rows.map((r) => r.fact_key)).toEqual(rows.map((r) => r.fact_key));
    expect(body.rows[0]?.evidence_url).toBe(`${a.url}${rows[0]?.evidence_url ?? ''}`);
  });

  it('keeps each emulator’s own base URL when two emulators share the store', async () => {
    for (let i = 0; i < 3; i++) {
      const text = await factsFullText(b);
      const row = (JSON.parse(text) as { rows: { evidence_url: string }[] }).rows[0];
      expect(row?.evidence_url.startsWith('http://exports.example:9000/ffx/api/evidence/')).toBe(true);
      expect(text).not.toContain(a.url);
    }
  });

  it('still truncates a recorded list on X-Emulator-Fault: truncate', async () => {
    const full = await factsFullText(a);
    await factsFullText(a);
    const res = await fetch(`${a.url}/api/b2b/facts/full`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': a.apiKey, 'x-emulator-fault': 'truncate' },
      body: JSON.stringify({ cik: NVDA_CIK }),
    });
    expect(Number(res.headers.get('content-length'))).toBe(Buffer.byteLength(full));
    await expect(res.text()).rejects.toThrow();
  });
});

describe('RowsTextCache', () => {
  const rows = Array.from({ length: 300 }, (_, i) => ({ i }));
  const chunk = Buffer.from('{"i":0}');

  it('records a list on its second serve and gives it back for the same base URL only', () => {
    const cache = new RowsTextCache();
    expect(cache.recorder(rows, 'http://a')).toBeUndefined();
    const rec = cache.recorder(rows, 'http://a');
    expect(rec).toBeDefined();
    rec?.add(chunk);
    expect(cache.get(rows, 'http://a')).toBeUndefined();
    rec?.finish();
    expect(cache.get(rows, 'http://a')).toEqual([chunk]);
    expect(cache.get(rows, 'http://b')).toBeUndefined();
  });

  it('never records a short list or one beyond the size cap', () => {
    const cache = new RowsTextCache(10);
    const short = rows.slice(0, 10);
    expect(cache.recorder(short, 'k')).toBeUndefined();
    expect(cache.recorder(short, 'k')).toBeUndefined();
    cache.recorder(rows, 'k');
    const rec = cache.recorder(rows, 'k');
    rec?.add(chunk);
    rec?.add(chunk);
    rec?.finish();
    expect(cache.get(rows, 'k')).toBeUndefined();
  });

  it('keeps nothing from a serve that did not finish', () => {
    const cache = new RowsTextCache();
    cache.recorder(rows, 'k');
    cache.recorder(rows, 'k')?.add(chunk);
    expect(cache.get(rows, 'k')).toBeUndefined();
  });
});
