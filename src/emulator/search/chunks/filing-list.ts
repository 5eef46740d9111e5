/**
 * The bundled filing documents the search index is built from: every `*.htm`/`*.html` (optionally
 * `.gz`) under `<dataDir>/filings/<TICKER>/`, with the filing metadata a chunk needs (form, period,
 * accession, filing date). Metadata comes from the document's own iXBRL cover facts, then
 * data/sec/filing-identity.ts over the bundled submissions and companyfacts files, the same rules
 * the data layer uses; nothing is invented (see docs/emulator.md, Search).
 */
import { readDataFile, scanDataDir, type DataFile } from '../../data/index.js';
import {
  filedAtIsRecorded,
  identifyFiling,
  parseReadmeCatalog,
  type FilingIdentity,
  type ReadmeCatalogEntry,
} from '../../data/index.js';
import {
  parseCompanyFacts,
  parseSubmissions,
  type CompanyFacts,
  type SubmissionFiling,
} from '../../data/index.js';
import { decodeEntities } from '../../data/index.js';

/** A bundled filing as the search lists it (the data layer's FilingDocument is the parsed filing). */
export interface ListedFiling {
  /** Ticker folder the document was bundled under (upper case). */
  ticker: string;
  /** Zero-padded 10-digit CIK from dei:EntityCentralIndexKey. */
  cik: string;
  /** dei:EntityRegistrantName. */
  registrantName: string | null;
  /** Path relative to the data dir with `/` separators and without `.gz` (the viewer's document path). */
  path: string;
  /** The file on disk (may be gzipped; read it with readDataFile). */
  file: DataFile;
  /** dei:DocumentType, e.g. `10-K`, `10-Q`. */
  form: string;
  /** dei:DocumentPeriodEndDate as YYYY-MM-DD, or null when unparseable. */
  periodEnd: string | null;
  /** Accession number, or `local:<file name>` when no bundled file names it. */
  accession: string;
  /** Filing date YYYY-MM-DD, or null when no bundled source gives it. */
  filedAt: string | null;
  /** Where accession and filedAt came from, for docs and debugging. */
  metadataSource: 'folder' | 'readme' | 'submissions' | 'companyfacts' | 'file-name' | 'none';
}

const MONTHS = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];

/** Text of the first ix:nonNumeric named `dei:<name>` (nested ix elements included), tags stripped. */
export function deiValue(html: string, name: string): string | null {
  const open = new RegExp(`<ix:nonNumeric[^>]*\\bname="dei:${name}"[^>]*>`, 'i').exec(html);
  if (!open) return null;
  const from = open.index + open[0].length;
  const tagRe = /<(\/?)ix:nonNumeric\b[^>]*>/gi;
  tagRe.lastIndex = from;
  let depth = 1;
  let to = html.length;
  let m: RegExpExecArray | null;
  while ((m = tagRe.exec(html)) !== null) {
    depth += m[1] === '/' ? -1 : 1;
    if (depth === 0) {
      to = m.index;
      break;
    }
  }
  const text = decodeEntities(html.slice(from, to).replace(/<[^>]*>/g, ''))
    .replace(/[\s\u00a0]+/g, ' ')
    .trim();
  return text.length > 0 ? text : null;
}

/** `September 28, 2024` → `2024-09-28`; null for anything else. */
export function parseLongDate(text: string | null): string | null {
  if (!text) return null;
  const m = /([A-Za-z]+)\s+(\d{1,2}),?\s+(\d{4})/.exec(text);
  if (!m?.[1] || !m[2] || !m[3]) return /^\d{4}-\d{2}-\d{2}$/.test(text) ? text : null;
  const month = MONTHS.indexOf(m[1].toLowerCase());
  if (month < 0) return null;
  return `${m[3]}-${String(month + 1).padStart(2, '0')}-${m[2].padStart(2, '0')}`;
}

