/**
 * Bundled filing documents of one company: which files are inline XBRL documents or classic XBRL
 * instances, and which filing each belongs to (accession, form, filed date, report period, the
 * document's EDGAR name). Resolution order, first hit wins, each documented in docs/emulator.md:
 * accession: folder named like an accession › data-dir README catalog (`accn …`) › submissions
 * (form + reportDate) › companyfacts (form + fy + fp + period end) › `local:<file name>`;
 * filed date: submissions › companyfacts › date in the file name (`…-YYYY-MM-DD.html`) ›
 * `Creation date` comment › the latest cover-page (dei) date, e.g. shares outstanding as of a day
 * shortly before filing (the last three are flagged as estimated).
 */
import { basename } from 'node:path';
import { readDataFile, type DataFile } from './files.js';
import { isInlineXbrl, parseInlineXbrl, type ParsedFilingDocument } from './ixbrl.js';
import { isXbrlInstance, parseXbrlInstance } from './instance.js';
import { parseLabelLinkbase } from './labels.js';
import type { CompanyFacts, Submissions } from './sec-json.js';

export interface ReadmeCatalogEntry {
  accession: string | null;
  secName: string | null;
}

/** `| filings/AAPL/x.html | … accn 0000320193-24-000123, SEC name aapl-20240928.htm | …` rows of a README. */
export function parseReadmeCatalog(text: string): Map<string, ReadmeCatalogEntry> {
  const out = new Map<string, ReadmeCatalogEntry>();
  for (const line of text.split('\n')) {
    const m = /^\|\s*(filings\/[^\s|]+)\s*\|(.*)$/.exec(line);
    if (!m?.[1]) continue;
    const rest = m[2] ?? '';
    const accession = /\baccn\s+(\d{10}-\d{2}-\d{6})/.exec(rest)?.[1] ?? null;
    const secName = /\bSEC name\s+([\w.-]+\.html?)/.exec(rest)?.[1] ?? null;
    out.set(m[1], { accession, secName });
  }
  return out;
}

export interface FilingDocument {
  /** Path relative to the data dir, without `.gz` (what readDocument takes). */
  path: string;
  file: DataFile;
  kind: 'ixbrl' | 'xbrl';
  cik: string;
  accession: string;
  /** False when no source named the accession and `local:<file>` stands in. */
  accessionResolved: boolean;
  formType: string | null;
  isAmendment: boolean | null;
  filedAt: string;
  /** True when the filed date is an estimate (see module comment). */
  filedAtEstimated: boolean;
  /** The filing's own report period end (dei:DocumentPeriodEndDate). */
  periodEnd: string | null;
  fiscalYear: string | null;
  fiscalPeriod: string | null;
  /** The document's file name on EDGAR (e.g. `aapl-20240928.htm`), else the bundled file name. */
  documentName: string;
  /** Whether documentName is the EDGAR name (from submissions or the README), not just the bundled one. */
  documentNameKnown: boolean;
  /**
   * https://www.sec.gov/Archives/edgar/data/<cik>/<accession without dashes>/<documentName> when
   * the EDGAR name is known, else the filing's `<accession>-index.htm`; null without an accession.
   */
  documentUrl: string | null;
  parsed: ParsedFilingDocument;
}

export function edgarDocumentUrl(cik: string, accession: string, documentName: string): string {
  return `https://www.sec.gov/Archives/edgar/data/${Number.parseInt(cik, 10)}/${accession.replace(/-/g, '')}/${documentName}`;
}

export function edgarFilingIndexUrl(cik: string, accession: string): string {
  return `https://www.sec.gov/Archives/edgar/data/${Number.parseInt(cik, 10)}/${accession.replace(/-/g, '')}/${accession}-index.htm`;
}

const ACCESSION_RE = /^\d{10}-\d{2}-\d{6}$/;
const IGNORED_RE = /(_pre|_cal|_def)\.xml$|\.xsd$|FilingSummary\.xml$|\.json$|\.(jpg|jpeg|png|gif|pdf|txt|md)$/i;

export interface CompanySources {
  cik: string;
  submissions: Submissions | null;
  companyfacts: CompanyFacts | null;
  readme: Map<string, ReadmeCatalogEntry>;
}

/** Label linkbases found among the files (merged, concept QName → label). */
export async function loadLabelLinkbases(files: readonly DataFile[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const f of files) {
    if (!/_lab\.xml$/i.test(f.rel)) continue;
    const text = (await readDataFile(f)).toString('utf8');
    for (const [k, v] of parseLabelLinkbase(text)) out.set(k, v);
  }
  return out;
}

/** Latest date of the cover-page (dei) facts, e.g. the shares-outstanding date just before filing. */
function coverDate(parsed: ParsedFilingDocument): string | null {
  let max: string | null = null;
  for (const f of parsed.facts) {
    if (!f.concept.startsWith('dei:')) continue;
    const end = parsed.contexts.get(f.contextRef)?.end;
    if (end !== undefined && (max === null || end > max)) max = end;
  }
  return max;
}

