/**
 * Compact rows read without JSON.parse (src/api/compact-rows.ts, RowSplitter.takeCompact): on
 * generated batches and bodies, adversarial ones included, the scanner gives the same rows, texts
 * and field kinds as JSON.parse + kindOf, and accepts no text JSON.parse would reject or write
 * differently; everything else goes the JSON.parse way.
 */
import { describe, expect, test } from 'vitest';
import { COMPACT_TOKENS, CompactScanner, type CompactBatch } from '../../src/api/compact-rows.js';
import { createRowExtractor, type Row } from '../../src/api/row-extractor.js';
import { seededRandom } from '../../src/emulator/faults/fault-plan.js';
import { Kind, kindOf } from '../../src/output/staged-part/field-kinds.js';

type Rand = () => number;

/** What the splitter's quick path does: the token check, then the scanner. */
const scanCompact = (scanner: CompactScanner, text: string) =>
  COMPACT_TOKENS.test(text) ? scanner.scan(text) : undefined;

const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;

/** Strings a naive cut would trip on; none needs escaping (a quote would), so they stay compact. */
const TRICKY_STRINGS = ['},{', ':', '[', ']', '{', '}', '},{a:1}', 'x:[1]', ']},{[', '', 'plain', ' spaced '];
const DATES = [
  '2024-01-31',
  '1999-12-01',
  '2024-1-01',
  '2024-01-1',
  '20240-1-01',
  '2024/01/31',
  'x024-01-31',
];
const INTS = [0, 1, -1, 42, -7, 999_999_999_999_999, -999_999_999_999_999, 100_000_000_000_000];

function scalar(r: Rand): unknown {
  switch (Math.floor(r() * 6)) {
    case 0:
      return pick(r, TRICKY_STRINGS);
    case 1:
      return pick(r, DATES);
    case 2:
      return pick(r, INTS);
    case 3:
      return r() < 0.5;
    case 4:
      return null;
    default:
      return `s${Math.floor(r() * 1000)}`;
  }
}

function value(r: Rand, depth: number): unknown {
  const roll = r();
  if (depth > 3 || roll < 0.6) return scalar(r);
  if (roll < 0.7) return Array.from({ length: Math.floor(r() * 3) }, () => pick(r, DATES));
  if (roll < 0.85) return Array.from({ length: Math.floor(r() * 4) }, () => value(r, depth + 1));
  const o: Row = {};
  const n = Math.floor(r() * 4);
  for (let i = 0; i < n; i++) o[pick(r, ['k', 'v', '1', 'dims', '},{', `n${i}`])] = value(r, depth + 1);
  return o;
}

const NAMES = ['ticker', 'concept', 'value', 'period_end', 'dims', 'tags', 'flag', 'note'];

/** Rows sharing one name order, any values (compact when stringified). */
function rows(r: Rand, count: number, names = NAMES): Row[] {
  return Array.from({ length: count }, () => Object.fromEntries(names.map((n) => [n, value(r, 0)])));
}

const batchText = (rs: Row[]): string => JSON.stringify(rs).slice(1, -1);

/**
 * Row k of a scan: the value its text parses to, whether JSON.stringify of that value is as long as
 * the text (the same text up to the order of integer-like nested names, which RowSplitter.rawText
 * allows too), and its field kinds.
 */
function rowsOf(text: string, scan: { names: readonly string[]; bounds: number[]; kinds: number[] }) {
  const n = scan.names.length;
  return Array.from({ length: scan.bounds.length / 2 }, (_, k) => {
    const own = text.slice(scan.bounds[2 * k], scan.bounds[2 * k + 1]);
    const value = JSON.parse(own) as Row;
    return {
      value,
      stringifiesAsItself: JSON.stringify(value).length === own.length,
      kinds: Object.fromEntries(scan.names.map((name, i) => [name, scan.kinds[k * n + i]])),
    };
  });
}

/** The reference: JSON.parse of the whole batch, kindOf of each row's fields. */
function reference(text: string) {
  const parsed = JSON.parse(`[${text}]`) as Row[];
  return parsed.map((row) => ({
    value: row,
    stringifiesAsItself: true,
    kinds: Object.fromEntries(Object.keys(row).map((k) => [k, kindOf(row[k])])),
  }));
}

