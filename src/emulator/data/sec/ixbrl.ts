/**
 * Scanner of inline XBRL documents (and, in instance.ts, classic XBRL instances). A regex/tokenizer
 * pass over the raw bytes (as latin1, so indexes are byte offsets): contexts, units, ix:nonFraction
 * facts with the byte offsets of the displayed figure, the table cell each figure sits in, the nearest
 * section heading and a snippet of text around it.
 */
import { createHash } from 'node:crypto';
import { negateDecimal, shiftDecimal, type Decimal } from '../fields/index.js';
import { parseDisplayedNumber } from './ixbrl-values.js';
import {
  decodeEntities,
  parseAttributes,
  parseContexts,
  parseHumanDate,
  parseUnits,
  visibleText,
  type DocumentDei,
  type XbrlContext,
  type XbrlUnit,
} from './xbrl-common.js';

export interface TableLocation {
  /** Ordinal of the table in the document (0-based). */
  index: number;
  /** sha256 (first 16 hex) of the table's visible text: stable across re-renders of the same table. */
  fingerprint: string;
  /** Index of the `<tr>` within the table (0-based). */
  row: number;
  /** Index of the `<td>`/`<th>` cell within the row (0-based, colspans not expanded). */
  column: number;
}

/** One numeric fact found in a filing document. */
export interface DocumentFact {
  /** QName as in the document, e.g. `us-gaap:Revenues`. */
  concept: string;
  contextRef: string;
  unitRef: string | null;
  value: Decimal;
  decimals: string | null;
  /** The element's `id`. */
  nodeId: string | null;
  /** Byte offsets [start, end) of the displayed figure in the raw document; null when not located. */
  start: number | null;
  end: number | null;
  /** Displayed text (as written, e.g. `391,035`). */
  displayed: string | null;
  format: string | null;
  scaleAttr: number;
  signNegative: boolean;
  /** Inside ix:hidden (not visible on the page). */
  hidden: boolean;
  /** Visible and inside a table (what `table` locates), known without locating the cell. */
  inTable: boolean;
  /** Evidence-only details below: inline documents compute them on first read (facts/full never does). */
  readonly table: TableLocation | null;
  readonly section: string | null;
  readonly snippet: string | null;
}

export interface ParsedFilingDocument {
  kind: 'ixbrl' | 'xbrl';
  byteLength: number;
  title: string | null;
  dei: DocumentDei;
  contexts: Map<string, XbrlContext>;
  units: Map<string, XbrlUnit>;
  facts: DocumentFact[];
  /** Facts skipped because their text could not be read as a number, for diagnostics. */
  skipped: number;
}

interface Span {
  start: number;
  end: number;
}

function tableSpans(doc: string): Span[] {
  const spans: Span[] = [];
  const stack: number[] = [];
  for (const m of doc.matchAll(/<(\/?)table\b/gi)) {
    if (m[1] === '') stack.push(m.index);
    else {
      const start = stack.pop();
      if (start !== undefined) spans.push({ start, end: m.index + m[0].length });
    }
  }
  return spans.sort((a, b) => a.start - b.start);
}

interface Heading {
  pos: number;
  text: string;
  kind: 'item' | 'sub';
}

