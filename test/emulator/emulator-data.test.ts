/**
 * The emulator's data layer (src/emulator/data/) against the real SEC files bundled in data/sec:
 * exact values, winning filings, dimensional rows, evidence byte offsets, issuer reference,
 * synthetic issuers and bad data dirs. Expected values are read from the raw SEC files in the
 * tests themselves (regexes over the raw text, never a float), not from the code under test.
 */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EmulatorDataError } from '../../src/emulator/errors.js';
import { defaultDataDir, loadStore, type DataStore } from '../../src/emulator/data/index.js';
import type { FactRow } from '../../src/emulator/store.js';

const DATA = defaultDataDir();
const AAPL = '0000320193';
const REVENUE = 'us-gaap#RevenueFromContractWithCustomerExcludingAssessedTax';
const FY2024 = 'duration:2023-10-01..2024-09-28';

function raw(rel: string): string {
  return gunzipSync(readFileSync(join(DATA, `${rel}.gz`))).toString('utf8');
}

/** The JSON text of one concept's block in a companyfacts file (raw, numbers untouched). */
function conceptBlock(text: string, concept: string): string {
  const start = text.indexOf(`"${concept}":{`);
  expect(start).toBeGreaterThan(0);
  const end = text.indexOf(']}}', start);
  return text.slice(start, end);
}

/** Raw `val` text of the companyfacts entry with this period and accession. */
function rawVal(block: string, start: string | null, end: string, accn: string): string {
  const period = start === null ? `"end":"${end}"` : `"start":"${start}","end":"${end}"`;
  const m = new RegExp(`\\{${period},"val":(-?[0-9.]+),"accn":"${accn}"`).exec(block);
  expect(m, `${period} ${accn}`).not.toBeNull();
  return m?.[1] ?? '';
}

let store: DataStore;
let appleCompanyFacts: string;

beforeAll(async () => {
  store = await loadStore({ warm: 0 });
  appleCompanyFacts = raw(`companyfacts/CIK${AAPL}.json`);
});
afterAll(() => store.close());

function find(rows: readonly FactRow[], pred: (r: FactRow) => boolean): FactRow {
  const r = rows.find(pred);
  expect(r).toBeDefined();
  return r as FactRow;
}

describe('companies', () => {
  it('serves every CIK that has companyfacts, submissions or a filings folder, and no other', () => {
    const ciks = new Set<string>();
    for (const dir of ['companyfacts', 'submissions']) {
      for (const f of readdirSync(join(DATA, dir))) {
        const m = /^CIK(\d{10})\.json\.gz$/.exec(f);
        if (m?.[1]) ciks.add(m[1]);
      }
    }
    const folders = readdirSync(join(DATA, 'filings'));
    const served = store.companies();
    for (const cik of ciks) expect(served.map((c) => c.cik)).toContain(cik);
    for (const t of folders) expect(store.resolve({ ticker: t })?.tickers).toContain(t);
    expect(served.every((c) => !c.synthetic)).toBe(true);
    // A ticker of the SEC map without any data is not served (404 at the HTTP layer).
    const tickers = JSON.parse(raw('reference/company_tickers.json')) as Record<
      string,
      { ticker: string; cik_str: number }
    >;
    const noData = Object.values(tickers).find(
      (t) => !ciks.has(String(t.cik_str).padStart(10, '0')) && !folders.includes(t.ticker),
    );
    expect(noData).toBeDefined();
    expect(store.resolve({ ticker: noData?.ticker ?? '' })).toBeUndefined();
  });

  it('resolves tickers case-insensitively and CIKs with or without padding', () => {
    expect(store.resolve({ ticker: 'aapl' })?.cik).toBe(AAPL);
    expect(store.resolve({ cik: '320193' })?.ticker).toBe('AAPL');
    expect(store.resolve({ cik: 'abc' })).toBeUndefined();
  });
});

