/**
 * The bundled filing documents the search index is built from: every `*.htm`/`*.html` (optionally
 * `.gz`) under `<dataDir>/filings/<TICKER>/`, with the filing metadata a chunk needs (form, period,
 * accession, filing date). Metadata comes from the document's own iXBRL cover facts, then the
 * bundled submissions and companyfacts files; nothing is invented (see docs/emulator.md, Search).
 */
import { readdir, readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { gunzip } from 'node:zlib';
import { promisify } from 'node:util';
import { decodeEntities } from '../data/xbrl-common.js';

const gunzipAsync = promisify(gunzip);

export interface FilingDocument {
  /** Ticker folder the document was bundled under (upper case). */
  ticker: string;
  /** Zero-padded 10-digit CIK from dei:EntityCentralIndexKey. */
  cik: string;
  /** dei:EntityRegistrantName. */
  registrantName: string | null;
  /** Path relative to the data dir with `/` separators and without `.gz` (the viewer's document path). */
  path: string;
  /** Absolute path of the file on disk (may end in `.gz`). */
  file: string;
  /** dei:DocumentType, e.g. `10-K`, `10-Q`. */
  form: string;
  /** dei:DocumentPeriodEndDate as YYYY-MM-DD, or null when unparseable. */
  periodEnd: string | null;
  /** Accession number, or `local:<file name>` when no bundled file names it. */
  accession: string;
  /** Filing date YYYY-MM-DD, or null when no bundled source gives it. */
  filedAt: string | null;
  /** Where accession and filedAt came from, for docs and debugging. */
  metadataSource: 'folder' | 'submissions' | 'companyfacts' | 'file-name' | 'none';
}

const ACCESSION_RE = /^\d{10}-\d{2}-\d{6}$/;
const DOC_RE = /\.html?(\.gz)?$/i;
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

/**
 * Placeholder for a document whose accession no bundled file records: `local:<file name>`, the
 * same stand-in the data layer (src/emulator/data/documents.ts) uses, so facts and chunks agree.
 */
export function localAccession(rel: string): string {
  return `local:${(rel.split('/').pop() ?? rel).replace(/\.gz$/i, '')}`;
}

/** Reads a bundled file, transparently gunzipping `.gz`. */
export async function readMaybeGz(file: string): Promise<Buffer> {
  const buf = await readFile(file);
  return file.endsWith('.gz') ? gunzipAsync(buf) : buf;
}

/** Finds `name` or `name.gz` in `dir`; undefined when neither exists. */
async function readJsonVariant(dir: string, name: string): Promise<unknown> {
  for (const candidate of [name, `${name}.gz`]) {
    try {
      return JSON.parse((await readMaybeGz(join(dir, candidate))).toString('utf8')) as unknown;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw err;
    }
  }
  return undefined;
}

async function walk(dir: string): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const out: string[] = [];
  for (const e of entries) {
    const full = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await walk(full)));
    else if (DOC_RE.test(e.name)) out.push(full);
  }
  return out.sort();
}

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

interface FilingRef {
  accession: string;
  filedAt: string;
  form: string;
  reportDate: string | null;
}

