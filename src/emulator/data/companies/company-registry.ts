/**
 * The company universe of a data dir, built at start-up from cheap reads: the tickers map, the
 * submissions files (small) and, for validation, every companyfacts file (parsed once; the parsed
 * form is kept only while it fits the inputs cache). A company exists when it has companyfacts,
 * submissions or a filings/<TICKER>/ folder; tickers of the map without any data are not served.
 */
import type { Logger } from 'pino';
import { EmulatorDataError } from '../../errors.js';
import { readDataFile, type DataFile, type DataLayout } from '../sec/index.js';
import { parseReadmeCatalog, type ReadmeCatalogEntry } from '../sec/index.js';
import {
  parseCompanyFacts,
  parseSubmissions,
  parseTickers,
  type CompanyFacts,
  type Submissions,
  type TickerEntry,
} from '../sec/index.js';

export interface RealCompany {
  cik: string;
  ticker: string | null;
  tickers: string[];
  name: string;
  companyfactsFile: DataFile | undefined;
  submissions: Submissions | null;
  filingFiles: DataFile[];
  /** Size of companyfacts + filings on disk (bytes), to find the largest company cheaply. */
  dataBytes: number;
}

export interface Registry {
  companies: RealCompany[];
  /** companyfacts parsed during validation, kept when they are small enough to hold (≤ 64 MB on disk). */
  preparsed: Map<string, CompanyFacts>;
  tickersMap: TickerEntry[];
  readme: Map<string, ReadmeCatalogEntry>;
}

async function peekCik(files: readonly DataFile[]): Promise<{ cik: string; name: string | null } | undefined> {
  for (const f of files) {
    if (!/\.(html?|xml)$/i.test(f.rel) || /_(lab|pre|cal|def)\.xml$/i.test(f.rel)) continue;
    const text = (await readDataFile(f)).toString('latin1');
    const m =
      /name="dei:EntityCentralIndexKey"[^>]*>\s*(\d{1,10})\s*</.exec(text) ??
      /<dei:EntityCentralIndexKey\b[^>]*>\s*(\d{1,10})\s*</.exec(text);
    if (m?.[1]) {
      const name =
        /name="dei:EntityRegistrantName"[^>]*>([^<]*)</.exec(text)?.[1] ??
        /<dei:EntityRegistrantName\b[^>]*>([^<]*)</.exec(text)?.[1] ??
        null;
      return { cik: m[1].padStart(10, '0'), name: name?.trim() || null };
    }
  }
  return undefined;
}

export async function buildRegistry(layout: DataLayout, logger: Logger, validateCompanyFacts: boolean): Promise<Registry> {
  const tickers = await readTickersMap(layout);
  const readme = layout.readme ? parseReadmeCatalog((await readDataFile(layout.readme)).toString('utf8')) : new Map();
  const byCik = new Map<string, RealCompany>();
  const { entityNames, preparsed } = await addCompanyFacts(layout, byCik, validateCompanyFacts);
  await addSubmissions(layout, byCik, logger);
  // After submissions: a filings folder may be named by a ticker only the submissions list.
  const registrantNames = await addFilingFolders(layout, byCik, tickers.byTicker, logger);
  for (const c of byCik.values()) {
    const fromMap = (tickers.byCik.get(c.cik) ?? []).map((e) => e.ticker);
    const fromSubs = c.submissions?.tickers ?? [];
    c.tickers = [...new Set([...fromSubs, ...fromMap, ...c.tickers])];
    c.ticker = fromSubs[0] ?? fromMap[0] ?? c.tickers[0] ?? null;
    c.name =
      c.submissions?.name ??
      tickers.byCik.get(c.cik)?.[0]?.title ??
      entityNames.get(c.cik) ??
      registrantNames.get(c.cik) ??
      c.ticker ??
      `CIK ${c.cik}`;
  }
  const companies = [...byCik.values()].sort((a, b) =>
    (a.ticker ?? `~${a.cik}`).localeCompare(b.ticker ?? `~${b.cik}`),
  );
  if (companies.length === 0) {
    throw new EmulatorDataError(
      `data dir ${layout.dataDir} holds no company data (expected companyfacts/CIK##########.json, submissions/CIK##########.json or filings/<TICKER>/, optionally .gz)`,
      { code: 'DATA_INVALID' },
    );
  }
  return { companies, preparsed, tickersMap: tickers.entries, readme };
}