describe('fact rows', () => {
  it("Apple's FY2024 revenue is 391035000000 from accession 0000320193-24-000123, as in companyfacts", async () => {
    const rows = await store.factsCore(AAPL, REVENUE);
    const r = find(rows, (x) => x.period_key === FY2024);
    const expected = rawVal(
      conceptBlock(appleCompanyFacts, 'RevenueFromContractWithCustomerExcludingAssessedTax'),
      '2023-10-01',
      '2024-09-28',
      '0000320193-24-000123',
    );
    expect(r.value_num).toBe(expected);
    expect(r.value_num).toBe('391035000000');
    expect(r.value_scaled_int).toBe('391035');
    expect(r.scale).toBe(6);
    expect(r.source_accession).toBe('0000320193-24-000123');
    expect(r.source_form_type).toBe('10-K');
    expect(r.source_filed_at).toBe('2024-11-01');
    expect(r.source_is_amendment).toBe(false);
    expect(r.source_is_current_filing_period).toBe(true);
    expect(r).toMatchObject({
      cik: AAPL,
      current_ticker: 'AAPL',
      metric_id: REVENUE,
      period_kind: 'duration',
      period_start: '2023-10-01',
      period_end: '2024-09-28',
      period_end_year: 2024,
      period_end_quarter: 3,
      unit_signature: 'monetary:USD',
      unit_class: 'monetary',
      currency: 'USD',
      is_consolidated: true,
    });
    expect(r.fact_key).toMatch(/^[0-9a-f]{64}$/);
    expect(r.series_key).toMatch(/^[0-9a-f]{64}$/);
    expect(r.evidence_url).toBe(`/api/evidence/${r.evidence_key}/open`);
  });

  it('keeps decimals exact (EPS 6.11) and value_num = value_scaled_int × 10^scale on every row', async () => {
    const block = conceptBlock(appleCompanyFacts, 'EarningsPerShareBasic');
    const r = find(
      await store.factsCore(AAPL, 'us-gaap#EarningsPerShareBasic'),
      (x) => x.period_key === FY2024,
    );
    expect(r.value_num).toBe(rawVal(block, '2023-10-01', '2024-09-28', '0000320193-24-000123'));
    expect(r).toMatchObject({
      value_num: '6.11',
      value_scaled_int: '611',
      scale: -2,
      unit_signature: 'monetary_per_share:USD',
      currency: 'USD',
    });
    for (const row of await store.factsFull(AAPL)) {
      const int = BigInt(row.value_scaled_int);
      const expected = row.scale >= 0 ? int * 10n ** BigInt(row.scale) : null;
      if (expected !== null) expect(BigInt(row.value_num)).toBe(expected);
      else {
        const [whole = '', frac = ''] = row.value_num.replace('-', '').split('.');
        expect(
          BigInt(`${row.value_num.startsWith('-') ? '-' : ''}${whole}${frac.padEnd(-row.scale, '0')}`),
        ).toBe(int);
      }
      expect(int % 10n === 0n && int !== 0n).toBe(false);
    }
  });

  it('keeps negative values exact', async () => {
    const block = conceptBlock(appleCompanyFacts, 'NonoperatingIncomeExpense');
    const expected = rawVal(block, '2022-09-25', '2023-09-30', '0000320193-23-000106');
    expect(expected.startsWith('-')).toBe(true);
    const r = find(
      await store.factsCore(AAPL, 'us-gaap#NonoperatingIncomeExpense'),
      (x) => x.period_key === 'duration:2022-09-25..2023-09-30',
    );
    expect(r.value_num).toBe(expected);
    expect(r.value_scaled_int).toBe(expected.replace(/0+$/, ''));
  });

  it('a later filing that restates a value wins; one that repeats it does not', async () => {
    // AccumulatedOtherComprehensiveIncomeLossNetOfTax at 2008-09-27: the 10-K reported one value, the
    // 10-K/A of 2010-01-25 restated it.
    const block = conceptBlock(appleCompanyFacts, 'AccumulatedOtherComprehensiveIncomeLossNetOfTax');
    const original = rawVal(block, null, '2008-09-27', '0001193125-09-214859');
    const restated = rawVal(block, null, '2008-09-27', '0001193125-10-012091');
    expect(restated).not.toBe(original);
    const r = find(
      await store.factsCore(AAPL, 'us-gaap#AccumulatedOtherComprehensiveIncomeLossNetOfTax'),
      (x) => x.period_key === 'instant:2008-09-27',
    );
    expect(r).toMatchObject({
      value_num: restated,
      source_accession: '0001193125-10-012091',
      source_form_type: '10-K/A',
      source_is_amendment: true,
      source_is_current_filing_period: false,
      source_filed_at: '2010-01-25',
    });
    // FY2024 revenue is repeated unchanged as a comparative in the FY2025 10-K: the original stays.
    const repeated = rawVal(
      conceptBlock(appleCompanyFacts, 'RevenueFromContractWithCustomerExcludingAssessedTax'),
      '2023-10-01',
      '2024-09-28',
      '0000320193-25-000079',
    );
    const fy = find(await store.factsCore(AAPL, REVENUE), (x) => x.period_key === FY2024);
    expect(repeated).toBe(fy.value_num);
    expect(fy.source_accession).toBe('0000320193-24-000123');
  });

  it('orders rows newest period first and keeps fact keys unique', async () => {
    for (const cik of [AAPL, '0001018724']) {
      const rows = await store.factsFull(cik);
      for (let i = 1; i < rows.length; i += 1)
        expect((rows[i - 1] as FactRow).period_end >= (rows[i] as FactRow).period_end).toBe(true);
      expect(new Set(rows.map((r) => r.fact_key)).size).toBe(rows.length);
    }
  });

  it('facts/core derives Q4 = FY − 9M YTD exactly and flags it', async () => {
    const block = conceptBlock(appleCompanyFacts, 'RevenueFromContractWithCustomerExcludingAssessedTax');
    const fy = BigInt(rawVal(block, '2023-10-01', '2024-09-28', '0000320193-24-000123'));
    const nineMonths = BigInt(rawVal(block, '2023-10-01', '2024-06-29', '0000320193-24-000081'));
    const core = await store.factsCore(AAPL, REVENUE);
    const q4 = find(core, (x) => x.period_key === 'duration:2024-06-30..2024-09-28');
    expect(q4.value_num).toBe((fy - nineMonths).toString());
    expect(q4).toMatchObject({
      is_derived: true,
      derivation: 'FY - 9M YTD',
      source_accession: '0000320193-24-000123',
      evidence_key: null,
    });
    expect(find(core, (x) => x.period_key === FY2024).is_derived).toBe(false);
    // facts/full never holds derived rows.
    expect(
      (await store.factsFull(AAPL, REVENUE)).some((x) => x.period_key === 'duration:2024-06-30..2024-09-28'),
    ).toBe(false);
  });

  it('facts/latest has one row per consolidated series', async () => {
    const latest = await store.factsLatest(AAPL);
    expect(new Set(latest.map((r) => r.series_key)).size).toBe(latest.length);
    expect(latest.every((r) => r.is_consolidated)).toBe(true);
    const rev = find(latest, (r) => r.metric_id === REVENUE && r.unit_signature === 'monetary:USD');
    const all = (await store.factsCore(AAPL, REVENUE)).filter((r) => r.series_key === rev.series_key);
    expect(all.every((r) => r.period_end <= rev.period_end)).toBe(true);
  });
});

