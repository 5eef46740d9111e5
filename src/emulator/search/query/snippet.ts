/** Query-centred previews of chunk text. */
import { normaliseTerm } from '../indexes/index.js';

/** Length of snippet_preview, in characters (before the ellipses). */
export const PREVIEW_CHARS = 240;

const WORD_RE = /[\p{L}\p{N}]+/gu;

/**
 * About PREVIEW_CHARS of `text` around the first word whose index term is in `terms` (the chunk's
 * start when none is), cut at word boundaries, with `…` where text was cut.
 */
export function preview(text: string, terms: ReadonlySet<string>): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= PREVIEW_CHARS) return flat;
  let hit = 0;
  for (const m of flat.matchAll(WORD_RE)) {
    const word = m[0].replace(/['\u2019]s$/i, '');
    const term = normaliseTerm(word);
    if (term !== null && terms.has(term)) {
      hit = m.index;
      break;
    }
  }
  let start = Math.max(0, hit - Math.floor(PREVIEW_CHARS / 4));
  if (start + PREVIEW_CHARS > flat.length) start = Math.max(0, flat.length - PREVIEW_CHARS);
  if (start > 0) {
    const space = flat.indexOf(' ', start);
    start = space >= 0 && space < hit + 1 ? space + 1 : start;
  }
  let end = Math.min(flat.length, start + PREVIEW_CHARS);
  if (end < flat.length) {
    const space = flat.lastIndexOf(' ', end);
    if (space > start) end = space;
  }
  return `${start > 0 ? '…' : ''}${flat.slice(start, end)}${end < flat.length ? '…' : ''}`;
}