/** Reads, parses and identifies every filing document among `files` that belongs to `src.cik`. */
export async function loadFilingDocuments(files: readonly DataFile[], src: CompanySources): Promise<FilingDocument[]> {
  const docs: FilingDocument[] = [];
  for (const f of files) {
    if (IGNORED_RE.test(f.rel) || /_lab\.xml$/i.test(f.rel)) continue;
    const isHtml = /\.html?$/i.test(f.rel);
    const isXml = /\.xml$/i.test(f.rel);
    if (!isHtml && !isXml) continue;
    const buf = await readDataFile(f);
    const head = buf.subarray(0, 400_000).toString('latin1');
    let parsed: ParsedFilingDocument;
    if (isHtml && isInlineXbrl(head)) parsed = parseInlineXbrl(buf);
    else if (isXml && isXbrlInstance(head)) parsed = parseXbrlInstance(buf);
    else continue;
    if (parsed.dei.cik !== null && parsed.dei.cik !== src.cik) continue;
    docs.push(identify(f, parsed, src, head));
  }
  // A classic instance extracted from an inline document of the same filing adds nothing: drop it.
  const inlineAccessions = new Set(docs.filter((d) => d.kind === 'ixbrl').map((d) => d.accession));
  return docs.filter((d) => d.kind === 'ixbrl' || !inlineAccessions.has(d.accession));
}

function identify(f: DataFile, parsed: ParsedFilingDocument, src: CompanySources, head: string): FilingDocument {
  const { dei } = parsed;
  const fileName = basename(f.rel);
  const folder = f.rel.split('/').slice(-2, -1)[0] ?? '';
  const readme = src.readme.get(f.rel);
  const subs = src.submissions?.filings ?? [];
  const form = dei.documentType;

  let accession: string | null = ACCESSION_RE.test(folder) ? folder : (readme?.accession ?? null);
  if (accession === null && form !== null && dei.periodEnd !== null) {
    const hits = subs
      .filter((s) => s.form === form && s.reportDate === dei.periodEnd)
      .sort((a, b) => a.filingDate.localeCompare(b.filingDate));
    accession = hits[0]?.accession ?? null;
  }
  if (accession === null && form !== null && dei.periodEnd !== null && src.companyfacts) {
    let best: { accn: string; filed: string } | null = null;
    for (const o of src.companyfacts.observations) {
      if (o.form !== form || o.end !== dei.periodEnd) continue;
      if (dei.fiscalYear !== null && o.fy !== null && o.fy !== dei.fiscalYear) continue;
      if (dei.fiscalPeriod !== null && o.fp !== null && o.fp !== dei.fiscalPeriod) continue;
      if (best === null || o.filed < best.filed) best = { accn: o.accn, filed: o.filed };
    }
    accession = best?.accn ?? null;
  }
  const accessionResolved = accession !== null;
  const acc = accession ?? `local:${fileName}`;

  const sub = accession !== null ? subs.find((s) => s.accession === accession) : undefined;
  let filedAt: string | null = sub?.filingDate ?? null;
  if (filedAt === null && accession !== null && src.companyfacts) {
    for (const o of src.companyfacts.observations) {
      if (o.accn === accession && (filedAt === null || o.filed < filedAt)) filedAt = o.filed;
    }
  }
  let filedAtEstimated = false;
  if (filedAt === null) {
    filedAtEstimated = true;
    filedAt =
      /-(\d{4}-\d{2}-\d{2})\.html?$/i.exec(fileName)?.[1] ??
      /Creation date:\s*(\d{4}-\d{2}-\d{2})/.exec(head)?.[1] ??
      coverDate(parsed) ??
      dei.periodEnd ??
      '1970-01-01';
  }
  const edgarName = (parsed.kind === 'ixbrl' ? sub?.primaryDocument : undefined) ?? readme?.secName ?? null;
  const documentName = edgarName ?? fileName;
  return {
    path: f.rel,
    file: f,
    kind: parsed.kind,
    cik: src.cik,
    accession: acc,
    accessionResolved,
    formType: form ?? sub?.form ?? null,
    isAmendment: form !== null ? form.endsWith('/A') || dei.amendment === true : dei.amendment,
    filedAt,
    filedAtEstimated,
    periodEnd: dei.periodEnd ?? sub?.reportDate ?? null,
    fiscalYear: dei.fiscalYear,
    fiscalPeriod: dei.fiscalPeriod,
    documentName,
    documentNameKnown: edgarName !== null,
    documentUrl: !accessionResolved
      ? null
      : edgarName !== null
        ? edgarDocumentUrl(src.cik, acc, edgarName)
        : edgarFilingIndexUrl(src.cik, acc),
    parsed,
  };
}