describe('dimensional rows and evidence', () => {
  it("Apple's FY2024 10-K iPhone revenue slice, with the displayed figure at the evidence offsets", async () => {
    const full = await store.factsFull(AAPL, REVENUE);
    const iphone = find(
      full,
      (r) => r.dims_key === 'srt:ProductOrServiceAxis=aapl:IPhoneMember' && r.period_key === FY2024,
    );
    expect(iphone).toMatchObject({
      is_consolidated: false,
      axis_types: ['srt:ProductOrServiceAxis'],
      dims_path: 'srt:ProductOrServiceAxis/aapl:IPhoneMember',
      source_accession: '0000320193-24-000123',
    });
    // Member label from the bundled label linkbase (aapl-20250329_lab.xml).
    expect(raw('filings/AAPL/0000320193-25-000057/aapl-20250329_lab.xml')).toContain('>iPhone<');
    expect(iphone.dimension_path_label).toContain('iPhone');
    const loc = await store.evidenceLocation(String(iphone.evidence_key));
    expect(loc?.documentPath).toBe('filings/AAPL/aapl-10-k-2024-11-01.html');
    const doc = readFileSync(join(DATA, 'filings/AAPL/aapl-10-k-2024-11-01.html.gz'));
    const bytes = gunzipSync(doc)
      .subarray(loc?.start ?? 0, loc?.end ?? 0)
      .toString('utf8');
    expect(BigInt(bytes.replace(/,/g, '')) * 10n ** 6n).toBe(BigInt(iphone.value_num));
    expect(
      full
        .filter((r) => !r.is_consolidated)
        .every((r) => r.dims_key !== null && (r.axis_types as string[]).length > 0),
    ).toBe(true);
    expect(full.filter((r) => r.is_consolidated).every((r) => r.dims_key === null)).toBe(true);
  });

  it('evidence of FY2024 revenue points at the bytes "391,035" of the raw 10-K', async () => {
    const r = find(await store.factsCore(AAPL, REVENUE), (x) => x.period_key === FY2024);
    const rows = await store.evidence(AAPL, REVENUE);
    const e = rows.find((x) => x.evidence_key === r.evidence_key);
    expect(e).toBeDefined();
    if (e === undefined) return;
    expect(e).toMatchObject({
      locator_type: 'ixbrl',
      source_accession: '0000320193-24-000123',
      document_name: 'aapl-20240928.htm',
      document_url: 'https://www.sec.gov/Archives/edgar/data/320193/000032019324000123/aapl-20240928.htm',
      section_title: 'CONSOLIDATED STATEMENTS OF OPERATIONS',
      viewer_url: `/viewer/evidence/${e.evidence_key}`,
      filing_url: '/viewer/document/filings/AAPL/aapl-10-k-2024-11-01.html',
    });
    const doc = await store.readDocument('filings/AAPL/aapl-10-k-2024-11-01.html');
    expect(doc.subarray(e.html_start_offset ?? 0, e.html_end_offset ?? 0).toString('utf8')).toBe('391,035');
    expect(e.snippet_text).toContain('391,035');
    const p = e.highlight_payload_json ?? {};
    expect(p).toMatchObject({
      locator_type: 'ixbrl',
      html_start_offset: e.html_start_offset,
      html_end_offset: e.html_end_offset,
    });
    // The payload's node id and contextRef are the tag around those bytes.
    const before = doc.subarray(0, e.html_start_offset ?? 0).toString('latin1');
    const open = before.slice(before.lastIndexOf('<ix:nonFraction'));
    expect(open).toContain(`id="${String(p.ix_node_id)}"`);
    expect(open).toContain(`contextRef="${String(p.context_ref)}"`);
    expect(typeof p.table_fingerprint).toBe('string');
    expect(typeof p.row_index).toBe('number');
    expect(typeof p.column_index).toBe('number');
  });

  it('every ixbrl evidence of Apple points at its figure, and the figure × 10^scale is the value', async () => {
    /** Exact decimal text → [integer, exponent] without floats. */
    const rational = (text: string): [bigint, number] => {
      const [whole = '', frac = ''] = text.replace('-', '').split('.');
      const n = BigInt(`${whole}${frac}` || '0');
      return [text.startsWith('-') ? -n : n, -frac.length];
    };
    const same = (a: [bigint, number], b: [bigint, number]): boolean => {
      const e = Math.min(a[1], b[1]);
      return a[0] * 10n ** BigInt(a[1] - e) === b[0] * 10n ** BigInt(b[1] - e);
    };
    const docs = new Map<string, Buffer>();
    let checked = 0;
    for (const e of await store.evidence(AAPL)) {
      if (e.locator_type !== 'ixbrl') continue;
      const p = e.highlight_payload_json as Record<string, unknown>;
      const path = String(e.filing_url).replace('/viewer/document/', '');
      const doc = docs.get(path) ?? gunzipSync(readFileSync(join(DATA, `${path}.gz`)));
      docs.set(path, doc);
      const bytes = doc.subarray(e.html_start_offset ?? 0, e.html_end_offset ?? 0).toString('utf8');
      if (p.format !== 'ixt:num-dot-decimal' && p.format !== null) continue;
      expect(bytes).toBe(p.displayed_text);
      const [n, exp] = rational(bytes.replace(/,/g, ''));
      const expected: [bigint, number] = [p.sign === '-' ? -n : n, exp + Number(p.scale)];
      expect(same(expected, rational(String(e.value_num))), `${e.evidence_key} ${bytes}`).toBe(true);
      checked += 1;
    }
    expect(checked).toBeGreaterThan(1000);
  });

  it('evidence is newest filing first; facts without a bundled document get xbrl with null offsets', async () => {
    const rows = await store.evidence(AAPL);
    for (let i = 1; i < rows.length; i += 1)
      expect((rows[i - 1]?.source_filed_at ?? '') >= (rows[i]?.source_filed_at ?? '')).toBe(true);
    const xbrl = rows.find((e) => e.source_accession === '0001193125-10-012091');
    expect(xbrl).toMatchObject({
      locator_type: 'xbrl',
      html_start_offset: null,
      html_end_offset: null,
      viewer_url: null,
    });
    expect(xbrl?.document_url).toMatch(
      /^https:\/\/www\.sec\.gov\/Archives\/edgar\/data\/320193\/000119312510012091\//,
    );
  });

  it('reads classic XBRL instances (MSFT 10-K FY2015) with their dimensional contexts', async () => {
    const xml = raw('filings/MSFT/msft-20150630.xml');
    const ctx =
      /<context id="([^"]+)">\s*<entity>\s*<identifier[^>]*>0000789019<\/identifier>\s*<\/entity>\s*<period>\s*<startDate>2014-07-01<\/startDate>\s*<endDate>2015-06-30<\/endDate>/.exec(
        xml,
      )?.[1];
    expect(ctx).toBeDefined();
    const val = new RegExp(`<us-gaap:SalesRevenueNet contextRef="${ctx}"[^>]*>([^<]+)<`).exec(xml)?.[1];
    expect(val).toBeDefined();
    const rows = await store.factsFull('0000789019', 'us-gaap#SalesRevenueNet');
    const r = find(rows, (x) => x.is_consolidated && x.period_key === 'duration:2014-07-01..2015-06-30');
    expect(r.value_num).toBe(val);
    expect(r.source_accession).toBe('0001193125-15-272806');
    expect(rows.some((x) => !x.is_consolidated)).toBe(true);
  });

  it('names a stand-in accession when no bundled file records it (META 10-K)', async () => {
    const rows = await store.factsFull('0001326801');
    expect(rows.length).toBeGreaterThan(0);
    expect(new Set(rows.map((r) => r.source_accession))).toEqual(
      new Set(['local:meta-10-k-2025-01-30.html']),
    );
    expect(rows.every((r) => r.source_filed_at === '2025-01-30')).toBe(true);
  });
});

