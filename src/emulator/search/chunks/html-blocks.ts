/**
 * Turns a raw (inline XBRL) HTML filing into visible text blocks with byte offsets into the raw
 * document. A block is one paragraph-like element (div, p, li, heading) or one whole table. Offsets are
 * byte offsets of the first and one past the last visible character, so the viewer can highlight the
 * exact passage in the bytes EDGAR served. The scanner is a small tag tokenizer, not a DOM: filings are
 * machine-generated XHTML and only block boundaries, hidden regions and text matter here.
 */
import { decodeEntities } from '../../data/index.js';

export interface TextBlock {
  /** Visible text, entities decoded, whitespace collapsed (table rows joined by newlines). */
  text: string;
  /** Byte offset of the first visible character in the raw document. */
  start: number;
  /** Byte offset one past the last visible character. */
  end: number;
  /** `table` for a whole <table>, else `para`. */
  kind: 'para' | 'table';
  /** True when every visible character is bold (font-weight 700/bold, <b>, <strong>): a heading hint. */
  bold: boolean;
  /** Tables only: the non-empty rows, cells joined by a space, each with its own byte offsets. */
  rows?: TableRow[];
}

export interface TableRow {
  text: string;
  start: number;
  end: number;
}

/** Elements whose start or end closes the current paragraph. */
const BLOCK_TAGS = new Set([
  'div',
  'p',
  'li',
  'ul',
  'ol',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'br',
  'hr',
  'section',
  'article',
  'body',
  'center',
  'blockquote',
]);
const VOID_TAGS = new Set(['br', 'hr', 'img', 'meta', 'link', 'input', 'col', 'area', 'base', 'wbr']);
/** Subtrees never shown to a reader. `ix:header` holds the hidden iXBRL facts. */
const SKIP_TAGS = new Set(['head', 'script', 'style', 'ix:header', 'title']);
const TAG_RE =
  /<!--[\s\S]*?-->|<!\[CDATA\[[\s\S]*?\]\]>|<[!?][^>]*>|<(\/?)([A-Za-z][\w:.-]*)((?:[^>"']|"[^"]*"|'[^']*')*)>/g;
const BOLD_STYLE_RE = /font-weight:\s*(?:700|800|900|bold)/i;
const HIDDEN_STYLE_RE = /display:\s*none/i;

interface OpenElement {
  name: string;
  hidden: boolean;
  bold: boolean;
}

/**
 * Scans `raw` (the document bytes) and returns its visible blocks in document order.
 * Works on a latin1 view so string indexes are byte offsets; text is re-decoded as UTF-8 per run.
 */
export function extractBlocks(raw: Buffer): TextBlock[] {
  const html = raw.toString('latin1');
  const blocks: TextBlock[] = [];
  const stack: OpenElement[] = [];
  let hiddenDepth = 0;
  let boldDepth = 0;
  let tableDepth = 0;

  // Current paragraph (or table) being accumulated.
  let parts: string[] = [];
  let start = -1;
  let end = -1;
  let allBold = true;
  let tableRows: TableRow[] = [];
  let rowCells: string[] = [];
  let rowStart = -1;
  let rowEnd = -1;

  const flushPara = (): void => {
    if (tableDepth > 0) return; // inside a table, cells are collected separately
    const text = collapse(parts.join(''));
    if (text.length > 0 && start >= 0) blocks.push({ text, start, end, kind: 'para', bold: allBold });
    parts = [];
    start = -1;
    end = -1;
    allBold = true;
  };
  const flushCell = (): void => {
    const text = collapse(parts.join(''));
    parts = [];
    if (text.length > 0) rowCells.push(text);
  };
  const flushRow = (): void => {
    flushCell();
    const text = rowCells.join(' ');
    if (text.length > 0 && rowStart >= 0) tableRows.push({ text, start: rowStart, end: rowEnd });
    rowCells = [];
    rowStart = -1;
    rowEnd = -1;
  };

  TAG_RE.lastIndex = 0;
  let pos = 0;
  let m: RegExpExecArray | null;
  while ((m = TAG_RE.exec(html)) !== null) {
    if (m.index > pos && hiddenDepth === 0) {
      addText(pos, m.index);
    }
    pos = TAG_RE.lastIndex;
    const name = m[2]?.toLowerCase();
    if (name === undefined) continue; // comment, doctype, processing instruction
    const closing = m[1] === '/';
    const attrs = m[3] ?? '';
    if (closing) {
      // Pop to the matching element (tolerates unclosed inline elements).
      let i = stack.length - 1;
      while (i >= 0 && stack[i]?.name !== name) i--;
      if (i < 0) continue;
      while (stack.length > i) {
        const el = stack.pop();
        if (!el) break;
        if (el.hidden) hiddenDepth--;
        if (el.bold) boldDepth--;
        closeElement(el.name);
      }
      continue;
    }
    const selfClosing = attrs.trimEnd().endsWith('/') || VOID_TAGS.has(name);
    if (hiddenDepth === 0) openElement(name);
    if (selfClosing) {
      if (hiddenDepth === 0 && BLOCK_TAGS.has(name)) {
        if (tableDepth > 0) parts.push(' ');
        else flushPara();
      }
      continue;
    }
    const style = /\bstyle\s*=\s*"([^"]*)"/i.exec(attrs)?.[1] ?? '';
    const hidden = SKIP_TAGS.has(name) || HIDDEN_STYLE_RE.test(style);
    const bold = name === 'b' || name === 'strong' || BOLD_STYLE_RE.test(style);
    stack.push({ name, hidden, bold });
    if (hidden) hiddenDepth++;
    if (bold) boldDepth++;
  }
  if (hiddenDepth === 0 && pos < html.length) addText(pos, html.length);
  flushPara();
  return blocks;

  function openElement(name: string): void {
    if (name === 'table') {
      if (tableDepth === 0) {
        flushPara();
        tableRows = [];
        rowCells = [];
        parts = [];
      }
      tableDepth++;
    } else if (tableDepth > 0) {
      if (name === 'tr') flushRow();
      else if (name === 'td' || name === 'th') flushCell();
      else if (BLOCK_TAGS.has(name)) parts.push(' ');
    } else if (BLOCK_TAGS.has(name)) {
      flushPara();
    }
  }

  function closeElement(name: string): void {
    if (hiddenDepth > 0) return;
    if (name === 'table' && tableDepth > 0) {
      tableDepth--;
      if (tableDepth === 0) {
        flushRow();
        const rows = tableRows;
        const text = rows.map((r) => r.text).join('\n');
        if (text.length > 0 && start >= 0) {
          blocks.push({ text, start, end, kind: 'table', bold: allBold, rows });
        }
        tableRows = [];
        parts = [];
        start = -1;
        end = -1;
        allBold = true;
      }
    } else if (tableDepth > 0) {
      if (name === 'td' || name === 'th') flushCell();
      else if (name === 'tr') flushRow();
    } else if (BLOCK_TAGS.has(name)) {
      flushPara();
    }
  }

  function addText(from: number, to: number): void {
    const rawText = html.slice(from, to);
    const lead = rawText.search(/\S/);
    if (lead < 0) {
      if (parts.length > 0) parts.push(' ');
      return;
    }
    const trail = rawText.length - (rawText.length - rawText.trimEnd().length);
    if (start < 0) start = from + lead;
    end = from + trail;
    if (tableDepth > 0) {
      if (rowStart < 0) rowStart = from + lead;
      rowEnd = from + trail;
    }
    const text = decodeEntities(Buffer.from(rawText, 'latin1').toString('utf8'));
    if (text.trim().length > 0 && text.replace(/[\s\u00a0]/g, '').length > 0 && boldDepth === 0) {
      allBold = false;
    }
    parts.push(text);
  }
}

/** Collapses runs of whitespace (incl. no-break spaces) to one space and trims. */
export function collapse(text: string): string {
  return text.replace(/[\s\u00a0\u200b]+/g, ' ').trim();
}
