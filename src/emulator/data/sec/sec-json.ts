/**
 * Parsers of the SEC JSON files: company_tickers.json, submissions and companyfacts. companyfacts
 * values arrive as their exact source text (see json.ts); the other files hold only safe integers.
 * Every structural problem names the file.
 */
import { EmulatorDataError } from '../../errors.js';
import { parseJson, parseJsonQuotingKeys } from './json.js';

export interface TickerEntry {
  cik: string;
  ticker: string;
  title: string;
}

export interface SubmissionFiling {
  accession: string;
  filingDate: string;
  reportDate: string | null;
  form: string;
  primaryDocument: string | null;
}

export interface Submissions {
  cik: string;
  name: string | null;
  tickers: string[];
  exchanges: string[];
  sic: string | null;
  sicDescription: string | null;
  fiscalYearEnd: string | null;
  filings: SubmissionFiling[];
}

/** One observation of companyfacts: one value of one concept in one unit as reported by one filing. */
export interface CompanyFactsObservation {
  taxonomy: string;
  concept: string;
  unit: string;
  start: string | null;
  end: string;
  /** Exact source text of the value. */
  val: string;
  accn: string;
  fy: string | null;
  fp: string | null;
  form: string;
  filed: string;
  frame: string | null;
}

export interface CompanyFacts {
  cik: string;
  entityName: string | null;
  /** `taxonomy#Concept` → label / description. */
  concepts: Map<string, { label: string | null; description: string | null }>;
  observations: CompanyFactsObservation[];
}

function bad(file: string, what: string): EmulatorDataError {
  return new EmulatorDataError(`data file ${file}: ${what}`, { code: 'DATA_INVALID' });
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function str(v: unknown): string | null {
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : null;
  return typeof v === 'string' && v !== '' ? v : null;
}

/** Pads a CIK given as number text or string to 10 digits. */
export function padCik(v: unknown): string | null {
  if (typeof v !== 'string' && typeof v !== 'number') return null;
  const s = String(v).trim();
  if (!/^\d{1,10}$/.test(s)) return null;
  return s.padStart(10, '0');
}

export function parseTickers(text: string, file: string): TickerEntry[] {
  const doc = parseJson(text, file);
  if (!isObject(doc)) throw bad(file, 'expected an object of {cik_str, ticker, title} entries');
  const out: TickerEntry[] = [];
  for (const [key, entry] of Object.entries(doc)) {
    if (!isObject(entry)) throw bad(file, `entry ${key} is not an object`);
    const cik = padCik(entry.cik_str);
    const ticker = str(entry.ticker);
    if (cik === null || ticker === null) throw bad(file, `entry ${key} lacks cik_str or ticker`);
    out.push({ cik, ticker: ticker.toUpperCase(), title: str(entry.title) ?? ticker });
  }
  return out;
}

function columns(recent: Record<string, unknown>, file: string): SubmissionFiling[] {
  const col = (name: string): unknown[] => {
    const v = recent[name];
    if (v === undefined) return [];
    if (!Array.isArray(v)) throw bad(file, `filings column ${name} is not an array`);
    return v;
  };
  const acc = col('accessionNumber');
  const filed = col('filingDate');
  const report = col('reportDate');
  const form = col('form');
  const doc = col('primaryDocument');
  const out: SubmissionFiling[] = [];
  for (let i = 0; i < acc.length; i += 1) {
    const accession = str(acc[i]);
    const filingDate = str(filed[i]);
    if (accession === null || filingDate === null) throw bad(file, `filing ${i} lacks accessionNumber or filingDate`);
    out.push({
      accession,
      filingDate,
      reportDate: str(report[i]),
      form: str(form[i]) ?? '',
      primaryDocument: str(doc[i]),
    });
  }
  return out;
}

/** Parses a submissions file: the main document or an overflow page (which is just the columns). */
export function parseSubmissions(text: string, file: string): Submissions {
  const doc = parseJson(text, file);
  if (!isObject(doc)) throw bad(file, 'expected a submissions object');
  if (isObject(doc.filings)) {
    const recent = doc.filings.recent;
    if (!isObject(recent)) throw bad(file, 'filings.recent is missing');
    const cik = padCik(doc.cik);
    if (cik === null) throw bad(file, 'cik is missing');
    const strings = (v: unknown): string[] =>
      Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string' && x !== '') : [];
    return {
      cik,
      name: str(doc.name),
      tickers: strings(doc.tickers).map((t) => t.toUpperCase()),
      exchanges: strings(doc.exchanges),
      sic: str(doc.sic),
      sicDescription: str(doc.sicDescription),
      fiscalYearEnd: str(doc.fiscalYearEnd),
      filings: columns(recent, file),
    };
  }
  if (Array.isArray(doc.accessionNumber)) {
    return {
      cik: '',
      name: null,
      tickers: [],
      exchanges: [],
      sic: null,
      sicDescription: null,
      fiscalYearEnd: null,
      filings: columns(doc, file),
    };
  }
  throw bad(file, 'neither a submissions document (filings.recent) nor an overflow page (accessionNumber)');
}

export function parseCompanyFacts(text: string, file: string): CompanyFacts {
  const doc = parseJsonQuotingKeys(text, file, ['val']);
  if (!isObject(doc) || !isObject(doc.facts)) throw bad(file, 'expected an object with "facts"');
  const cik = padCik(doc.cik);
  if (cik === null) throw bad(file, 'cik is missing');
  const concepts = new Map<string, { label: string | null; description: string | null }>();
  const observations: CompanyFactsObservation[] = [];
  for (const [taxonomy, byConcept] of Object.entries(doc.facts)) {
    if (!isObject(byConcept)) throw bad(file, `facts.${taxonomy} is not an object`);
    for (const [concept, def] of Object.entries(byConcept)) {
      if (!isObject(def) || !isObject(def.units)) throw bad(file, `facts.${taxonomy}.${concept}.units is missing`);
      concepts.set(`${taxonomy}#${concept}`, { label: str(def.label), description: str(def.description) });
      for (const [unit, rows] of Object.entries(def.units)) {
        if (!Array.isArray(rows)) throw bad(file, `facts.${taxonomy}.${concept}.units.${unit} is not an array`);
        for (const r of rows) {
          if (!isObject(r)) throw bad(file, `facts.${taxonomy}.${concept}.units.${unit} has a non-object row`);
          const end = str(r.end);
          const val = typeof r.val === 'string' ? r.val : null;
          const accn = str(r.accn);
          const filed = str(r.filed);
          if (end === null || val === null || accn === null || filed === null) {
            throw bad(file, `facts.${taxonomy}.${concept}.units.${unit} has a row without end/val/accn/filed`);
          }
          observations.push({
            taxonomy,
            concept,
            unit,
            start: str(r.start),
            end,
            val,
            accn,
            fy: str(r.fy),
            fp: str(r.fp),
            form: str(r.form) ?? '',
            filed,
            frame: str(r.frame),
          });
        }
      }
    }
  }
  return { cik, entityName: str(doc.entityName), concepts, observations };
}