describe('catalogs and series', () => {
  it('series catalog, metadata and immutable blobs agree with the fact rows', async () => {
    const catalog = await store.seriesCatalog(AAPL, REVENUE);
    const full = await store.factsFull(AAPL, REVENUE);
    expect(catalog.length).toBe(new Set(full.map((r) => r.series_key)).size);
    const consolidated = catalog.find((c) => c.dims_key === null && c.unit_signature === 'monetary:USD');
    expect(consolidated).toBeDefined();
    const id = String(consolidated?.series_id);
    const meta = await store.seriesById(id);
    const points = full.filter((r) => r.series_key === consolidated?.series_key);
    expect(meta?.point_count).toBe(points.length);
    expect(meta?.serving.blob_url).toBe(`/s/series/${id}/${meta?.serving.series_version}`);
    const blob = await store.seriesBlob(id, meta?.serving.series_version ?? -1);
    expect((blob?.points as unknown[]).length).toBe(points.length);
    expect(await store.seriesBlob(id, (meta?.serving.series_version ?? 0) + 1)).toBeUndefined();
    expect(await store.seriesById('s_0000320193_0000000000000000')).toBeUndefined();
  });

  it('dims catalog lists the slices with flags', async () => {
    const dims = await store.dimsCatalog(AAPL, REVENUE);
    const product = dims.find((d) => d.dims_key === 'srt:ProductOrServiceAxis=aapl:IPhoneMember');
    expect(product).toMatchObject({
      is_product_like: true,
      is_geographic_like: false,
      axis_types: ['srt:ProductOrServiceAxis'],
    });
    const geo = dims.find((d) => String(d.dims_key).startsWith('srt:StatementGeographicalAxis='));
    expect(geo?.is_geographic_like).toBe(true);
    const seg = dims.find(
      (d) => d.dims_key === 'us-gaap:StatementBusinessSegmentsAxis=aapl:AmericasSegmentMember',
    );
    expect(seg).toMatchObject({ is_business_segment_like: true, is_geographic_like: true });
  });
});

