/**
 * Issuer reference rows (2.7) from submissions and the tickers map. sector is the SIC division of
 * the SIC code (the SEC's Standard Industrial Classification); industry is the SEC's sicDescription;
 * ipo_date is null (no source in the data states it); as_of_date is the latest filing date in the
 * company's data.
 */
import type { IssuerReferenceRow } from '../../store.js';
import type { Submissions } from '../sec/index.js';

const DIVISIONS: [number, number, string][] = [
  [100, 999, 'Agriculture, Forestry and Fishing'],
  [1000, 1499, 'Mining'],
  [1500, 1799, 'Construction'],
  [2000, 3999, 'Manufacturing'],
  [4000, 4999, 'Transportation, Communications, Electric, Gas and Sanitary Services'],
  [5000, 5199, 'Wholesale Trade'],
  [5200, 5999, 'Retail Trade'],
  [6000, 6799, 'Finance, Insurance and Real Estate'],
  [7000, 8999, 'Services'],
  [9100, 9729, 'Public Administration'],
  [9900, 9999, 'Nonclassifiable'],
];

export function sicDivision(sic: string | null): string | null {
  if (sic === null || !/^\d{1,4}$/.test(sic)) return null;
  const n = Number.parseInt(sic, 10);
  for (const [lo, hi, name] of DIVISIONS) if (n >= lo && n <= hi) return name;
  return null;
}

export function issuerReference(
  company: { cik: string; ticker: string | null; name: string },
  submissions: Submissions | null,
  asOfDate: string | null,
): IssuerReferenceRow {
  const tickerIndex = submissions && company.ticker !== null ? submissions.tickers.indexOf(company.ticker) : -1;
  const sic = submissions?.sic ?? null;
  return {
    cik: company.cik,
    current_ticker: company.ticker,
    issuer_name: company.name,
    ipo_date: null,
    exchange: submissions?.exchanges[tickerIndex >= 0 ? tickerIndex : 0] ?? null,
    sector: sicDivision(sic),
    industry: submissions?.sicDescription ?? null,
    sic_code: sic,
    as_of_date: asOfDate,
  };
}
