/**
 * Chunking of the bundled filings (no HTTP): section classification against the documents' own
 * Item/Note headings, byte offsets that point at the chunk's text in the raw document, sizes, and
 * the filing metadata read from the bundled SEC files.
 */
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildCorpus, type Chunk, type Corpus } from '../../src/emulator/search/chunks/corpus.js';
import { readDataFile } from '../../src/emulator/data/sec/files.js';
import { listFilingDocuments, type ListedFiling } from '../../src/emulator/search/chunks/filing-list.js';
import { decodeEntities } from '../../src/emulator/data/sec/xbrl-common.js';
import { CHUNK_MAX_CHARS } from '../../src/emulator/search/chunks/chunker.js';
import { CHUNK_TYPES } from '../../src/emulator/search/chunks/sections.js';

const DATA_DIR = fileURLToPath(new URL('../../data/sec', import.meta.url));

let docs: ListedFiling[];
let corpus: Corpus;
const raw = new Map<string, Buffer>();

beforeAll(async () => {
  docs = await listFilingDocuments(DATA_DIR);
  corpus = await buildCorpus(docs, (d) => ({ name: d.registrantName, currentTicker: d.ticker }));
  for (const d of docs) raw.set(d.path, await readDataFile(d.file));
});

const visible = (html: string): string =>
  decodeEntities(html.replace(/<[^>]*>/g, ' ')).replace(/[\s\u00a0\u200b]+/g, '');

function doc(path: string): ListedFiling {
  const d = docs.find((x) => x.path === path);
  if (!d) throw new Error(`no bundled document ${path}`);
  return d;
}

/** The chunk covering byte `offset` of a document. */
function chunkAt(path: string, offset: number): Chunk | undefined {
  return corpus.chunks.find((c) => c.documentPath === path && c.start <= offset && offset < c.end);
}

/** Byte offset of the first visible `Item <n>.` heading whose text is followed by `title` (not the TOC). */
function headingOffset(path: string, re: RegExp): number {
  const html = (raw.get(path) ?? Buffer.alloc(0)).toString('latin1');
  const inLink = (at: number): boolean => html.lastIndexOf('<a ', at) > html.lastIndexOf('</a>', at);
  const hit = [...html.matchAll(re)].find((m) => !inLink(m.index));
  if (hit === undefined) throw new Error(`heading ${re} not found in ${path}`);
  return hit.index;
}

describe('bundled filing documents', () => {
  it('reads form, period, accession and filing date from the bundled SEC files', () => {
    const k = doc('filings/AAPL/aapl-10-k-2024-11-01.html');
    // README: accn 0000320193-24-000123, period 2024-09-28; submissions: filed 2024-11-01.
    expect(k).toMatchObject({ cik: '0000320193', form: '10-K', periodEnd: '2024-09-28' });
    expect(k.accession).toBe('0000320193-24-000123');
    expect(k.filedAt).toBe('2024-11-01');
    const q = doc('filings/AAPL/0000320193-25-000057/aapl-20250329.htm');
    expect(q).toMatchObject({ form: '10-Q', accession: '0000320193-25-000057', metadataSource: 'folder' });
    const g = doc('filings/GOOGL/googl-10-k-2025-02-05.html');
    expect(g.accession).toBe('0001652044-25-000014');
    const amzn = doc('filings/AMZN/amzn-10-k-2025-02-07.html');
    expect(amzn.accession).toBe('local:amzn-10-k-2025-02-07.html');
    expect(amzn.filedAt).toBe('2025-02-07');
  });
});

