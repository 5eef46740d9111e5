/**
 * One module names the filing of a bundled document for both the facts and the search chunks:
 * the resolution order (pure, no files), and agreement of the two layers over the bundled data.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { identifyFiling, type FilingSources } from '../../src/emulator/data/sec/filing-identity.js';
import { loadStore } from '../../src/emulator/data/load-store.js';
import type { SubmissionFiling } from '../../src/emulator/data/sec/sec-json.js';
import { listFilingDocuments } from '../../src/emulator/search/chunks/filing-list.js';

const DATA_DIR = fileURLToPath(new URL('../../data/sec', import.meta.url));
const cover = { form: '10-K', periodEnd: '2024-09-28', fiscalYear: '2024', fiscalPeriod: 'FY' };
const sub = (accession: string, filingDate: string, reportDate = '2024-09-28'): SubmissionFiling => ({
  accession,
  filingDate,
  reportDate,
  form: '10-K',
  primaryDocument: null,
});
const none: FilingSources = { submissions: [], companyfacts: null, readme: new Map() };

describe('identifyFiling', () => {
  it('takes an accession folder first, then the README, then the earliest submission of form and period', () => {
    const submissions = [
      sub('0000000001-24-000009', '2024-12-01'),
      sub('0000000001-24-000002', '2024-11-01'),
    ];
    const readme = new Map([['filings/X/x.html', { accession: '0000000001-24-000005', secName: null }]]);
    const folder = identifyFiling('filings/X/0000000001-24-000007/x.htm', cover, {
      ...none,
      submissions,
      readme,
    });
    expect(folder).toMatchObject({
      accession: '0000000001-24-000007',
      accessionSource: 'folder',
      filedAtSource: 'period-end',
    });
    expect(identifyFiling('filings/X/x.html', cover, { ...none, submissions, readme })).toMatchObject({
      accession: '0000000001-24-000005',
      accessionSource: 'readme',
    });
    expect(identifyFiling('filings/X/x.html', cover, { ...none, submissions })).toMatchObject({
      accession: '0000000001-24-000002',
      accessionSource: 'submissions',
      filedAt: '2024-11-01',
      filedAtSource: 'submissions',
    });
  });

  it('falls back to local:<file> and dates from the file name, a Creation date comment, the cover, the period', () => {
    expect(identifyFiling('filings/X/x-10-k-2024-10-30.html', cover, none)).toMatchObject({
      accession: 'local:x-10-k-2024-10-30.html',
      accessionSource: 'none',
      filedAt: '2024-10-30',
      filedAtSource: 'file-name',
    });
    const head = '<!-- Creation date: 2024-10-29 -->';
    expect(identifyFiling('filings/X/x.xml', cover, none, { head })).toMatchObject({
      filedAt: '2024-10-29',
      filedAtSource: 'creation-date',
    });
    expect(identifyFiling('filings/X/x.xml', cover, none, { coverDate: () => '2024-10-18' })).toMatchObject({
      filedAt: '2024-10-18',
      filedAtSource: 'cover-date',
    });
    expect(identifyFiling('filings/X/x.xml', { ...cover, periodEnd: null }, none)).toMatchObject({
      filedAt: null,
      filedAtSource: 'none',
    });
  });
});

describe('bundled documents', () => {
  it('the data layer and the search layer name the same filing for every document', async () => {
    const searched = await listFilingDocuments(DATA_DIR);
    const store = await loadStore({ dataDir: DATA_DIR });
    try {
      expect(searched.length).toBeGreaterThan(5);
      for (const s of searched) {
        const facts = (await store.filingDocuments(s.cik)).find((d) => d.path === s.path);
        expect(facts, s.path).toBeDefined();
        expect({ path: s.path, accession: s.accession, filedAt: s.filedAt }).toEqual({
          path: s.path,
          accession: facts?.accession,
          filedAt: facts?.filedAt,
        });
      }
    } finally {
      await store.close();
    }
  });
});