const ITEM_RE = /^Item\s+\d{1,2}[A-C]?\.?(?:\s|$)/i;
// `Note 2 – Revenue`, `Note 7. Leases`, `Note 1 —`; not `Note 7 for further details…`.
const NOTE_RE = /^Note\s+\d{1,2}\s*(?:[.:\u2013\u2014-]|$)/i;
const STATEMENT_RE = /^(?:CONSOLIDATED|CONDENSED CONSOLIDATED)\s+[A-Z][A-Z ,'\u2019()&-]+$/;

/**
 * Whether a raw text run could be a heading: after ASCII spaces, its first visible character must be
 * I or N (Item, Note), C (CONSOLIDATED…), or hidden behind an entity or a non-ASCII byte (decoded
 * spaces). Runs that cannot are never decoded: most of a filing is body text.
 */
function mayBeHeading(raw: string): boolean {
  for (let i = 0; i < raw.length; i += 1) {
    const c = raw.charCodeAt(i);
    if (c === 32 || (c >= 9 && c <= 13)) continue;
    return c === 38 || c >= 128 || c === 73 || c === 105 || c === 78 || c === 110 || c === 67 || c === 99;
  }
  return false;
}

function runText(raw: string): string {
  return decodeEntities(Buffer.from(raw, 'latin1').toString('utf8'))
    .replace(/[\s\u00a0]+/g, ' ')
    .trim();
}

function headings(doc: string): Heading[] {
  const runs: { pos: number; raw: string; text?: string }[] = [];
  for (const m of doc.matchAll(/>([^<]+)</g)) {
    const raw = m[1] ?? '';
    if (raw.trim() === '') continue;
    runs.push({ pos: m.index + 1, raw });
  }
  const textOf = (r: { raw: string; text?: string }): string => (r.text ??= runText(r.raw));
  const out: Heading[] = [];
  for (let i = 0; i < runs.length; i += 1) {
    const r = runs[i];
    if (r === undefined || !mayBeHeading(r.raw)) continue;
    const rText = textOf(r);
    if (rText.length > 160) continue;
    const item = ITEM_RE.test(rText);
    const note = !item && NOTE_RE.test(rText);
    if (item || note) {
      let text = rText;
      // "Item 8." or "Note 1 –" alone: the title is the next text run.
      if (/^(?:Item\s+\d{1,2}[A-C]?\.?|Note\s+\d{1,2}\s*[\u2013\u2014:.-]?)$/i.test(text)) {
        const next = runs[i + 1];
        if (next !== undefined && textOf(next).length < 160) text = `${text} ${textOf(next)}`;
      }
      out.push({ pos: r.pos, text, kind: item ? 'item' : 'sub' });
    } else if (STATEMENT_RE.test(rText) && rText.length >= 14) {
      out.push({ pos: r.pos, text: rText, kind: 'sub' });
    }
  }
  return out;
}

/** Last index i with arr[i].pos <= pos (or start), -1 if none. */
function lastAtOrBefore<T>(arr: readonly T[], pos: number, key: (t: T) => number): number {
  let lo = 0;
  let hi = arr.length - 1;
  let ans = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const v = arr[mid];
    if (v !== undefined && key(v) <= pos) {
      ans = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return ans;
}

/** Range of the first and last visible character inside an element's inner HTML. */
function textRange(doc: string, from: number, to: number): Span | null {
  let first = -1;
  let last = -1;
  let inTag = false;
  for (let i = from; i < to; i += 1) {
    const c = doc.charCodeAt(i);
    if (inTag) {
      if (c === 62 /* > */) inTag = false;
      continue;
    }
    if (c === 60 /* < */) {
      inTag = true;
      continue;
    }
    if (c === 32 || c === 9 || c === 10 || c === 13) continue;
    if (first < 0) first = i;
    last = i;
  }
  if (first < 0) return null;
  // Trailing entity (&#160;) counts as space, not as part of the figure.
  return { start: first, end: last + 1 };
}

function snippetAround(doc: string, start: number, end: number): string {
  let before = doc.slice(Math.max(0, start - 600), start);
  const gt = before.indexOf('>');
  if (gt >= 0) before = before.slice(gt + 1);
  let after = doc.slice(end, end + 600);
  const lt = after.lastIndexOf('<');
  if (lt >= 0) after = after.slice(0, lt);
  const b = visibleText(before);
  const a = visibleText(after);
  const fig = visibleText(doc.slice(start, end));
  return `${b.length > 160 ? `…${b.slice(-160)}` : b} ${fig} ${a.length > 160 ? `${a.slice(0, 160)}…` : a}`.trim();
}

function fingerprint(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

function nonNumericText(doc: string, name: string): { text: string; contextRef: string | null } | null {
  const re = new RegExp(`<ix:nonNumeric\\b([^>]*\\bname="${name}"[^>]*)>`, 'i');
  const m = re.exec(doc);
  if (!m) return null;
  const close = doc.indexOf('</ix:nonNumeric>', m.index);
  if (close < 0) return null;
  const inner = doc.slice(m.index + m[0].length, close);
  return { text: visibleText(inner), contextRef: parseAttributes(m[1] ?? '').get('contextRef') ?? null };
}

function readDei(doc: string, contexts: Map<string, XbrlContext>): DocumentDei {
  const get = (local: string): { text: string; contextRef: string | null } | null => nonNumericText(doc, `dei:${local}`);
  const type = get('DocumentType');
  const periodEnd = get('DocumentPeriodEndDate');
  const ctxEnd = (ref: string | null | undefined): string | null =>
    ref === null || ref === undefined ? null : (contexts.get(ref)?.end ?? null);
  const amendment = get('AmendmentFlag')?.text.toLowerCase();
  const cik = get('EntityCentralIndexKey')?.text ?? null;
  return {
    documentType: type?.text ?? null,
    periodEnd:
      (periodEnd !== null ? parseHumanDate(periodEnd.text) : null) ??
      ctxEnd(periodEnd?.contextRef) ??
      ctxEnd(type?.contextRef),
    cik: cik !== null && /^\d{1,10}$/.test(cik) ? cik.padStart(10, '0') : null,
    fiscalYear: get('DocumentFiscalYearFocus')?.text ?? null,
    fiscalPeriod: get('DocumentFiscalPeriodFocus')?.text ?? null,
    amendment: amendment === 'true' ? true : amendment === 'false' ? false : null,
    registrantName: get('EntityRegistrantName')?.text ?? null,
  };
}

/** Whether the text looks like an inline XBRL document. */
export function isInlineXbrl(doc: string): boolean {
  return /<ix:header\b/i.test(doc.slice(0, 200_000)) || /<ix:nonFraction\b/i.test(doc);
}

/** Evidence-only details of a visible fact: its table cell, the section it sits in, a snippet. */
interface FactDetails {
  table: TableLocation | null;
  section: string | null;
  snippet: string | null;
}

/**
 * Locates figures of one document for evidence: table cells, headings, snippets. The headings scan
 * and the table fingerprints are computed on first use, so building facts alone never pays for them.
 */
class DocumentLocator {
  private heads?: Heading[];
  private readonly tableCache = new Map<number, { fp: string; rows: number[] }>();

  constructor(
    private readonly doc: string,
    private readonly tables: readonly Span[],
  ) {}

  /** Index of the innermost table containing pos, or -1. */
  tableAt(pos: number): number {
    // The last table starting before pos that also ends after it: tables are sorted by start,
    // and a nested table starts after its parent.
    for (let ti = lastAtOrBefore(this.tables, pos, (s) => s.start); ti >= 0; ti -= 1) {
      const span = this.tables[ti];
      if (span !== undefined && span.end > pos) return ti;
    }
    return -1;
  }

  private tableInfo(ti: number): { fp: string; rows: number[] } {
    let info = this.tableCache.get(ti);
    const span = this.tables[ti];
    if (info === undefined && span !== undefined) {
      const slice = this.doc.slice(span.start, span.end);
      const rows = [...slice.matchAll(/<tr\b/gi)].map((m) => span.start + m.index);
      info = { fp: fingerprint(visibleText(slice)), rows };
      this.tableCache.set(ti, info);
    }
    return info ?? { fp: '', rows: [] };
  }

  /** Details of a visible figure at pos (range: its displayed text), in table ti (or -1). */
  details(pos: number, range: Span | null, ti: number): FactDetails {
    const { doc } = this;
    let table: TableLocation | null = null;
    let snippet: string | null = null;
    const span = this.tables[ti];
    if (span !== undefined) {
      const info = this.tableInfo(ti);
      const r = lastAtOrBefore(info.rows, pos, (x) => x);
      const rowStart = info.rows[r] ?? span.start;
      const cells = doc.slice(rowStart, pos).match(/<t[dh]\b/gi)?.length ?? 0;
      table = { index: ti, fingerprint: info.fp, row: Math.max(0, r), column: Math.max(0, cells - 1) };
      const rowEnd = doc.indexOf('</tr>', pos);
      const rowText = visibleText(doc.slice(rowStart, rowEnd > 0 && rowEnd < span.end ? rowEnd : pos + 200));
      snippet = rowText.length > 400 ? `${rowText.slice(0, 400)}…` : rowText;
    }
    if (snippet === null && range) snippet = snippetAround(doc, range.start, range.end);
    this.heads ??= headings(doc);
    const h = this.heads[lastAtOrBefore(this.heads, pos, (x) => x.pos)];
    return { table, section: h?.text ?? null, snippet: snippet === '' ? null : snippet };
  }
}

const HIDDEN_DETAILS: FactDetails = { table: null, section: null, snippet: null };

/** A fact of an inline document; its evidence details are located on first read. */
class InlineFact implements DocumentFact {
  private located?: FactDetails;

  constructor(
    readonly concept: string,
    readonly contextRef: string,
    readonly unitRef: string | null,
    readonly value: Decimal,
    readonly decimals: string | null,
    readonly nodeId: string | null,
    readonly start: number | null,
    readonly end: number | null,
    readonly displayed: string | null,
    readonly format: string | null,
    readonly scaleAttr: number,
    readonly signNegative: boolean,
    readonly hidden: boolean,
    readonly inTable: boolean,
    private readonly locate: () => FactDetails,
  ) {}

  private details(): FactDetails {
    return (this.located ??= this.locate());
  }

  get table(): TableLocation | null {
    return this.details().table;
  }

  get section(): string | null {
    return this.details().section;
  }

  get snippet(): string | null {
    return this.details().snippet;
  }
}

/**
 * Index of the close tag of the ix:nonFraction whose content starts at `from`, nested ones allowed;
 * -1 if it is never closed.
 */
function matchingClose(doc: string, from: number): number {
  let depth = 1;
  const tagRe = /<(\/?)ix:nonFraction\b[^>]*?(\/?)>/gi;
  tagRe.lastIndex = from;
  for (let t = tagRe.exec(doc); t !== null; t = tagRe.exec(doc)) {
    if (t[1] === '/') depth -= 1;
    else if (t[2] !== '/') depth += 1;
    if (depth === 0) return t.index;
  }
  return -1;
}

/** Scans an inline XBRL document. `buf` is the raw file (any encoding; offsets are byte offsets). */
export function parseInlineXbrl(buf: Buffer): ParsedFilingDocument {
  const doc = buf.toString('latin1');
  const contexts = parseContexts(doc);
  const units = parseUnits(doc);
  const locator = new DocumentLocator(doc, tableSpans(doc));
  const hiddenStart = doc.search(/<ix:hidden\b/i);
  const hiddenEnd = hiddenStart >= 0 ? doc.indexOf('</ix:hidden>', hiddenStart) : -1;

  const facts: DocumentFact[] = [];
  let skipped = 0;
  const openRe = /<ix:nonFraction\b([^>]*?)(\/?)>/gi;
  for (const m of doc.matchAll(openRe)) {
    const attrs = parseAttributes(m[1] ?? '');
    if (m[2] === '/' || attrs.get('xsi:nil') === 'true') continue;
    const innerStart = m.index + m[0].length;
    const close = matchingClose(doc, innerStart);
    if (close < 0) {
      skipped += 1;
      continue;
    }
    const name = attrs.get('name');
    const contextRef = attrs.get('contextRef');
    if (name === undefined || contextRef === undefined) {
      skipped += 1;
      continue;
    }
    const range = textRange(doc, innerStart, close);
    const displayedRaw = range ? doc.slice(range.start, range.end) : '';
    const displayed = visibleText(displayedRaw);
    const format = attrs.get('format') ?? null;
    const parsed = parseDisplayedNumber(displayed, format);
    if (parsed === undefined) {
      skipped += 1;
      continue;
    }
    const scaleAttr = Number.parseInt(attrs.get('scale') ?? '0', 10) || 0;
    const signNegative = attrs.get('sign') === '-';
    let value = shiftDecimal(parsed, scaleAttr);
    if (signNegative) value = negateDecimal(value);
    const pos = range?.start ?? innerStart;
    const hidden = hiddenStart >= 0 && pos > hiddenStart && pos < hiddenEnd;
    const ti = hidden ? -1 : locator.tableAt(pos);
    facts.push(
      new InlineFact(
        name,
        contextRef,
        attrs.get('unitRef') ?? null,
        value,
        attrs.get('decimals') ?? null,
        attrs.get('id') ?? null,
        range?.start ?? null,
        range?.end ?? null,
        displayed === '' ? null : displayed,
        format,
        scaleAttr,
        signNegative,
        hidden,
        ti >= 0,
        hidden ? () => HIDDEN_DETAILS : () => locator.details(pos, range, ti),
      ),
    );
  }
  const titleM = /<title>([^<]*)<\/title>/i.exec(doc);
  return {
    kind: 'ixbrl',
    byteLength: buf.length,
    title: titleM?.[1] !== undefined ? visibleText(titleM[1]) : null,
    dei: readDei(doc, contexts),
    contexts,
    units,
    facts,
    skipped,
  };
}