describe('chunks', () => {
  it('cover every chunk type of the interface', () => {
    const types = new Set(corpus.chunks.map((c) => c.type));
    for (const t of CHUNK_TYPES) expect(types, t).toContain(t);
  });

  it('point at their own text in the raw document', () => {
    for (const c of corpus.chunks) {
      const bytes = raw.get(c.documentPath);
      expect(bytes).toBeDefined();
      expect(c.start).toBeGreaterThanOrEqual(0);
      expect(c.end).toBeGreaterThan(c.start);
      expect(c.end).toBeLessThanOrEqual(bytes!.length);
      const slice = visible(bytes!.subarray(c.start, c.end).toString('utf8'));
      const firstLine = (c.text.split('\n')[0] ?? '').replace(/[\s\u00a0\u200b]+/g, '');
      expect(slice.startsWith(firstLine.slice(0, 24)), `${c.chunkId} start`).toBe(true);
    }
  });

  it('stay near the target size: paragraphs grouped up to ~2,000 characters', () => {
    const sizes = corpus.chunks.map((c) => c.text.length).sort((a, b) => a - b);
    const median = sizes[Math.floor(sizes.length / 2)] ?? 0;
    expect(median).toBeGreaterThan(300);
    expect(median).toBeLessThan(CHUNK_MAX_CHARS);
    const over = sizes.filter((s) => s > CHUNK_MAX_CHARS * 1.5).length;
    expect(over / sizes.length).toBeLessThan(0.02); // only single paragraphs longer than the target
  });

  it('classify Apple 10-K sections by their Item headings with exact-match confidence', () => {
    const path = 'filings/AAPL/aapl-10-k-2024-11-01.html';
    const cases: Array<[RegExp, string, string]> = [
      [/Item 1\.(&#160;|\s)+Business/g, 'business', 'Item 1'],
      [/Item 1A\.(&#160;|\s)+Risk Factors/g, 'risk', 'Item 1A'],
      [/Item 2\.(&#160;|\s)+Properties/g, 'properties', 'Item 2'],
      [/Item 3\.(&#160;|\s)+Legal Proceedings/g, 'legal', 'Item 3'],
      [/Item 7\.(&#160;|\s)+Management/g, 'mda', 'Item 7'],
      [/Item 7A\.(&#160;|\s)+Quantitative/g, 'market_risk', 'Item 7A'],
      [/Item 9A\.(&#160;|\s)+Controls/g, 'controls', 'Item 9A'],
      [/Item 1C\.(&#160;|\s)+Cybersecurity/g, 'compliance', 'Item 1C'],
    ];
    for (const [re, type, item] of cases) {
      const c = chunkAt(path, headingOffset(path, re));
      expect(c, `${item}`).toBeDefined();
      expect(c).toMatchObject({ type, item, confidence: 0.95 });
      expect(c?.part).toMatch(/^Part I{1,2}$/);
    }
  });

  it('classify numbered notes as notes with the note number and title', () => {
    const path = 'filings/AAPL/aapl-10-k-2024-11-01.html';
    const html = (raw.get(path) ?? Buffer.alloc(0)).toString('latin1');
    const m = />Note 7(&#160;|\s)+&#8211;/.exec(html);
    expect(m).not.toBeNull();
    const c = chunkAt(path, m!.index + 1);
    expect(c).toMatchObject({
      type: 'notes',
      note: 'Note 7',
      heading: 'Income Taxes',
      item: 'Item 8',
      confidence: 0.95,
    });
  });

  it('use the Part of a 10-Q to tell Part I Item 2 (MD&A) from Part II Item 1A (risk)', () => {
    const path = 'filings/TSLA/tsla-10-q-2025-07-24.html';
    const mda = chunkAt(path, headingOffset(path, /ITEM 2\. MANAGEMENT/g));
    expect(mda).toMatchObject({ type: 'mda', part: 'Part I', item: 'Item 2' });
    const risk = chunkAt(path, headingOffset(path, /ITEM 1A\. RISK FACTORS/g));
    expect(risk).toMatchObject({ type: 'risk', part: 'Part II', item: 'Item 1A' });
  });

  it('recognise Amazon item headings set in one-row tables', () => {
    const path = 'filings/AMZN/amzn-10-k-2025-02-07.html';
    const risk = corpus.chunks.filter((c) => c.documentPath === path && c.type === 'risk');
    expect(risk.length).toBeGreaterThan(10);
    expect(risk.every((c) => c.item === 'Item 1A' && c.confidence === 0.95)).toBe(true);
  });

  it('give the cover page a low confidence and tables their own table_context chunks', () => {
    const first = corpus.chunks.find((c) => c.documentPath === 'filings/META/meta-10-k-2025-01-30.html');
    expect(first?.confidence).toBeLessThan(0.5);
    expect(first?.review.status).toBe('needs_review');
    const table = corpus.chunks.find(
      (c) => c.type === 'table_context' && /CONSOLIDATED BALANCE SHEETS/i.test(c.text),
    );
    expect(table?.text.split('\n').length).toBeGreaterThan(5);
  });

  it('have unique chunk ids and result keys', () => {
    expect(new Set(corpus.chunks.map((c) => c.chunkId)).size).toBe(corpus.chunks.length);
    expect(new Set(corpus.chunks.map((c) => c.resultKey)).size).toBe(corpus.chunks.length);
    expect(corpus.chunks.every((c) => /^[0-9a-f]{64}$/.test(c.resultKey))).toBe(true);
  });
});