describe('the compact scanner against JSON.parse + kindOf', () => {
  test('generated batches: same rows, texts and kinds (dates, near-dates, nested, empty, 15 digits)', () => {
    const r = seededRandom(27);
    for (let round = 0; round < 400; round++) {
      const text = batchText(rows(r, 1 + Math.floor(r() * 20)));
      const scan = scanCompact(new CompactScanner(), text);
      expect(scan, text).toBeDefined();
      expect(rowsOf(text, scan!)).toEqual(reference(text));
    }
  });

  test('every kind, each at its own field', () => {
    const row = {
      s: 'x',
      d: '2024-02-29',
      near: '2024-1-01',
      i: -123456789012345,
      z: 0,
      b: false,
      n: null,
      sa: ['a', '2024-01-01'],
      empty: [],
      a: ['a', 1],
      nested: [[]],
      o: { a: [1, { b: {} }] },
    };
    const scan = scanCompact(new CompactScanner(), JSON.stringify(row));
    expect(rowsOf(JSON.stringify(row), scan!)[0]!.kinds).toEqual({
      s: Kind.STRING,
      d: Kind.DATE_STRING,
      near: Kind.STRING,
      i: Kind.INT,
      z: Kind.INT,
      b: Kind.BOOLEAN,
      n: Kind.NULL,
      sa: Kind.STRING_ARRAY,
      empty: Kind.STRING_ARRAY,
      a: Kind.ARRAY,
      nested: Kind.ARRAY,
      o: Kind.OBJECT,
    });
  });

  test('names other than the template, or text JSON.stringify would not write: turned down', () => {
    const cases = [
      '{"a":1,"b":2},{"b":2,"a":1}', // another order
      '{"a":1,"b":2},{"a":1}', // a missing name
      '{"a":1,"b":2},{"a":1,"b":2,"c":3}', // an extra name
      '{"a":1,"a":2}', // a repeated name (the template)
      '{"a":1,"b":2},{"a":1,"b":2,"b":3}', // a repeated name (a later row)
      '{"a":{"x":1,"x":2}}', // repeated in a nested object
      '{"1":1,"a":2}', // JSON.parse puts an integer-like name first
      '{}', // no names
      '{"a":-0}',
      '{"a":1.5}',
      '{"a":1e3}',
      '{"a":1000000000000000}', // 16 digits
      '{"a":01}',
      '{"a": 1}',
      '{"a":1} ,{"a":2}',
      '{"a":"t\\"q"}',
      '{"a":"tab\tin"}',
    ];
    for (const c of cases) expect(scanCompact(new CompactScanner(), c), c).toBeUndefined();
  });

  test('malformed text is never accepted: unbalanced, a value missing, `,}`, `,]`, garbage', () => {
    const cases = [
      '{"a":1',
      '{"a":[1,2}',
      '{"a":{"b":1}',
      '{"a":1}}',
      '{"a":}',
      '{"a":1,}',
      '{"a":[1,]}',
      '{"a":[,1]}',
      '{"a":1},',
      '{"a":1},{',
      '{"a":1}{"a":2}',
      '{"a":tru}',
      '{"a":nulll}',
      '{"a":-}',
      '{"a":"x}',
      '{"a":1,"b"}',
      '{"a":{"b"}}',
      '{"a":{1:2}}',
    ];
    for (const c of cases) {
      expect(() => JSON.parse(`[${c}]`) as unknown, c).toThrow();
      expect(scanCompact(new CompactScanner(), c), c).toBeUndefined();
    }
  });

  test('mutated batches: whatever the scanner accepts, JSON.parse accepts and reads the same', () => {
    const r = seededRandom(2711);
    const alphabet = '{}[],:"0123456789-.eEtrufalsn x\\';
    let accepted = 0;
    for (let round = 0; round < 3000; round++) {
      const text = batchText(rows(r, 1 + Math.floor(r() * 4), ['a', 'b', 'c']));
      const at = Math.floor(r() * text.length);
      const edit = Math.floor(r() * 3);
      const ch = pick(r, [...alphabet]);
      const mutated =
        edit === 0
          ? text.slice(0, at) + text.slice(at + 1)
          : edit === 1
            ? text.slice(0, at) + ch + text.slice(at)
            : text.slice(0, at) + ch + text.slice(at + 1);
      const scanner = new CompactScanner();
      scanCompact(scanner, text); // a template learned from the unmutated batch, as from an earlier batch
      const scan = scanCompact(scanner, mutated);
      if (scan === undefined) continue;
      accepted++;
      expect(rowsOf(mutated, scan), mutated).toEqual(reference(mutated));
    }
    // The property is about accepted texts: many must be (edits inside strings, digits for digits).
    expect(accepted).toBeGreaterThan(300);
  });
});

