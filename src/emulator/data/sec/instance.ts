/**
 * Scanner of classic (non-inline) XBRL instance documents (`*_htm.xml`, `msft-20150630.xml`):
 * contexts, units and numeric facts. There is no rendered page, so no table, section or snippet;
 * offsets of the value text are kept for the highlight payload.
 */
import { parseDecimal } from '../fields/index.js';
import type { DocumentFact, ParsedFilingDocument } from './ixbrl.js';
import { parseAttributes, parseContexts, parseUnits, type DocumentDei, type XbrlContext } from './xbrl-common.js';

/** Whether the text looks like an XBRL instance (root element xbrl / xbrli:xbrl). */
export function isXbrlInstance(doc: string): boolean {
  return /<(?:xbrli:)?xbrl\b/.test(doc.slice(0, 20_000));
}

const FACT_RE = /<([A-Za-z][\w-]*):([A-Za-z_][\w.-]*)\b([^>]*?\bcontextRef\s*=\s*"[^"]*"[^>]*?)(\/?)>/g;

function deiText(doc: string, local: string): { text: string; contextRef: string | null } | null {
  const m = new RegExp(`<dei:${local}\\b([^>]*)>([^<]*)</dei:${local}>`).exec(doc);
  if (!m) return null;
  return { text: (m[2] ?? '').trim(), contextRef: parseAttributes(m[1] ?? '').get('contextRef') ?? null };
}

function readDei(doc: string, contexts: Map<string, XbrlContext>): DocumentDei {
  const type = deiText(doc, 'DocumentType');
  const periodEnd = deiText(doc, 'DocumentPeriodEndDate');
  const cik = deiText(doc, 'EntityCentralIndexKey')?.text ?? null;
  const amendment = deiText(doc, 'AmendmentFlag')?.text.toLowerCase();
  const ctx = type?.contextRef ? contexts.get(type.contextRef) : undefined;
  return {
    documentType: type?.text ?? null,
    periodEnd: periodEnd !== null && /^\d{4}-\d{2}-\d{2}/.test(periodEnd.text) ? periodEnd.text.slice(0, 10) : (ctx?.end ?? null),
    cik: cik !== null && /^\d{1,10}$/.test(cik) ? cik.padStart(10, '0') : null,
    fiscalYear: deiText(doc, 'DocumentFiscalYearFocus')?.text ?? null,
    fiscalPeriod: deiText(doc, 'DocumentFiscalPeriodFocus')?.text ?? null,
    amendment: amendment === 'true' ? true : amendment === 'false' ? false : null,
    registrantName: deiText(doc, 'EntityRegistrantName')?.text ?? null,
  };
}

export function parseXbrlInstance(buf: Buffer): ParsedFilingDocument {
  const doc = buf.toString('latin1');
  const contexts = parseContexts(doc);
  const units = parseUnits(doc);
  const facts: DocumentFact[] = [];
  let skipped = 0;
  for (const m of doc.matchAll(FACT_RE)) {
    const prefix = m[1] ?? '';
    const local = m[2] ?? '';
    if (prefix === 'xbrli' || prefix === 'link' || prefix === 'xbrldi') continue;
    const attrs = parseAttributes(m[3] ?? '');
    const unitRef = attrs.get('unitRef');
    if (unitRef === undefined || m[4] === '/' || attrs.get('xsi:nil') === 'true') continue;
    const innerStart = m.index + m[0].length;
    const close = doc.indexOf(`</${prefix}:${local}>`, innerStart);
    if (close < 0) {
      skipped += 1;
      continue;
    }
    const raw = doc.slice(innerStart, close);
    const value = parseDecimal(raw);
    if (value === undefined) {
      skipped += 1;
      continue;
    }
    const lead = raw.length - raw.trimStart().length;
    facts.push({
      concept: `${prefix}:${local}`,
      contextRef: attrs.get('contextRef') ?? '',
      unitRef,
      value,
      decimals: attrs.get('decimals') ?? null,
      nodeId: attrs.get('id') ?? null,
      start: innerStart + lead,
      end: innerStart + lead + raw.trim().length,
      displayed: raw.trim(),
      format: null,
      scaleAttr: 0,
      signNegative: false,
      hidden: false,
      inTable: false,
      table: null,
      section: null,
      snippet: null,
    });
  }
  return {
    kind: 'xbrl',
    byteLength: buf.length,
    title: null,
    dei: readDei(doc, contexts),
    contexts,
    units,
    facts,
    skipped,
  };
}
