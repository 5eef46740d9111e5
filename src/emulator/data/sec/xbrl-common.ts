/**
 * Pieces shared by the inline XBRL and classic instance scanners: contexts, units, attributes,
 * entity decoding. Documents are scanned as latin1 strings so a string index IS a byte offset into
 * the raw file (multi-byte UTF-8 stays exact); text meant for people is re-decoded as UTF-8.
 */

export interface DimensionMember {
  /** Axis QName, e.g. `srt:ProductOrServiceAxis`. */
  axis: string;
  /** Member QName (explicit) or the typed value (typed dimensions). */
  member: string;
  typed: boolean;
}

export interface XbrlContext {
  id: string;
  cik: string | null;
  periodKind: 'instant' | 'duration';
  start: string | null;
  end: string;
  /** In document order. */
  dims: DimensionMember[];
}

export interface XbrlUnit {
  id: string;
  /** SEC companyfacts style: `USD`, `shares`, `pure`, `USD/shares`, `Vendor`. */
  name: string;
}

const ATTR_RE = /([\w:.-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g;

export function parseAttributes(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of text.matchAll(ATTR_RE)) {
    if (m[1] !== undefined) out.set(m[1], decodeEntities(m[2] ?? m[3] ?? ''));
  }
  return out;
}

/** Named HTML character references that occur in EDGAR filings (others are left as written). */
const NAMED: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: '\u00a0',
  ndash: '\u2013',
  mdash: '\u2014',
  lsquo: '\u2018',
  rsquo: '\u2019',
  ldquo: '\u201c',
  rdquo: '\u201d',
  bull: '\u2022',
  middot: '\u00b7',
  sect: '\u00a7',
  para: '\u00b6',
  copy: '\u00a9',
  reg: '\u00ae',
  trade: '\u2122',
  hellip: '\u2026',
  euro: '\u20ac',
  pound: '\u00a3',
  yen: '\u00a5',
  cent: '\u00a2',
  deg: '\u00b0',
  times: '\u00d7',
  divide: '\u00f7',
  plusmn: '\u00b1',
  frac12: '\u00bd',
  frac14: '\u00bc',
  frac34: '\u00be',
  ensp: '\u2002',
  emsp: '\u2003',
  thinsp: '\u2009',
  zwsp: '\u200b',
};

