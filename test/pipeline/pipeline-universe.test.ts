import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateRequest } from '../../src/api/validate.js';
import { TICKER_PATTERN } from '../../src/contract/vocabulary.js';
import { InputError, RequestValidationError } from '../../src/errors.js';
import { retryDelayMs } from '../../src/pipeline/part/backoff.js';
import {
  adhocSnapshotId,
  checkSnapshotId,
  localDate,
  nightlySnapshotId,
  parsePartJobId,
  partJobId,
} from '../../src/pipeline/queue/ids.js';
import { missingCompanies, missingDetailLines, missingLine } from '../../src/pipeline/record/missing.js';
import type { DatasetName, PartPointer, PartStatus } from '../../src/types.js';
import {
  companyAsTyped,
  companyScope,
  loadUniverse,
  parseUniverseText,
  readUniverseFile,
} from '../../src/pipeline/record/universe.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fx-universe-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('universe', () => {
  it('refuses lookalike tickers before any case mapping, naming the character', async () => {
    // 'ſ'.toUpperCase() is 'S': TſLA must never become Tesla's TSLA (nor ı → I, ß → SS).
    for (const [raw, ch] of [
      ['TſLA', '"ſ" (U+017F)'],
      ['aapı', '"ı" (U+0131)'],
      ['ßAP', '"ß" (U+00DF)'],
      ['AAPL\u200b', '"\u200b" (U+200B)'],
    ] as const) {
      await expect(loadUniverse({ tickers: [raw], tickersLabel: '--tickers' })).rejects.toThrow(
        `--tickers[0]: ${JSON.stringify(raw)} is not a ticker: it contains ${ch}`,
      );
    }
    expect(() => parseUniverseText('TſLA\n', 'u.txt')).toThrow('contains "ſ" (U+017F) at position 2');
  });

  it('one ticker rule for the exporter, the client and the API contract', async () => {
    const longest = 'ABCDEFGHIJ.KLMNOPQ-R'; // 20 characters: the API's limit
    expect(await loadUniverse({ tickers: [longest.toLowerCase()] })).toEqual([
      { kind: 'ticker', ticker: longest, typed: longest.toLowerCase() },
    ]);
    expect(TICKER_PATTERN.test(longest)).toBe(true);
    expect(() => validateRequest('facts/full', { ticker: longest })).not.toThrow();
    const tooLong = `${longest}S`;
    await expect(loadUniverse({ tickers: [tooLong] })).rejects.toThrow('is not a ticker (1-20 ASCII letters');
    expect(() => validateRequest('facts/full', { ticker: tooLong })).toThrow(RequestValidationError);
  });

  it('--tickers takes CIKs too, with or without zero padding, and remembers them as typed', async () => {
    expect(
      await loadUniverse({ tickers: ['0000320193', '789019', 'tsla'], tickersLabel: '--tickers' }),
    ).toEqual([
      { kind: 'cik', cik: '0000320193' },
      { kind: 'cik', cik: '0000789019', typed: '789019' },
      { kind: 'ticker', ticker: 'TSLA', typed: 'tsla' },
    ]);
  });

  it("takes the SEC's spelling of a CIK (CIK0000320193) as the CIK, in any case, de-duplicated", async () => {
    const u = await loadUniverse({
      tickers: ['CIK0000320193', '320193', 'cik320193', ' 0000320193 '],
      tickersLabel: '--tickers',
    });
    // One company, named as first typed; the API is asked for its 10-digit CIK.
    expect(u).toEqual([{ kind: 'cik', cik: '0000320193', typed: 'CIK0000320193' }]);
    expect(companyScope(u[0]!)).toEqual({ cik: '0000320193' });
    expect(companyAsTyped(u[0]!)).toBe('CIK0000320193');
    expect(parseUniverseText('cik\nCIK0001652044\n', 'u.csv')).toEqual([
      { kind: 'cik', cik: '0001652044', typed: 'CIK0001652044' },
    ]);
    await expect(loadUniverse({ tickers: ['CIK0000000000'], tickersLabel: '--tickers' })).rejects.toThrow(
      '--tickers[0]: "CIK0000000000" is not a CIK (1 to 10 digits, not all zeros, optionally after "CIK")',
    );
  });

  it('reads one ticker or CIK per line, with comments and blank lines', () => {
    const u = parseUniverseText('# mine\naapl\n\n320193\nBRK.B  # class B\n', 'u.txt');
    expect(u).toEqual([
      { kind: 'ticker', ticker: 'AAPL', typed: 'aapl' },
      { kind: 'cik', cik: '0000320193', typed: '320193' },
      { kind: 'ticker', ticker: 'BRK.B' },
    ]);
  });

  it('reads CSV with a header naming ticker and/or cik', () => {
    const u = parseUniverseText('name,cik,ticker\n"Apple, Inc.",320193,AAPL\nAlphabet,1652044,\n', 'u.csv');
    expect(u).toEqual([
      { kind: 'ticker', ticker: 'AAPL' },
      { kind: 'cik', cik: '0001652044', typed: '1652044' },
    ]);
  });

  it('names file and line of a bad entry', () => {
    expect(() => parseUniverseText('AAPL\nnot a ticker\n', '/x/u.txt')).toThrow(
      'universe file /x/u.txt, line 2: "not a ticker" is not a ticker',
    );
    expect(() => parseUniverseText('a,b\n', '/x/u.csv')).toThrow(
      /line 1: a CSV universe file needs a header row/,
    );
    expect(() => parseUniverseText('ticker,cik\n,\n', '/x/u.csv')).toThrow(
      'universe file /x/u.csv, line 2: the row has neither a ticker nor a cik',
    );
  });

  it('combines config lists and a file, de-duplicated in first-seen order', async () => {
    const f = join(dir, 'tickers.txt');
    await writeFile(f, 'MSFT\nAAPL\n');
    const u = await loadUniverse({ tickers: ['aapl', 'NVDA'], ciks: ['789019'], file: f });
    expect(u.map((c) => (c.kind === 'ticker' ? c.ticker : c.cik))).toEqual([
      'AAPL',
      'NVDA',
      '0000789019',
      'MSFT',
    ]);
  });

  it('refuses an empty universe and a missing file with clear errors', async () => {
    await expect(loadUniverse({})).rejects.toThrow(/the universe is empty/);
    await expect(readUniverseFile(join(dir, 'none.txt'))).rejects.toThrow(/none\.txt: file not found/);
    await expect(loadUniverse({ tickers: ['A B'], tickersLabel: '--tickers' })).rejects.toBeInstanceOf(
      InputError,
    );
    await expect(loadUniverse({ tickers: ['A B'], tickersLabel: '--tickers' })).rejects.toThrow(
      /^--tickers\[0\]:/,
    );
  });
});