/**
 * Lists the bundled filing documents under `<dataDir>/filings`, sorted by ticker then path.
 * Documents without iXBRL cover facts (no dei:EntityCentralIndexKey) are skipped. A search result
 * shows only a filing date a filing record or the file name states (a cover-page estimate is null).
 */
export async function listFilingDocuments(dataDir: string): Promise<ListedFiling[]> {
  const layout = await scanDataDir(dataDir);
  const readme = layout.readme
    ? parseReadmeCatalog((await readDataFile(layout.readme)).toString('utf8'))
    : new Map<string, ReadmeCatalogEntry>();
  const subsByCik = new Map<string, Promise<SubmissionFiling[]>>();
  const factsByCik = new Map<string, Promise<CompanyFacts>>();
  const docs: ListedFiling[] = [];
  const folders = [...layout.filings.keys()].sort((a, b) => a.toUpperCase().localeCompare(b.toUpperCase()));
  for (const folder of folders) {
    for (const file of layout.filings.get(folder) ?? []) {
      if (!/\.html?$/i.test(file.rel)) continue;
      // The iXBRL cover facts (ix:header) sit near the start of the document.
      const html = (await readDataFile(file)).toString('latin1');
      const cikRaw = deiValue(html, 'EntityCentralIndexKey');
      if (!cikRaw || !/^\d+$/.test(cikRaw)) continue;
      const cik = cikRaw.padStart(10, '0');
      const form = deiValue(html, 'DocumentType');
      const cover = {
        form,
        periodEnd: parseLongDate(deiValue(html, 'DocumentPeriodEndDate')),
        fiscalYear: deiValue(html, 'DocumentFiscalYearFocus'),
        fiscalPeriod: deiValue(html, 'DocumentFiscalPeriodFocus'),
      };
      let subs = subsByCik.get(cik);
      if (!subs) subsByCik.set(cik, (subs = submissionFilings(layout.submissions.get(cik) ?? [])));
      const sources = { submissions: await subs, companyfacts: null, readme };
      let id = identifyFiling(file.rel, cover, sources);
      const cfFile = layout.companyfacts.get(cik);
      if (!filedAtIsRecorded(id.filedAtSource) && cfFile) {
        // Only documents the submissions do not date pay for parsing the (large) companyfacts file.
        let cf = factsByCik.get(cik);
        if (!cf) {
          cf = readDataFile(cfFile).then((b) => parseCompanyFacts(b.toString('utf8'), cfFile.abs));
          factsByCik.set(cik, cf);
        }
        id = identifyFiling(file.rel, cover, { ...sources, companyfacts: await cf });
      }
      const stated = filedAtIsRecorded(id.filedAtSource) || id.filedAtSource === 'file-name';
      docs.push({
        ticker: folder.toUpperCase(),
        cik,
        registrantName: deiValue(html, 'EntityRegistrantName'),
        path: file.rel,
        file,
        form: form ?? 'unknown',
        periodEnd: cover.periodEnd,
        accession: id.accession,
        filedAt: stated ? id.filedAt : null,
        metadataSource: metadataSource(id),
      });
    }
  }
  return docs;
}

/** The first source that named the accession, else the one that dated the filing. */
function metadataSource(id: FilingIdentity): ListedFiling['metadataSource'] {
  if (id.accessionSource !== 'none') return id.accessionSource;
  switch (id.filedAtSource) {
    case 'submissions':
    case 'companyfacts':
    case 'file-name':
      return id.filedAtSource;
    case 'creation-date':
    case 'cover-date':
    case 'period-end':
    case 'none':
      return 'none';
    default: {
      const never: never = id.filedAtSource;
      return never;
    }
  }
}

/** Filings named by a company's submissions files (main file and overflow pages). */
async function submissionFilings(files: readonly DataFile[]): Promise<SubmissionFiling[]> {
  const out: SubmissionFiling[] = [];
  for (const f of files)
    out.push(...parseSubmissions((await readDataFile(f)).toString('utf8'), f.abs).filings);
  return out;
}
