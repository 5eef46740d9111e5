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
  return new BlockScanner(raw.toString('latin1')).scan();
}

/** One pass of the tag tokenizer over a document, with the paragraph or table being accumulated. */
class BlockScanner {
  private readonly blocks: TextBlock[] = [];
  private readonly stack: OpenElement[] = [];
  private hiddenDepth = 0;
  private boldDepth = 0;
  private tableDepth = 0;
  // Current paragraph (or table) being accumulated.
  private parts: string[] = [];
  private start = -1;
  private end = -1;
  private allBold = true;
  private tableRows: TableRow[] = [];
  private rowCells: string[] = [];
  private rowStart = -1;
  private rowEnd = -1;

  constructor(private readonly html: string) {}

  scan(): TextBlock[] {
    const html = this.html;
    TAG_RE.lastIndex = 0;
    let pos = 0;
    let m: RegExpExecArray | null;
    while ((m = TAG_RE.exec(html)) !== null) {
      if (m.index > pos && this.hiddenDepth === 0) this.addText(pos, m.index);
      pos = TAG_RE.lastIndex;
      const name = m[2]?.toLowerCase();
      if (name === undefined) continue; // comment, doctype, processing instruction
      if (m[1] === '/') this.closeTag(name);
      else this.openTag(name, m[3] ?? '');
    }
    if (this.hiddenDepth === 0 && pos < html.length) this.addText(pos, html.length);
    this.flushPara();
    return this.blocks;
  }

  /** Pops to the matching element (tolerates unclosed inline elements). */
  private closeTag(name: string): void {
    const stack = this.stack;
    let i = stack.length - 1;
    while (i >= 0 && stack[i]?.name !== name) i--;
    if (i < 0) return;
    while (stack.length > i) {
      const el = stack.pop();
      if (!el) break;
      if (el.hidden) this.hiddenDepth--;
      if (el.bold) this.boldDepth--;
      this.closeElement(el.name);
    }
  }

  private openTag(name: string, attrs: string): void {
    const selfClosing = attrs.trimEnd().endsWith('/') || VOID_TAGS.has(name);
    if (this.hiddenDepth === 0) this.openElement(name);
    if (selfClosing) {
      if (this.hiddenDepth === 0 && BLOCK_TAGS.has(name)) {
        if (this.tableDepth > 0) this.parts.push(' ');
        else this.flushPara();
      }
      return;
    }
    const style = /\bstyle\s*=\s*"([^"]*)"/i.exec(attrs)?.[1] ?? '';
    const hidden = SKIP_TAGS.has(name) || HIDDEN_STYLE_RE.test(style);
    const bold = name === 'b' || name === 'strong' || BOLD_STYLE_RE.test(style);
    this.stack.push({ name, hidden, bold });
    if (hidden) this.hiddenDepth++;
    if (bold) this.boldDepth++;
  }

  private openElement(name: string): void {
    if (name === 'table') {
      if (this.tableDepth === 0) {
        this.flushPara();
        this.tableRows = [];
        this.rowCells = [];
        this.parts = [];
      }
      this.tableDepth++;
    } else if (this.tableDepth > 0) {
      if (name === 'tr') this.flushRow();
      else if (name === 'td' || name === 'th') this.flushCell();
      else if (BLOCK_TAGS.has(name)) this.parts.push(' ');
    } else if (BLOCK_TAGS.has(name)) {
      this.flushPara();
    }
  }

  private closeElement(name: string): void {
    if (this.hiddenDepth > 0) return;
    if (name === 'table' && this.tableDepth > 0) {
      this.tableDepth--;
      if (this.tableDepth === 0) this.flushTable();
    } else if (this.tableDepth > 0) {
      if (name === 'td' || name === 'th') this.flushCell();
      else if (name === 'tr') this.flushRow();
    } else if (BLOCK_TAGS.has(name)) {
      this.flushPara();
    }
  }

  private addText(from: number, to: number): void {
    const rawText = this.html.slice(from, to);
    const lead = rawText.search(/\S/);
    if (lead < 0) {
      if (this.parts.length > 0) this.parts.push(' ');
      return;
    }
    const trail = rawText.length - (rawText.length - rawText.trimEnd().length);
    if (this.start < 0) this.start = from + lead;
    this.end = from + trail;
    if (this.tableDepth > 0) {
      if (this.rowStart < 0) this.rowStart = from + lead;
      this.rowEnd = from + trail;
    }
    const text = decodeEntities(Buffer.from(rawText, 'latin1').toString('utf8'));
    if (text.trim().length > 0 && text.replace(/[\s\u00a0]/g, '').length > 0 && this.boldDepth === 0) {
      this.allBold = false;
    }
    this.parts.push(text);
  }

  private flushPara(): void {
    if (this.tableDepth > 0) return; // inside a table, cells are collected separately
    const text = collapse(this.parts.join(''));
    if (text.length > 0 && this.start >= 0) {
      this.blocks.push({ text, start: this.start, end: this.end, kind: 'para', bold: this.allBold });
    }
    this.resetBlock();
  }

  private flushCell(): void {
    const text = collapse(this.parts.join(''));
    this.parts = [];
    if (text.length > 0) this.rowCells.push(text);
  }

  private flushRow(): void {
    this.flushCell();
    const text = this.rowCells.join(' ');
    if (text.length > 0 && this.rowStart >= 0)
      this.tableRows.push({ text, start: this.rowStart, end: this.rowEnd });
    this.rowCells = [];
    this.rowStart = -1;
    this.rowEnd = -1;
  }

  /** The end of an outermost table: its rows become one block. */
  private flushTable(): void {
    this.flushRow();
    const rows = this.tableRows;
    const text = rows.map((r) => r.text).join('\n');
    if (text.length > 0 && this.start >= 0) {
      this.blocks.push({ text, start: this.start, end: this.end, kind: 'table', bold: this.allBold, rows });
    }
    this.tableRows = [];
    this.resetBlock();
  }

  private resetBlock(): void {
    this.parts = [];
    this.start = -1;
    this.end = -1;
    this.allBold = true;
  }
}

/** Collapses runs of whitespace (incl. no-break spaces) to one space and trims. */
export function collapse(text: string): string {
  return text.replace(/[\s\u00a0\u200b]+/g, ' ').trim();
}