describe('issuer reference', () => {
  it('comes from the submissions file and the tickers map', async () => {
    const subs = JSON.parse(raw(`submissions/CIK${AAPL}.json`)) as {
      sic: string;
      sicDescription: string;
      exchanges: string[];
      filings: { recent: { filingDate: string[] } };
    };
    const latest = [...subs.filings.recent.filingDate].sort().at(-1);
    expect(await store.issuerReference(AAPL)).toEqual({
      cik: AAPL,
      current_ticker: 'AAPL',
      issuer_name: 'Apple Inc.',
      ipo_date: null,
      exchange: subs.exchanges[0],
      sector: 'Manufacturing',
      industry: subs.sicDescription,
      sic_code: subs.sic,
      as_of_date: latest,
    });
  });
});

describe('synthetic issuers', () => {
  it('clones real companies with distinct tickers, CIKs and keys', async () => {
    const s = await loadStore({ synthetic: 3, warm: 0 });
    try {
      const syn = s.companies().filter((c) => c.synthetic);
      expect(syn.map((c) => c.ticker)).toEqual(['SYN0001', 'SYN0002', 'SYN0003']);
      const tickers = JSON.parse(raw('reference/company_tickers.json')) as Record<
        string,
        { cik_str: number }
      >;
      const mapCiks = new Set(Object.values(tickers).map((t) => String(t.cik_str).padStart(10, '0')));
      for (const c of syn) {
        expect(Number(c.cik)).toBeGreaterThanOrEqual(9_000_000_001);
        expect(mapCiks.has(c.cik)).toBe(false);
        expect(c.name).toMatch(/\(synthetic clone of .+\)$/);
      }
      const clone = syn[0];
      const source = s
        .companies()
        .find((c) => !c.synthetic && clone?.name.endsWith(`(synthetic clone of ${c.name})`));
      const a = await s.factsFull(source?.cik ?? '');
      const b = await s.factsFull(clone?.cik ?? '');
      expect(b.length).toBe(a.length);
      expect(b.map((r) => r.value_num)).toEqual(a.map((r) => r.value_num));
      expect(b.every((r) => r.cik === clone?.cik && r.current_ticker === clone.ticker)).toBe(true);
      expect(b[0]?.fact_key).not.toBe(a[0]?.fact_key);
      expect(s.resolve({ ticker: 'syn0002' })?.synthetic).toBe(true);
      // Every lookup by a clone's key lands on the clone, not on its source.
      const withEvidence = b.find((r) => r.evidence_key !== null);
      const loc = await s.evidenceLocation(String(withEvidence?.evidence_key));
      expect(loc?.evidence).toMatchObject({
        cik: clone?.cik,
        fact_key: withEvidence?.fact_key,
        evidence_key: withEvidence?.evidence_key,
      });
      const cat = (await s.seriesCatalog(clone?.cik ?? ''))[0];
      const meta = await s.seriesById(String(cat?.series_id));
      expect(meta).toMatchObject({ cik: clone?.cik, series_key: cat?.series_key, company_name: clone?.name });
      const blob = await s.seriesBlob(String(cat?.series_id), meta?.serving.series_version ?? -1);
      const keys = new Set(b.filter((r) => r.series_key === cat?.series_key).map((r) => r.fact_key));
      expect((blob?.points as { fact_key: string }[]).every((p) => keys.has(p.fact_key))).toBe(true);
      expect((await s.issuerReference(clone?.cik ?? '')).issuer_name).toBe(clone?.name);
    } finally {
      await s.close();
    }
  });

  it('SYNBIG serves exactly N generated rows without materialising them', async () => {
    const s = await loadStore({ syntheticLargeRows: 40_000, warm: 0 });
    try {
      const big = s.resolve({ ticker: 'SYNBIG' });
      expect(big?.synthetic).toBe(true);
      const rows = await s.factsFull(big?.cik ?? '');
      expect(rows.length).toBe(40_000);
      let n = 0;
      let prev = '9999-12-31';
      const keys = new Set<string>();
      for (const r of rows) {
        n += 1;
        expect(r.period_end <= prev).toBe(true);
        prev = r.period_end;
        keys.add(r.fact_key);
      }
      expect(n).toBe(40_000);
      expect(keys.size).toBe(40_000);
      expect(JSON.parse(JSON.stringify(rows.slice(0, 3)))).toHaveLength(3);
    } finally {
      await s.close();
    }
  });
});