describe('ids', () => {
  it('dates a nightly snapshot in the configured time zone', () => {
    const t = Date.parse('2026-11-21T03:30:00Z');
    expect(nightlySnapshotId(localDate(t, 'UTC'))).toBe('nightly-2026-11-21');
    expect(nightlySnapshotId(localDate(t, 'America/New_York'))).toBe('nightly-2026-11-20');
    expect(nightlySnapshotId(localDate(t, 'Asia/Tokyo'))).toBe('nightly-2026-11-21');
  });

  it('ad hoc ids hash the request, order-insensitive', () => {
    const a = adhocSnapshotId('2026-11-21', {
      companies: ['AAPL', 'MSFT'],
      datasets: ['facts_full', 'evidence'],
      formats: ['parquet'],
      outDir: '/o',
    });
    const b = adhocSnapshotId('2026-11-21', {
      companies: ['MSFT', 'AAPL'],
      datasets: ['evidence', 'facts_full'],
      formats: ['parquet'],
      outDir: '/o',
    });
    const c = adhocSnapshotId('2026-11-21', {
      companies: ['AAPL'],
      datasets: ['facts_full', 'evidence'],
      formats: ['parquet'],
      outDir: '/o',
    });
    expect(a).toMatch(/^adhoc-2026-11-21-[0-9a-f]{10}$/);
    expect(a).toBe(b);
    expect(a).not.toBe(c);
  });

  it('part job ids round-trip, also from full job keys and dotted tickers', () => {
    const id = partJobId('nightly-2026-11-21', 'facts_full', 'BRK.B');
    expect(id).toBe('nightly-2026-11-21.facts_full.BRK.B');
    expect(id).not.toContain(':');
    expect(parsePartJobId('nightly-2026-11-21', `fx:filings-export-parts:${id}`)).toEqual({
      dataset: 'facts_full',
      companyKey: 'BRK.B',
    });
    expect(parsePartJobId('other', id)).toBeUndefined();
  });

  it('refuses snapshot ids BullMQ cannot take', () => {
    expect(checkSnapshotId('my-snap_1.b', '--snapshot-id')).toBe('my-snap_1.b');
    expect(() => checkSnapshotId('a:b', '--snapshot-id')).toThrow(
      /^--snapshot-id: "a:b" is not a valid snapshot id/,
    );
    expect(() => checkSnapshotId('12345', '--snapshot-id')).toThrow(/not all digits/);
    expect(() => checkSnapshotId('', '--snapshot-id')).toThrow(InputError);
  });
});

