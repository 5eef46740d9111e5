/**
 * Bundled filing documents of one company: which files are inline XBRL documents or classic XBRL
 * instances, parsed, with the filing each belongs to (filing-identity.ts works that out, for the
 * search layer too).
 */
import { basename } from 'node:path';
import { readDataFile, type DataFile } from './files.js';
import { isInlineXbrl, parseInlineXbrl, type ParsedFilingDocument } from './ixbrl.js';
import { isXbrlInstance, parseXbrlInstance } from './instance.js';
import { parseLabelLinkbase } from '../fields/index.js';
import type { CompanyFacts, Submissions } from './sec-json.js';
import {
  edgarDocumentUrl,
  edgarFilingIndexUrl,
  filedAtIsRecorded,
  identifyFiling,
  type ReadmeCatalogEntry,
} from './filing-identity.js';

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
  const id = identifyFiling(
    f.rel,
    { form: dei.documentType, periodEnd: dei.periodEnd, fiscalYear: dei.fiscalYear, fiscalPeriod: dei.fiscalPeriod },
    { submissions: src.submissions?.filings ?? [], companyfacts: src.companyfacts, readme: src.readme },
    { head, coverDate: () => coverDate(parsed) },
  );
  const sub = id.submission;
  const form = dei.documentType;
  const accessionResolved = id.accessionSource !== 'none';
  const edgarName = (parsed.kind === 'ixbrl' ? sub?.primaryDocument : undefined) ?? src.readme.get(f.rel)?.secName ?? null;
  return {
    path: f.rel,
    file: f,
    kind: parsed.kind,
    cik: src.cik,
    accession: id.accession,
    accessionResolved,
    formType: form ?? sub?.form ?? null,
    isAmendment: form !== null ? form.endsWith('/A') || dei.amendment === true : dei.amendment,
    // A document no source dates at all (not even a period end) keeps the epoch, flagged estimated.
    filedAt: id.filedAt ?? '1970-01-01',
    filedAtEstimated: !filedAtIsRecorded(id.filedAtSource),
    periodEnd: dei.periodEnd ?? sub?.reportDate ?? null,
    fiscalYear: dei.fiscalYear,
    fiscalPeriod: dei.fiscalPeriod,
    documentName: edgarName ?? basename(f.rel),
    documentNameKnown: edgarName !== null,
    documentUrl: !accessionResolved
      ? null
      : edgarName !== null
        ? edgarDocumentUrl(src.cik, id.accession, edgarName)
        : edgarFilingIndexUrl(src.cik, id.accession),
    parsed,
  };
}
