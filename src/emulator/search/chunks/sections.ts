/**
 * Section classification: walks a filing's text blocks, recognises Part / Item / Note headings and
 * assigns every block a chunk type of the interface (section 2.4) with a confidence:
 * - 0.95: an `Item N.` heading whose title matches the item's standard title, or a `Note N – …` heading;
 * - 0.75: an `Item N.` heading whose title does not match the standard one (number-only match);
 * - 0.6: a bare standard title without an item number (fuzzy match), or an auditor's report;
 * - 0.7: item 8 / 10-Q item 1 text outside any numbered note (statement captions, policies);
 * - 0.3: text before the first heading (cover page, table of contents, forward-looking legend).
 */
import type { TextBlock } from './html-blocks.js';

import { CHUNK_TYPES } from '../../../contract/vocabulary.js';

// The chunk types are the interface's vocabulary (section 2.4): one list, kept with the contract.
export { CHUNK_TYPES };
export type ChunkType = (typeof CHUNK_TYPES)[number];

export function isChunkType(value: unknown): value is ChunkType {
  return typeof value === 'string' && (CHUNK_TYPES as readonly string[]).includes(value);
}

export const CONFIDENCE = {
  exact: 0.95,
  itemNumberOnly: 0.75,
  financialStatements: 0.7,
  fuzzy: 0.6,
  table: 0.9,
  preamble: 0.3,
} as const;

interface ItemRule {
  type: ChunkType;
  /** Standard title of the item; a heading matching it is an exact match. */
  title: RegExp;
}

/** Form 10-K items (Regulation S-K). */
const TEN_K: Record<string, ItemRule> = {
  '1': { type: 'business', title: /^business\b/i },
  '1A': { type: 'risk', title: /risk factors/i },
  '1B': { type: 'compliance', title: /unresolved staff comments/i },
  '1C': { type: 'compliance', title: /cybersecurity/i },
  '2': { type: 'properties', title: /properties/i },
  '3': { type: 'legal', title: /legal proceedings/i },
  '4': { type: 'compliance', title: /mine safety/i },
  '5': { type: 'compliance', title: /market for (the )?registrant/i },
  '6': { type: 'compliance', title: /reserved|selected financial data/i },
  '7': { type: 'mda', title: /management.s discussion and analysis/i },
  '7A': { type: 'market_risk', title: /market risk/i },
  '8': { type: 'notes', title: /financial statements/i },
  '9': { type: 'compliance', title: /changes in and disagreements/i },
  '9A': { type: 'controls', title: /controls and procedures/i },
  '9B': { type: 'compliance', title: /other information/i },
  '9C': { type: 'compliance', title: /foreign jurisdictions/i },
  '10': { type: 'compliance', title: /directors|corporate governance/i },
  '11': { type: 'compliance', title: /executive compensation/i },
  '12': { type: 'compliance', title: /security ownership/i },
  '13': { type: 'compliance', title: /relationships and related transactions/i },
  '14': { type: 'compliance', title: /accountant fees/i },
  '15': { type: 'compliance', title: /exhibit/i },
  '16': { type: 'compliance', title: /summary/i },
};

/** Form 10-Q, Part I (financial information). */
const TEN_Q_PART_I: Record<string, ItemRule> = {
  '1': { type: 'notes', title: /financial statements/i },
  '2': { type: 'mda', title: /management.s discussion and analysis/i },
  '3': { type: 'market_risk', title: /market risk/i },
  '4': { type: 'controls', title: /controls and procedures/i },
};

/** Form 10-Q, Part II (other information). */
const TEN_Q_PART_II: Record<string, ItemRule> = {
  '1': { type: 'legal', title: /legal proceedings/i },
  '1A': { type: 'risk', title: /risk factors/i },
  '2': { type: 'compliance', title: /unregistered sales/i },
  '3': { type: 'compliance', title: /defaults/i },
  '4': { type: 'compliance', title: /mine safety/i },
  '5': { type: 'compliance', title: /other information/i },
  '6': { type: 'compliance', title: /exhibits/i },
};

/** Bare standard titles recognised without an item number (fuzzy headings). */
const FUZZY_TITLES: Array<{ re: RegExp; type: ChunkType }> = [
  { re: /^risk factors$/i, type: 'risk' },
  { re: /^management.s discussion and analysis\b/i, type: 'mda' },
  { re: /^quantitative and qualitative disclosures? about market risk$/i, type: 'market_risk' },
  { re: /^legal proceedings$/i, type: 'legal' },
  { re: /^properties$/i, type: 'properties' },
  { re: /^controls and procedures$/i, type: 'controls' },
  { re: /^business$/i, type: 'business' },
  { re: /^code of (business )?(conduct|ethics)\b/i, type: 'compliance' },
];

const PART_RE = /^part\s+(iv|iii|ii|i)\b\s*[.:\-\u2013\u2014]?\s*(.*)$/i;
const ITEM_RE = /^item\s+(\d{1,2}[a-c]?)\s*[.:\-\u2013\u2014]?\s*(.*)$/i;
const NOTE_RE = /^note\s+(\d{1,2})\s*[.:\-\u2013\u2014]+\s*(\S.*)$/i;
const AUDITOR_RE = /^report of independent registered public accounting firm/i;
/** Captions of the primary statements and of the notes section: financial-statements context. */
const STATEMENT_RE =
  /^(condensed )?consolidated (statements? of|balance sheets?)\b|^notes to (the )?(condensed )?consolidated financial statements\b/i;
/** Running headers, footers and page numbers: not content. */
const NOISE_RE = [
  /^(page\s+)?\d{1,3}$/i,
  /^table of contents$/i,
  /\|\s*\d{4} form 10-[kq]\s*\|\s*\d{1,3}$/i,
  /^\(unaudited\)$/i,
  /^\(continued\)$/i,
];