const ENTITY_RE = /&(#\d+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);/g;

/**
 * Decodes HTML character references: numeric ones (`&#160;`, `&#x2019;`; out-of-range codes are
 * left as written) and the named ones above (any case). The one decoder of the emulator: the data
 * scanners and the search layer both use it.
 */
export function decodeEntities(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(ENTITY_RE, (whole, ref: string) => {
    if (ref.startsWith('#')) {
      const code = ref[1] === 'x' || ref[1] === 'X' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      return Number.isFinite(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return NAMED[ref] ?? NAMED[ref.toLowerCase()] ?? whole;
  });
}

/** Text of a latin1 slice for people: UTF-8 re-decoded, tags stripped, entities decoded, spaces collapsed. */
export function visibleText(latin1Slice: string): string {
  const utf8 = Buffer.from(latin1Slice, 'latin1').toString('utf8');
  return decodeEntities(utf8.replace(/<[^>]*>/g, ' '))
    .replace(/[\s\u00a0]+/g, ' ')
    .trim();
}

const CONTEXT_RE = /<(?:[\w-]+:)?context\b([^>]*)>([\s\S]*?)<\/(?:[\w-]+:)?context>/g;
const EXPLICIT_RE = /<(?:[\w-]+:)?explicitMember\b([^>]*)>([^<]*)<\/(?:[\w-]+:)?explicitMember>/g;
const TYPED_RE = /<(?:[\w-]+:)?typedMember\b([^>]*)>([\s\S]*?)<\/(?:[\w-]+:)?typedMember>/g;

function tagText(body: string, local: string): string | null {
  const m = new RegExp(`<(?:[\\w-]+:)?${local}\\b[^>]*>([^<]*)<`).exec(body);
  return m?.[1] !== undefined ? m[1].trim() : null;
}

export function parseContexts(doc: string): Map<string, XbrlContext> {
  const out = new Map<string, XbrlContext>();
  for (const m of doc.matchAll(CONTEXT_RE)) {
    const id = parseAttributes(m[1] ?? '').get('id');
    const body = m[2] ?? '';
    if (id === undefined) continue;
    const instant = tagText(body, 'instant');
    const start = tagText(body, 'startDate');
    const end = tagText(body, 'endDate');
    const dims: DimensionMember[] = [];
    for (const e of body.matchAll(EXPLICIT_RE)) {
      const axis = parseAttributes(e[1] ?? '').get('dimension');
      if (axis !== undefined) dims.push({ axis, member: (e[2] ?? '').trim(), typed: false });
    }
    for (const t of body.matchAll(TYPED_RE)) {
      const axis = parseAttributes(t[1] ?? '').get('dimension');
      if (axis !== undefined) dims.push({ axis, member: visibleText(t[2] ?? ''), typed: true });
    }
    const cik = tagText(body, 'identifier');
    const period =
      instant !== null
        ? { periodKind: 'instant' as const, start: null, end: instant.slice(0, 10) }
        : end !== null
          ? { periodKind: 'duration' as const, start: start?.slice(0, 10) ?? null, end: end.slice(0, 10) }
          : undefined;
    if (period === undefined) continue;
    out.set(id, { id, cik: cik !== null && /^\d+$/.test(cik) ? cik.padStart(10, '0') : null, ...period, dims });
  }
  return out;
}

const UNIT_RE = /<(?:[\w-]+:)?unit\b([^>]*)>([\s\S]*?)<\/(?:[\w-]+:)?unit>/g;
const MEASURE_RE = /<(?:[\w-]+:)?measure\b[^>]*>([^<]*)</g;

function measureName(qname: string): string {
  const local = qname.trim().replace(/^[\w-]+:/, '');
  return local;
}

export function parseUnits(doc: string): Map<string, XbrlUnit> {
  const out = new Map<string, XbrlUnit>();
  for (const m of doc.matchAll(UNIT_RE)) {
    const id = parseAttributes(m[1] ?? '').get('id');
    if (id === undefined) continue;
    const body = m[2] ?? '';
    const num = /<(?:[\w-]+:)?unitNumerator\b[^>]*>([\s\S]*?)<\/(?:[\w-]+:)?unitNumerator>/.exec(body);
    const den = /<(?:[\w-]+:)?unitDenominator\b[^>]*>([\s\S]*?)<\/(?:[\w-]+:)?unitDenominator>/.exec(body);
    const measures = (s: string): string => [...s.matchAll(MEASURE_RE)].map((x) => measureName(x[1] ?? '')).join('*');
    const name = num && den ? `${measures(num[1] ?? '')}/${measures(den[1] ?? '')}` : measures(body);
    out.set(id, { id, name });
  }
  return out;
}

/** Parses a date written for people ("September 28, 2024", "June&#160;28, 2025") or ISO. */
export function parseHumanDate(text: string): string | null {
  const t = decodeEntities(text).replace(/[\s\u00a0]+/g, ' ').trim();
  if (/^\d{4}-\d{2}-\d{2}$/.test(t)) return t;
  const m = /^([A-Za-z]+)\.? (\d{1,2}),? (\d{4})$/.exec(t);
  if (!m) return null;
  const months = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
  const idx = months.indexOf((m[1] ?? '').slice(0, 3).toLowerCase());
  if (idx < 0) return null;
  return `${m[3]}-${String(idx + 1).padStart(2, '0')}-${(m[2] ?? '').padStart(2, '0')}`;
}

/** Cover-page facts every filing document carries (dei:*). */
export interface DocumentDei {
  documentType: string | null;
  periodEnd: string | null;
  cik: string | null;
  fiscalYear: string | null;
  fiscalPeriod: string | null;
  amendment: boolean | null;
  registrantName: string | null;
}
