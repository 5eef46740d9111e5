/**
 * Which filing a bundled document belongs to: its accession number and filing date, worked out
 * once for both the data layer (facts, evidence) and the search layer (chunks), so a fact and a
 * passage of the same document always name the same filing. Resolution order, first hit wins, each
 * documented in docs/emulator.md:
 * accession: folder named like an accession › data-dir README catalog (`accn …`) › submissions
 * (form + reportDate) › companyfacts (form + fy + fp + period end) › `local:<file name>`;
 * filed date: submissions › companyfacts › date in the file name (`…-YYYY-MM-DD.html`) ›
 * `Creation date` comment › the latest cover-page (dei) date › the period end.
 */
import type { CompanyFacts, SubmissionFiling } from './sec-json.js';

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

export function edgarDocumentUrl(cik: string, accession: string, documentName: string): string {
  return `https://www.sec.gov/Archives/edgar/data/${Number.parseInt(cik, 10)}/${accession.replace(/-/g, '')}/${documentName}`;
}

export function edgarFilingIndexUrl(cik: string, accession: string): string {
  return `https://www.sec.gov/Archives/edgar/data/${Number.parseInt(cik, 10)}/${accession.replace(/-/g, '')}/${accession}-index.htm`;
}

/** Stand-in for an accession no bundled file records: `local:<file name>` (rel without `.gz`). */
export function localAccession(rel: string): string {
  return `local:${(rel.split('/').pop() ?? rel).replace(/\.gz$/i, '')}`;
}

/** The document's own cover facts (dei), as the caller read them. */
export interface CoverFacts {
  form: string | null;
  periodEnd: string | null;
  fiscalYear: string | null;
  fiscalPeriod: string | null;
}

/** What the data dir says about one company's filings. */
export interface FilingSources {
  submissions: readonly SubmissionFiling[];
  /** Null when the company has none, or when the caller has not read it (see identifyFiling). */
  companyfacts: CompanyFacts | null;
  readme: ReadonlyMap<string, ReadmeCatalogEntry>;
}

export type AccessionSource = 'folder' | 'readme' | 'submissions' | 'companyfacts' | 'none';
export type FiledAtSource =
  | 'submissions'
  | 'companyfacts'
  | 'file-name'
  | 'creation-date'
  | 'cover-date'
  | 'period-end'
  | 'none';

export interface FilingIdentity {
  /** The accession number, or `local:<file name>` when no source names it. */
  accession: string;
  accessionSource: AccessionSource;
  /** Null only when no source, not even the period end, gives a date. */
  filedAt: string | null;
  filedAtSource: FiledAtSource;
  /** The submissions record of the filing, when the submissions list it. */
  submission: SubmissionFiling | undefined;
}

const ACCESSION_RE = /^\d{10}-\d{2}-\d{6}$/;

/** Filed dates taken from a filing record; the others are estimates. */
export function filedAtIsRecorded(source: FiledAtSource): boolean {
  return source === 'submissions' || source === 'companyfacts';
}

/**
 * Identifies the filing of the document at `rel` (data-dir relative, without `.gz`). `head` is the
 * document's first bytes (for a `Creation date` comment); `coverDate` the latest dei date, asked
 * only when nothing better dates the filing. Pure: the caller reads the files.
 */
export function identifyFiling(
  rel: string,
  cover: CoverFacts,
  sources: FilingSources,
  fallback: { head?: string; coverDate?: () => string | null } = {},
): FilingIdentity {
  const fileName = rel.split('/').pop() ?? rel;
  const folder = rel.split('/').slice(2, -1).find((p) => ACCESSION_RE.test(p));
  const { form, periodEnd } = cover;

  let accession: string | null = folder ?? null;
  let accessionSource: AccessionSource = folder !== undefined ? 'folder' : 'none';
  const readme = sources.readme.get(rel)?.accession ?? null;
  if (accession === null && readme !== null) [accession, accessionSource] = [readme, 'readme'];
  if (accession === null && form !== null && periodEnd !== null) {
    let first: SubmissionFiling | undefined;
    for (const s of sources.submissions) {
      if (s.form !== form || s.reportDate !== periodEnd) continue;
      if (first === undefined || s.filingDate < first.filingDate) first = s;
    }
    if (first !== undefined) [accession, accessionSource] = [first.accession, 'submissions'];
  }
  if (accession === null && form !== null && periodEnd !== null && sources.companyfacts) {
    // Later filings repeat the period as a comparative: the earliest to report it is the document's own.
    let best: { accn: string; filed: string } | null = null;
    for (const o of sources.companyfacts.observations) {
      if (o.form !== form || o.end !== periodEnd) continue;
      if (cover.fiscalYear !== null && o.fy !== null && o.fy !== cover.fiscalYear) continue;
      if (cover.fiscalPeriod !== null && o.fp !== null && o.fp !== cover.fiscalPeriod) continue;
      if (best === null || o.filed < best.filed) best = { accn: o.accn, filed: o.filed };
    }
    if (best !== null) [accession, accessionSource] = [best.accn, 'companyfacts'];
  }

  const submission = accession !== null ? sources.submissions.find((s) => s.accession === accession) : undefined;
  let filedAt: string | null = submission?.filingDate ?? null;
  let filedAtSource: FiledAtSource = filedAt !== null ? 'submissions' : 'none';
  if (filedAt === null && accession !== null && sources.companyfacts) {
    for (const o of sources.companyfacts.observations) {
      if (o.accn === accession && (filedAt === null || o.filed < filedAt)) filedAt = o.filed;
    }
    if (filedAt !== null) filedAtSource = 'companyfacts';
  }
  const estimates: Array<[FiledAtSource, () => string | null | undefined]> = [
    ['file-name', () => /-(\d{4}-\d{2}-\d{2})\.html?$/i.exec(fileName)?.[1]],
    ['creation-date', () => /Creation date:\s*(\d{4}-\d{2}-\d{2})/.exec(fallback.head ?? '')?.[1]],
    ['cover-date', () => fallback.coverDate?.()],
    ['period-end', () => periodEnd],
  ];
  for (const [source, read] of estimates) {
    if (filedAt !== null) break;
    const v = read();
    if (typeof v === 'string') [filedAt, filedAtSource] = [v, source];
  }
  return { accession: accession ?? localAccession(rel), accessionSource, filedAt, filedAtSource, submission };
}
