/**
 * Groups a document's classified blocks into search chunks: consecutive paragraphs of one section
 * up to ~2,000 characters (a new chunk starts at a subheading once ~800 characters are collected),
 * and every table as its own `table_context` chunk, prefixed by its lead-in paragraph (a caption or
 * a sentence ending in ":"), split at row boundaries when long. Offsets always cover whole blocks or
 * rows, so a chunk's [start, end) range highlights exactly the text it holds.
 */
import type { TableRow, TextBlock } from './html-blocks.js';
import { CONFIDENCE, type ChunkType, type ClassifiedBlock, type SectionContext } from './sections.js';

/** Soft maximum of a chunk's text, in characters. */
export const CHUNK_MAX_CHARS = 2000;
/** A subheading starts a new chunk once this much text is collected. */
export const CHUNK_MIN_CHARS = 800;
/** A lead-in paragraph longer than this stays with the prose. */
const LEAD_IN_MAX_CHARS = 400;
/** Tables with fewer letters than this are layout (checkbox grids, rules), not content. */
const TABLE_MIN_LETTERS = 12;

/** A chunk: its section context (type, part, item, note, heading) and its text. */
export interface RawChunk extends SectionContext {
  text: string;
  /** Byte offsets into the raw document. */
  start: number;
  end: number;
}

interface Piece {
  text: string;
  start: number;
  end: number;
}

function sectionKey(s: SectionContext): string {
  return `${s.type}|${s.confidence}|${s.part}|${s.item}|${s.note}|${s.heading}`;
}

function letters(text: string): number {
  return text.replace(/[^\p{L}]/gu, '').length;
}

function isContentTable(b: TextBlock): boolean {
  return b.kind === 'table' && (b.rows?.length ?? 0) > 1 && letters(b.text) >= TABLE_MIN_LETTERS;
}

function isLeadIn(c: ClassifiedBlock): boolean {
  const { block } = c;
  return (
    block.kind === 'para' &&
    block.text.length <= LEAD_IN_MAX_CHARS &&
    (block.bold || /[:：]\s*$/.test(block.text) || /^\(.*\)$/.test(block.text))
  );
}

/** Chunks of one document, in document order. */
export function chunkDocument(classified: readonly ClassifiedBlock[]): RawChunk[] {
  const chunks: RawChunk[] = [];
  let group: ClassifiedBlock[] = [];
  let groupChars = 0;

  const emit = (section: SectionContext, type: ChunkType, confidence: number, pieces: Piece[]): void => {
    const first = pieces[0];
    const last = pieces[pieces.length - 1];
    if (!first || !last) return;
    chunks.push({
      type,
      confidence,
      part: section.part,
      item: section.item,
      note: section.note,
      heading: section.heading,
      text: pieces.map((p) => p.text).join('\n'),
      start: first.start,
      end: last.end,
    });
  };

  const flush = (): void => {
    const first = group[0];
    if (first) {
      emit(
        first.section,
        first.section.type,
        first.section.confidence,
        group.map((c) => c.block),
      );
    }
    group = [];
    groupChars = 0;
  };

  for (const c of classified) {
    const { block, section } = c;
    if (isContentTable(block)) {
      // Captions and "as follows:" sentences right before the table travel with it.
      const leadIns: ClassifiedBlock[] = [];
      while (group.length > 0 && leadIns.length < 2) {
        const prev = group[group.length - 1];
        if (!prev || !isLeadIn(prev) || sectionKey(prev.section) !== sectionKey(section)) break;
        leadIns.unshift(prev);
        group.pop();
      }
      flush();
      const confidence = section.confidence <= CONFIDENCE.preamble ? section.confidence : CONFIDENCE.table;
      for (const pieces of splitTable(
        leadIns.map((l) => l.block),
        block.rows ?? [],
      )) {
        emit(section, 'table_context', confidence, pieces);
      }
      continue;
    }
    const first = group[0];
    if (first && sectionKey(first.section) !== sectionKey(section)) flush();
    else if (c.isHeading && groupChars >= CHUNK_MIN_CHARS) flush();
    else if (groupChars > 0 && groupChars + block.text.length > CHUNK_MAX_CHARS) flush();
    group.push(c);
    groupChars += block.text.length + 1;
  }
  flush();
  return chunks;
}

/** Lead-ins then rows, cut into pieces of at most CHUNK_MAX_CHARS (a single huge row stays whole). */
function splitTable(leadIns: readonly TextBlock[], rows: readonly TableRow[]): Piece[][] {
  const out: Piece[][] = [];
  let current: Piece[] = leadIns.map((b) => ({ text: b.text, start: b.start, end: b.end }));
  let chars = current.reduce((n, p) => n + p.text.length + 1, 0);
  for (const row of rows) {
    if (chars > 0 && chars + row.text.length > CHUNK_MAX_CHARS && current.length > leadIns.length) {
      out.push(current);
      current = [];
      chars = 0;
    }
    current.push(row);
    chars += row.text.length + 1;
  }
  if (current.length > 0) out.push(current);
  return out;
}