/** The rows of a body in `step`-byte chunks, through take() + rawText() or takeCompact(). */
function stream(body: Buffer, step: number, compact: boolean) {
  const ex = createRowExtractor({ rawText: true });
  const out: { text: string | undefined; kinds: Record<string, number> }[] = [];
  let unparsed = 0;
  for (let i = 0; i < body.length; i += step) {
    ex.push(body.subarray(i, i + step));
    for (let b = compact ? ex.takeCompact() : ex.take(); b; b = compact ? ex.takeCompact() : ex.take()) {
      if (Array.isArray(b)) {
        for (const row of b) {
          const kinds = Object.fromEntries(Object.keys(row).map((k) => [k, kindOf(row[k])]));
          out.push({ text: ex.rawText(row)?.toString('utf8'), kinds });
        }
        continue;
      }
      const batch = b as CompactBatch;
      unparsed += batch.bounds.length / 2;
      const text = batch.bytes.toString('latin1');
      const n = batch.names.length;
      for (let k = 0; k < batch.bounds.length / 2; k++) {
        out.push({
          text: text.slice(batch.bounds[2 * k], batch.bounds[2 * k + 1]),
          kinds: Object.fromEntries(batch.names.map((name, i) => [name, batch.kinds[k * n + i]!])),
        });
      }
    }
  }
  ex.end();
  return { rows: out, unparsed };
}

describe('takeCompact() against take() + rawText()', () => {
  test('generated bodies, any chunk size: the same rows, texts and kinds; non-ASCII rows parsed', () => {
    const r = seededRandom(99);
    let unparsed = 0;
    for (let round = 0; round < 12; round++) {
      const rs = rows(r, 400 + Math.floor(r() * 400));
      // Some bodies with rows the scanner turns down: non-ASCII, another name order, a float.
      if (round % 3 === 1) rs[Math.floor(r() * rs.length)]!.note = 'caf\u00e9';
      if (round % 3 === 2) {
        rs.splice(5, 0, { concept: 'x', ticker: 'y' }, { ticker: 'z', value: 1.5 });
      }
      const body = Buffer.from(JSON.stringify({ ticker: 'T', rows: rs, count: rs.length }), 'utf8');
      for (const step of [body.length, 65_536, 7_001]) {
        const compact = stream(body, step, true);
        expect(compact.rows).toEqual(stream(body, step, false).rows);
        expect(compact.rows).toHaveLength(rs.length);
        unparsed += compact.unparsed;
      }
    }
    expect(unparsed).toBeGreaterThan(10_000);
  });

  test('a body the scanner cannot prove fails as it does on take(): malformed, nothing handed out unparsed', () => {
    const r = seededRandom(5);
    const [before, after] = [batchText(rows(r, 1000, ['a', 'b'])), batchText(rows(r, 1000, ['a', 'b']))];
    // `,}` closing the last row of the first half, well inside the body (past the first batches).
    const body = Buffer.from(`{"rows":[${before.slice(0, -1)},},${after}]}`);
    expect(() => stream(body, body.length, true)).toThrow(/invalid JSON|not an object/);
    expect(() => stream(body, body.length, false)).toThrow(/invalid JSON|not an object/);
  });
});