export interface SectionContext {
  type: ChunkType;
  confidence: number;
  /** `Part I`…`Part IV`, or null before the first Part heading. */
  part: string | null;
  /** `Item 1A` etc., or null. */
  item: string | null;
  /** `Note 3` etc., or null. */
  note: string | null;
  /** Title of the innermost heading (note title, else item title, else fuzzy title), or null. */
  heading: string | null;
}

export interface ClassifiedBlock {
  block: TextBlock;
  section: SectionContext;
  /** True for a heading block (Part/Item/Note/fuzzy title or a bold subheading). */
  isHeading: boolean;
}

/** A block short and single-line enough to be a heading (AMZN sets item headings in one-row tables). */
function headingText(b: TextBlock): string | null {
  if (b.text.length > 220) return null;
  if (b.kind === 'table' && (b.rows?.length ?? 0) > 1) return null;
  return b.text;
}

function romanPart(roman: string): string {
  return `Part ${roman.toUpperCase()}`;
}

function normaliseTitle(raw: string): string | null {
  const t = raw.replace(/\s+/g, ' ').trim();
  return t.length > 0 ? t : null;
}

/** Classifies the blocks of one document of form `form` (`10-K`, `10-Q`, amendments too). */
export function classifyBlocks(blocks: readonly TextBlock[], form: string): ClassifiedBlock[] {
  const state = new SectionState(/^10-Q/i.test(form));
  const out: ClassifiedBlock[] = [];
  for (const block of blocks) {
    if (NOISE_RE.some((re) => re.test(block.text))) continue;
    const text = headingText(block);
    const isHeading = text === null ? false : state.heading(block, text);
    // A Part heading only sets context; its two words would make a chunk of their own.
    if (isHeading === undefined) continue;
    out.push({ block, isHeading, section: state.section() });
  }
  return out;
}

/** Where a document's walk stands: its Part, Item and Note, and the chunk type they give. */
class SectionState {
  private part: string | null = null;
  private item: string | null = null;
  private itemTitle: string | null = null;
  private note: string | null = null;
  private noteTitle: string | null = null;
  private type: ChunkType = 'compliance';
  private confidence: number = CONFIDENCE.preamble;
  private itemType: ChunkType = 'compliance';
  private itemConfidence: number = CONFIDENCE.preamble;
  private seenItem = false;

  constructor(private readonly isQuarterly: boolean) {}

  section(): SectionContext {
    const { type, confidence, part, item, note } = this;
    return { type, confidence, part, item, note, heading: this.noteTitle ?? this.itemTitle };
  }

  /**
   * Applies a block that may be a heading: true when it is one (it may start a chunk), false for
   * body text, undefined for a Part heading (context only, no block of its own).
   */
  heading(block: TextBlock, text: string): boolean | undefined {
    const pm = PART_RE.exec(text);
    const im = ITEM_RE.exec(text);
    const nm = NOTE_RE.exec(text);
    const fuzzy = block.bold && !this.seenItem ? FUZZY_TITLES.find((f) => f.re.test(text)) : undefined;
    if (pm?.[1] && text.length <= 80) {
      this.part = romanPart(pm[1]);
      return undefined;
    }
    if (im?.[1] && !/\bof (this|the) (form|report|annual)/i.test(text)) {
      this.startItem(im[1].toUpperCase(), im[2] ?? '');
    } else if (nm?.[1]) {
      this.startNote(`Note ${nm[1]}`, normaliseTitle(nm[2] ?? ''), 'notes', CONFIDENCE.exact);
    } else if (block.bold && AUDITOR_RE.test(text)) {
      const title = 'Report of Independent Registered Public Accounting Firm';
      this.startNote(null, title, 'compliance', CONFIDENCE.fuzzy);
    } else if (block.bold && STATEMENT_RE.test(text) && this.seenItem) {
      this.startNote(null, normaliseTitle(text), 'notes', CONFIDENCE.financialStatements);
    } else if (fuzzy) {
      this.itemTitle = text;
      this.type = fuzzy.type;
      this.confidence = CONFIDENCE.fuzzy;
    } else {
      return block.bold; // a subheading: keeps the section, may start a new chunk
    }
    return true;
  }

  private startItem(num: string, title: string): void {
    const rule = this.rulesFor(num, title);
    this.item = `Item ${num}`;
    this.itemTitle = normaliseTitle(title);
    this.note = null;
    this.noteTitle = null;
    this.seenItem = true;
    if (rule) {
      this.itemType = rule.type;
      this.itemConfidence = rule.title.test(title) ? CONFIDENCE.exact : CONFIDENCE.itemNumberOnly;
    } else {
      this.itemType = 'compliance';
      this.itemConfidence = CONFIDENCE.fuzzy;
    }
    this.type = this.itemType;
    this.confidence = this.itemType === 'notes' ? CONFIDENCE.financialStatements : this.itemConfidence;
  }

  private startNote(note: string | null, title: string | null, type: ChunkType, confidence: number): void {
    this.note = note;
    this.noteTitle = title;
    this.type = type;
    this.confidence = confidence;
  }

  private rulesFor(num: string, title: string): ItemRule | undefined {
    if (!this.isQuarterly) return TEN_K[num];
    if (this.part === 'Part II') return TEN_Q_PART_II[num];
    if (this.part === 'Part I') return TEN_Q_PART_I[num];
    // Part unknown: pick the table whose title matches.
    const p2 = TEN_Q_PART_II[num];
    if (p2 && p2.title.test(title)) return p2;
    return TEN_Q_PART_I[num] ?? p2;
  }
}