describe('retry delays', () => {
  const s = { baseDelayMs: 1000, maxDelayMs: 10_000, jitter: 0.5 };
  it('grow exponentially, capped, spread evenly around the nominal delay', () => {
    expect([1, 2, 3, 4, 5].map((n) => retryDelayMs(s, n, undefined, () => 0.5))).toEqual([
      1000, 2000, 4000, 8000, 10_000,
    ]);
    expect([1, 2, 3].map((n) => retryDelayMs(s, n, undefined, () => 0))).toEqual([500, 1000, 2000]);
    expect([1, 2, 3].map((n) => retryDelayMs(s, n, undefined, () => 1))).toEqual([1500, 3000, 6000]);
    // Many parts failing together come back spread over the whole band, centred on the delay.
    let seed = 7;
    const random = (): number => ((seed = (seed * 16807) % 2147483647) - 1) / 2147483646;
    const delays = Array.from({ length: 2000 }, () => retryDelayMs(s, 3, undefined, random));
    const mean = delays.reduce((a, b) => a + b, 0) / delays.length;
    expect(Math.min(...delays)).toBeGreaterThanOrEqual(2000);
    expect(Math.max(...delays)).toBeLessThanOrEqual(6000);
    expect(Math.abs(mean - 4000)).toBeLessThan(100);
    expect(delays.filter((d) => d > 4000).length / delays.length).toBeGreaterThan(0.4);
  });
  it('never undercut a Retry-After sent with the error (up to the cap)', () => {
    expect(retryDelayMs(s, 1, 7000, () => 0)).toBe(7000);
    expect(retryDelayMs(s, 1, 60_000, () => 0)).toBe(10_000);
  });
});

describe('missing companies', () => {
  const part = (ticker: string, dataset: DatasetName, status: PartStatus, message?: string): PartPointer => ({
    dataset,
    ticker,
    status,
    rows: 0,
    bytes: 0,
    ...(message !== undefined ? { message } : {}),
  });

  it('are the companies whose every part was answered 404, as typed, in the order asked for', async () => {
    const companies = await loadUniverse({ tickers: ['qqqqq', 'AAPL', 'CIK9', 'MSFT'] });
    const missing = missingCompanies(companies, [
      part('AAPL', 'facts_full', 'done'),
      part('QQQQQ', 'series_catalog', 'not_found', 'series-catalog: company not found: ticker QQQQQ'),
      part('QQQQQ', 'facts_full', 'not_found', 'facts/full: company not found: ticker QQQQQ'),
      part('0000000009', 'facts_full', 'not_found', 'facts/full: company not found: cik 0000000009'),
      // Found for one dataset: the company exists.
      part('MSFT', 'series_catalog', 'not_found', 'x'),
      part('MSFT', 'facts_full', 'done'),
    ]);
    expect(missing).toEqual([
      { company: 'qqqqq', answer: 'facts/full: company not found: ticker QQQQQ' },
      { company: 'CIK9', answer: 'facts/full: company not found: cik 0000000009' },
    ]);
    expect(missingLine(missing)).toBe('2 companies not found: qqqqq, CIK9');
    expect(missingLine(missing.slice(0, 1))).toBe('1 company not found: qqqqq');
    expect(missingDetailLines(missing.slice(0, 1), 3)).toEqual([
      'not found: qqqqq: facts/full: company not found: ticker QQQQQ',
      "… and 2 more not found (the manifest's parts list them all)",
    ]);
  });
});