/** Filings of one CIK named by its submissions files (recent list and overflow pages). */
async function submissionRefs(dataDir: string, cik: string): Promise<FilingRef[]> {
  const subs: FilingRef[] = [];
  const subDir = join(dataDir, 'submissions');
  let subNames: string[] = [];
  try {
    subNames = (await readdir(subDir)).filter((n) => n.startsWith(`CIK${cik}`));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  for (const name of subNames) {
    const json = JSON.parse((await readMaybeGz(join(subDir, name))).toString('utf8')) as Record<
      string,
      unknown
    >;
    const recent = (json.filings as { recent?: unknown } | undefined)?.recent ?? json;
    const cols = recent as Record<string, unknown[] | undefined>;
    const acc = cols.accessionNumber ?? [];
    for (let i = 0; i < acc.length; i++) {
      const accession = acc[i];
      const filedAt = cols.filingDate?.[i];
      const form = cols.form?.[i];
      if (typeof accession !== 'string' || typeof filedAt !== 'string' || typeof form !== 'string') continue;
      const rd = cols.reportDate?.[i];
      subs.push({ accession, filedAt, form, reportDate: typeof rd === 'string' && rd ? rd : null });
    }
  }
  return subs;
}

type CompanyFactsJson = { facts?: Record<string, Record<string, { units?: Record<string, unknown[]> }>> };

/**
 * The filing a companyfacts file names for a document: the point naming `accession` (when known),
 * else the earliest-filed point of `form` ending on `periodEnd` (later filings repeat the period as
 * a comparative; the first one to report it is the document's own filing).
 */
function companyFactsRef(
  cf: CompanyFactsJson | undefined,
  form: string,
  accession: string | null,
  periodEnd: string | null,
): FilingRef | undefined {
  let best: FilingRef | undefined;
  for (const taxonomy of Object.values(cf?.facts ?? {})) {
    for (const concept of Object.values(taxonomy)) {
      for (const points of Object.values(concept.units ?? {})) {
        for (const p of points as Array<Record<string, unknown>>) {
          const { accn, filed, end } = p;
          if (typeof accn !== 'string' || typeof filed !== 'string') continue;
          const hit = accession !== null ? accn === accession : p.form === form && end === periodEnd;
          if (!hit) continue;
          const ref = {
            accession: accn,
            filedAt: filed,
            form,
            reportDate: typeof end === 'string' ? end : null,
          };
          if (accession !== null) return ref;
          if (!best || filed < best.filedAt) best = ref;
        }
      }
    }
  }
  return best;
}

/**
 * Lists the bundled filing documents under `<dataDir>/filings`, sorted by ticker then path.
 * Documents without iXBRL cover facts (no dei:EntityCentralIndexKey) are skipped.
 */
export async function listFilingDocuments(dataDir: string): Promise<FilingDocument[]> {
  const files = await walk(join(dataDir, 'filings'));
  const subsByCik = new Map<string, Promise<FilingRef[]>>();
  const factsByCik = new Map<string, Promise<CompanyFactsJson | undefined>>();
  const docs: FilingDocument[] = [];
  for (const file of files) {
    const rel = relative(dataDir, file).split(sep).join('/');
    const parts = rel.split('/');
    const ticker = (parts[1] ?? '').toUpperCase();
    // The iXBRL cover facts (ix:header) sit near the start of the document.
    const html = (await readMaybeGz(file)).toString('latin1');
    const cikRaw = deiValue(html, 'EntityCentralIndexKey');
    if (!cikRaw || !/^\d+$/.test(cikRaw)) continue;
    const cik = cikRaw.padStart(10, '0');
    const form = deiValue(html, 'DocumentType') ?? 'unknown';
    const periodEnd = parseLongDate(deiValue(html, 'DocumentPeriodEndDate'));
    let subsP = subsByCik.get(cik);
    if (!subsP) subsByCik.set(cik, (subsP = submissionRefs(dataDir, cik)));
    const subs = await subsP;
    const folder = parts.slice(2, -1).find((p) => ACCESSION_RE.test(p));
    const nameDate = /(\d{4}-\d{2}-\d{2})\.html?(\.gz)?$/i.exec(rel)?.[1] ?? null;
    let accession: string | null = folder ?? null;
    let filedAt: string | null = null;
    let source: FilingDocument['metadataSource'] = folder ? 'folder' : 'none';
    const sub = subs.find((r) =>
      accession ? r.accession === accession : r.form === form && r.reportDate === periodEnd,
    );
    if (sub) {
      accession = sub.accession;
      filedAt = sub.filedAt;
      if (source === 'none') source = 'submissions';
    } else {
      // Only documents the submissions do not name pay for parsing the (large) companyfacts file.
      let cfP = factsByCik.get(cik);
      if (!cfP) {
        cfP = readJsonVariant(join(dataDir, 'companyfacts'), `CIK${cik}.json`) as Promise<
          CompanyFactsJson | undefined
        >;
        factsByCik.set(cik, cfP);
      }
      const fact = companyFactsRef(await cfP, form, accession, periodEnd);
      if (fact) {
        accession = fact.accession;
        filedAt = fact.filedAt;
        if (source === 'none') source = 'companyfacts';
      }
    }
    if (!filedAt && nameDate) {
      filedAt = nameDate;
      if (source === 'none') source = 'file-name';
    }
    docs.push({
      ticker,
      cik,
      registrantName: deiValue(html, 'EntityRegistrantName'),
      path: rel.replace(/\.gz$/i, ''),
      file,
      form,
      periodEnd,
      accession: accession ?? localAccession(rel),
      filedAt,
      metadataSource: source,
    });
  }
  return docs;
}