describe('other data dirs', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ffx-data-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  async function layout(name: string, files: Record<string, string>): Promise<string> {
    const root = join(dir, name);
    for (const [rel, text] of Object.entries(files)) {
      await mkdir(join(root, rel, '..'), { recursive: true });
      await writeFile(join(root, rel), text);
    }
    return root;
  }

  it('stops on a missing dir, an empty dir and unparsable JSON, naming what is wrong', async () => {
    await expect(loadStore({ dataDir: join(dir, 'nope') })).rejects.toMatchObject({
      code: 'DATA_INVALID',
      message: expect.stringContaining('nope'),
    });
    const empty = await layout('empty', { 'README.txt': 'x' });
    await expect(loadStore({ dataDir: empty })).rejects.toThrow(/no company data/);
    const broken = await layout('broken', { 'companyfacts/CIK0000000001.json': '{"cik":1,"facts":{' });
    const err: unknown = await loadStore({ dataDir: broken }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EmulatorDataError);
    expect((err as EmulatorDataError).message).toContain('CIK0000000001.json');
    expect((err as EmulatorDataError).code).toBe('DATA_INVALID');
  });

  it('keeps values beyond 2^53 exact and takes byte offsets in multi-byte UTF-8 documents', async () => {
    const big = '9007199254740993123';
    const facts = `{"cik":1,"entityName":"Test Co","facts":{"us-gaap":{"Revenues":{"label":"Revenues","units":{"USD":[{"start":"2024-01-01","end":"2024-12-31","val":${big},"accn":"0000000001-25-000001","fy":2024,"fp":"FY","form":"10-K","filed":"2025-02-01"}]}}}}}`;
    const prefix = '<p>Umsätze — “quoted” €</p>';
    const html = `<html><body><div style="display:none"><ix:header><ix:hidden><ix:nonNumeric contextRef="c1" name="dei:DocumentType" id="f-2">10-K</ix:nonNumeric><ix:nonNumeric contextRef="c1" name="dei:DocumentPeriodEndDate" id="f-3">December 31, 2024</ix:nonNumeric><ix:nonNumeric contextRef="c1" name="dei:DocumentFiscalYearFocus" id="f-4">2024</ix:nonNumeric><ix:nonNumeric contextRef="c1" name="dei:DocumentFiscalPeriodFocus" id="f-5">FY</ix:nonNumeric><ix:nonNumeric contextRef="c1" name="dei:EntityCentralIndexKey" id="f-6">0000000001</ix:nonNumeric></ix:hidden><ix:resources><xbrli:context id="c1"><xbrli:entity><xbrli:identifier scheme="http://www.sec.gov/CIK">0000000001</xbrli:identifier></xbrli:entity><xbrli:period><xbrli:startDate>2024-01-01</xbrli:startDate><xbrli:endDate>2024-12-31</xbrli:endDate></xbrli:period></xbrli:context><xbrli:unit id="usd"><xbrli:measure>iso4217:USD</xbrli:measure></xbrli:unit></ix:resources></ix:header></div>${prefix}<table><tr><td>Total</td><td><ix:nonFraction unitRef="usd" contextRef="c1" decimals="-6" name="us-gaap:CostOfRevenue" format="ixt:num-dot-decimal" scale="6" sign="-" id="f-1">1,234.5</ix:nonFraction></td></tr></table></body></html>`;
    const root = await layout('custom', {
      'companyfacts/CIK0000000001.json': facts,
      'filings/TEST/test-10-k-2025-02-01.htm': html,
    });
    const s = await loadStore({ dataDir: root, warm: 0 });
    try {
      expect(s.companies().map((c) => c.cik)).toEqual(['0000000001']);
      const c = s.companies()[0];
      expect(c?.name).toBe('Test Co');
      const rev = find(await s.factsFull('0000000001', 'us-gaap#Revenues'), () => true);
      expect(rev.value_num).toBe(big);
      expect(rev.value_scaled_int).toBe(big);
      const cost = find(await s.factsFull('0000000001', 'us-gaap#CostOfRevenue'), () => true);
      expect(cost).toMatchObject({
        value_num: '-1234500000',
        value_scaled_int: '-12345',
        scale: 5,
        source_accession: '0000000001-25-000001',
      });
      const loc = await s.evidenceLocation(String(cost.evidence_key));
      const bytes = Buffer.from(html, 'utf8');
      expect(bytes.subarray(loc?.start ?? 0, loc?.end ?? 0).toString('utf8')).toBe('1,234.5');
      expect(loc?.start).toBe(bytes.indexOf('1,234.5'));
      expect(loc?.start).not.toBe(html.indexOf('1,234.5'));
    } finally {
      await s.close();
    }
  });
});