/** The tickers map, by CIK (every ticker of a company) and by ticker (its first entry). */
async function readTickersMap(
  layout: DataLayout,
): Promise<{ entries: TickerEntry[]; byCik: Map<string, TickerEntry[]>; byTicker: Map<string, TickerEntry> }> {
  const entries = layout.tickersFile
    ? parseTickers((await readDataFile(layout.tickersFile)).toString('utf8'), layout.tickersFile.abs)
    : [];
  const byCik = new Map<string, TickerEntry[]>();
  const byTicker = new Map<string, TickerEntry>();
  for (const e of entries) {
    const l = byCik.get(e.cik) ?? [];
    l.push(e);
    byCik.set(e.cik, l);
    if (!byTicker.has(e.ticker)) byTicker.set(e.ticker, e);
  }
  return { entries, byCik, byTicker };
}

/** The company of a CIK, opened empty on first mention. */
function companyOf(byCik: Map<string, RealCompany>, cik: string): RealCompany {
  let c = byCik.get(cik);
  if (c === undefined) {
    c = { cik, ticker: null, tickers: [], name: '', companyfactsFile: undefined, submissions: null, filingFiles: [], dataBytes: 0 };
    byCik.set(cik, c);
  }
  return c;
}

/**
 * Every companyfacts file, parsed when validating (a broken one stops the start); the parsed form
 * is kept when all of them are small enough to hold (≤ 64 MB on disk).
 */
async function addCompanyFacts(
  layout: DataLayout,
  byCik: Map<string, RealCompany>,
  validate: boolean,
): Promise<{ entityNames: Map<string, string>; preparsed: Map<string, CompanyFacts> }> {
  const entityNames = new Map<string, string>();
  const preparsed = new Map<string, CompanyFacts>();
  let totalBytes = 0;
  for (const f of layout.companyfacts.values()) totalBytes += f.bytes;
  const keep = totalBytes <= 64 * 1024 * 1024;
  for (const [cik, file] of layout.companyfacts) {
    const c = companyOf(byCik, cik);
    c.companyfactsFile = file;
    c.dataBytes += file.bytes;
    if (validate) {
      const parsed = parseCompanyFacts((await readDataFile(file)).toString('utf8'), file.abs);
      if (parsed.cik !== cik) {
        throw new EmulatorDataError(`data file ${file.abs}: cik ${parsed.cik} does not match the file name`, { code: 'DATA_INVALID' });
      }
      if (parsed.entityName !== null) entityNames.set(cik, parsed.entityName);
      if (keep) preparsed.set(cik, parsed);
    }
  }
  return { entityNames, preparsed };
}

/** Every submissions file, its overflow pages merged into the main one. */
async function addSubmissions(layout: DataLayout, byCik: Map<string, RealCompany>, logger: Logger): Promise<void> {
  for (const [cik, files] of layout.submissions) {
    let merged: Submissions | null = null;
    for (const f of files) {
      const s = parseSubmissions((await readDataFile(f)).toString('utf8'), f.abs);
      if (merged === null) {
        if (s.cik === '') {
          logger.warn({ file: f.abs }, 'submissions overflow page without its main file: ignored');
          continue;
        }
        if (s.cik !== cik) {
          throw new EmulatorDataError(`data file ${f.abs}: cik ${s.cik} does not match the file name`, { code: 'DATA_INVALID' });
        }
        merged = s;
      } else merged.filings.push(...s.filings);
    }
    if (merged !== null) companyOf(byCik, cik).submissions = merged;
  }
}

/**
 * Every filings/<TICKER>/ folder, given to the company its ticker names (tickers map, then
 * submissions), else the CIK its documents state; returns the registrant names read on the way.
 */
async function addFilingFolders(
  layout: DataLayout,
  byCik: Map<string, RealCompany>,
  mapByTicker: ReadonlyMap<string, TickerEntry>,
  logger: Logger,
): Promise<Map<string, string>> {
  const registrantNames = new Map<string, string>();
  for (const [folder, files] of layout.filings) {
    const upper = folder.toUpperCase();
    let cik = mapByTicker.get(upper)?.cik;
    if (cik === undefined) {
      for (const c of byCik.values()) if (c.submissions?.tickers.includes(upper)) cik = c.cik;
    }
    if (cik === undefined) {
      const peek = await peekCik(files);
      cik = peek?.cik;
      if (peek?.name && cik !== undefined) registrantNames.set(cik, peek.name);
    }
    if (cik === undefined) {
      logger.warn({ folder: `filings/${folder}` }, 'filings folder: company not identified (no ticker match, no dei:EntityCentralIndexKey): ignored');
      continue;
    }
    const c = companyOf(byCik, cik);
    c.filingFiles.push(...files);
    for (const f of files) c.dataBytes += f.bytes;
    if (!c.tickers.includes(upper)) c.tickers.push(upper);
  }
  return registrantNames;
}
