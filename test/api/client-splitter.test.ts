/**
 * The row splitter behind `stream()` (src/api/row-splitter/): row boundaries found in the byte
 * stream whatever the strings hold or where the chunks are cut, exact numbers, `__proto__` as a
 * plain field, envelope fields on both sides of `rows`, and bodies cut short or not envelopes.
 */
import { describe, expect, test } from 'vitest';
import { isExactNumberLiteral, parseJsonNumber } from '../../src/api/json-number.js';
import { seededRandom } from '../../src/emulator/faults/fault-plan.js';
import {
  createRowExtractor,
  ExtractError,
  parseJsonLossless,
  type Row,
} from '../../src/api/row-extractor.js';
import {
  decodeQuoting,
  inexactLiterals,
  MAX_BATCH_BYTES,
  RowSplitter,
} from '../../src/api/row-splitter/index.js';

/** Feeds `text` in chunks of `step` bytes; returns the rows, the envelope and the rows per take(). */
function split(text: string, step: number): { rows: Row[]; envelope: Row; batches: number[] } {
  const { rows, envelope, batches } = splitWithText(text, step, {});
  return { rows, envelope, batches };
}

/** split() with extractor options; `raw` is each row's rawText() as a string. */
function splitWithText(
  text: string | Buffer,
  step: number,
  opts: { rawText?: boolean },
): { rows: Row[]; envelope: Row; batches: number[]; raw: (string | undefined)[] } {
  const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  const ex = createRowExtractor(opts);
  const rows: Row[] = [];
  const batches: number[] = [];
  const raw: (string | undefined)[] = [];
  for (let i = 0; i < bytes.length; i += step) {
    ex.push(bytes.subarray(i, i + step));
    for (let b = ex.take(); b; b = ex.take()) {
      batches.push(b.length);
      rows.push(...b);
      // Asked out of order (last row first): the answer does not depend on the order.
      const texts = [...b].reverse().map((r) => ex.rawText(r)?.toString('utf8'));
      raw.push(...texts.reverse());
    }
  }
  return { rows, envelope: ex.end(), batches, raw };
}

function failure(text: string, step = text.length): ExtractError {
  try {
    split(text, Math.max(step, 1));
  } catch (err) {
    if (err instanceof ExtractError) return err;
    throw err;
  }
  throw new Error(`no failure for ${text}`);
}

const tricky: Row[] = [
  { s: 'brackets ] } [ { and "quotes", escaped \\" and \\\\', t: '},{"a":1}]' },
  { u: 'unicode \u00e9\u2713\ud83d\ude00 and escapes \\u0041 \n\t', key: '"rows":[' },
  { nested: { a: [1, { b: [[], {}] }], c: { d: { e: null } } }, arr: [[1, 2], [{ x: 'y' }]] },
  { num: -0.5, exp: 25e-3, big: 1, t: true, f: false, n: null },
];

describe('row boundaries', () => {
  const body = JSON.stringify({ scope: 'company', ticker: 'AAPL', rows: tricky, truncated: false, count: 4 });

  test('strings with brackets, braces, quotes, escapes and unicode; nested rows; any chunk size', () => {
    for (const step of [1, 2, 3, 7, 64, body.length]) {
      const { rows, envelope } = split(body, step);
      expect(rows, `step ${step}`).toEqual(tricky);
      expect(envelope).toEqual({ scope: 'company', ticker: 'AAPL', truncated: false, count: 4 });
    }
  });

  test('long strings full of escapes (quotes, backslashes, \\u) cut at any point', () => {
    const piece = 'q" b\\ u\u0001 ] } é\\"';
    const rows = [{ s: piece.repeat(300), t: 'x' }, { s: '\\'.repeat(999) }, { s: '"'.repeat(700), n: 1 }];
    const text = JSON.stringify({ rows, after: piece });
    for (const step of [1, 7, 64, 4096, text.length]) {
      const { rows: got, envelope } = split(text, step);
      expect(got, `step ${step}`).toEqual(rows);
      expect(envelope).toEqual({ after: piece });
    }
  });

  test('one byte at a time hands out each row as soon as it is complete', () => {
    const { batches } = split(body, 1);
    expect(batches).toEqual([1, 1, 1, 1]);
  });

  test('whitespace between and around rows is allowed', () => {
    const spaced =
      '{ "count" : 2 ,\n "rows" : [\n  {"a": 1} ,\r\n\t{"b": [ 2 ]}\n ] ,\n "x" : { "y" : [ ] } }\n';
    for (const step of [1, 5, spaced.length]) {
      const { rows, envelope } = split(spaced, step);
      expect(rows).toEqual([{ a: 1 }, { b: [2] }]);
      expect(envelope).toEqual({ count: 2, x: { y: [] } });
    }
  });

  test('an empty rows array; envelope fields only before or only after rows', () => {
    expect(split('{"count":0,"rows":[]}', 1)).toMatchObject({ rows: [], envelope: { count: 0 } });
    expect(split('{"rows":[{"a":1}],"count":1,"more":{"rows":[1]}}', 3)).toMatchObject({
      rows: [{ a: 1 }],
      envelope: { count: 1, more: { rows: [1] } },
    });
    expect(split('{"scope":"company","rows":[{"a":1}]}', 4).envelope).toEqual({ scope: 'company' });
  });

  test('a key spelled with escapes still names rows; a nested rows key does not', () => {
    expect(split('{"ro\\u0077s":[{"a":1}]}', 2).rows).toEqual([{ a: 1 }]);
    expect(split('{"meta":{"rows":[1,2]},"rows":[{"a":1}]}', 2)).toEqual({
      rows: [{ a: 1 }],
      envelope: { meta: { rows: [1, 2] } },
      batches: [1],
    });
  });

  test('many rows come out in batches of at most MAX_BATCH_BYTES of row text', () => {
    const row = { k: 'x'.repeat(1000) };
    const many = Array.from({ length: 300 }, (_, i) => ({ ...row, i }));
    const big = JSON.stringify({ rows: many });
    const { rows, batches } = split(big, big.length);
    expect(rows).toEqual(many);
    expect(batches.length).toBeGreaterThan(1);
    expect(Math.max(...batches) * 1000).toBeLessThanOrEqual(MAX_BATCH_BYTES + 1100);
  });
});

describe('exact numbers and __proto__ on both paths', () => {
  const text =
    '{"n":12345678.123456789,"inf":1e400,"big":12345678901234567890,"ok":0.1,"e":-3e2,' +
    '"exp":1.5E+300,"long":0.30000000000000004,"__proto__":{"polluted":true}}';
  const expected = {
    n: '12345678.123456789',
    inf: '1e400',
    big: '12345678901234567890',
    ok: 0.1,
    e: -300,
    exp: 1.5e300,
    long: 0.30000000000000004,
  };

  function check(value: unknown): void {
    const v = value as Row;
    expect(v).toMatchObject(expected);
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
    expect(Object.prototype.hasOwnProperty.call(v, '__proto__')).toBe(true);
    expect(Object.getOwnPropertyDescriptor(v, '__proto__')?.value).toEqual({ polluted: true });
    expect((v as { polluted?: unknown }).polluted).toBeUndefined();
  }

  test('one rule: a literal stays a number only when its double prints back to the same value', () => {
    expect(parseJsonNumber('12345678.123456789')).toBe('12345678.123456789');
    expect(parseJsonNumber('1e400')).toBe('1e400');
    expect(parseJsonNumber('-1e400')).toBe('-1e400');
    expect(parseJsonNumber('9007199254740993')).toBe('9007199254740993');
    expect(parseJsonNumber('9007199254740992')).toBe(9007199254740992);
    expect(parseJsonNumber('1.50')).toBe(1.5);
    expect(parseJsonNumber('1e-400')).toBe('1e-400');
    expect(parseJsonNumber('-0')).toBe(-0);
    // The nearest double to 1e23 is not 1e23, but it prints back as 1e23: the rule is about the text.
    expect(isExactNumberLiteral('100000000000000000000000')).toBe(true);
  });

  test('whole body (the client quick path) and streamed rows agree', () => {
    check(parseJsonLossless(text));
    check(parseJsonLossless(Buffer.from(text)));
    for (const step of [1, 5, 1000]) {
      const { rows, envelope } = split(`{"__proto__":{"env":1},"rows":[${text},${text}],"x":1e400}`, step);
      expect(rows).toHaveLength(2);
      for (const row of rows) check(row);
      expect(envelope.x).toBe('1e400');
      expect(Object.getPrototypeOf(envelope)).toBe(Object.prototype);
      expect(Object.getOwnPropertyDescriptor(envelope, '__proto__')?.value).toEqual({ env: 1 });
    }
  });

  test('digits inside strings are left alone', () => {
    const s = '{"rows":[{"a":"12345678.123456789","b":"1e400 ]}"}]}';
    expect(split(s, 2).rows).toEqual([{ a: '12345678.123456789', b: '1e400 ]}' }]);
    expect(parseJsonLossless(s)).toEqual(JSON.parse(s));
  });
});

describe('raw row text (the rawText option)', () => {
  /** Each row's text, or undefined; every chunk size gives the same answer. */
  function rawOf(rowsText: string[]): (string | undefined)[] {
    const body = `{"count":${rowsText.length},"rows":[${rowsText.join(',')}],"truncated":false}`;
    const answers = [1, 3, 17, body.length].map((step) => splitWithText(body, step, { rawText: true }).raw);
    for (const a of answers) expect(a).toEqual(answers[0]);
    return answers[0] as (string | undefined)[];
  }

  test('a row is its own text when it says exactly what JSON.stringify(row) would write', () => {
    const plain = [
      '{"a":1,"b":"x","c":null,"d":true,"e":[1,2,{"f":0.5}],"g":{}}',
      '{"u":"\\u00e9 é ✓ 😀 \\\\ \\" ] } [ {","n":-12,"x":1.5,"y":1e+21,"z":12345678901234}',
      JSON.stringify(tricky[2]),
      '{"__proto__":{"x":1},"k":[]}',
    ];
    expect(rawOf(plain)).toEqual(plain);
    // Rows cut across chunks are paired with their whole text.
    const many = Array.from({ length: 3000 }, (_, i) => JSON.stringify({ i, s: 'v'.repeat(i % 97) }));
    const body = `{"rows":[${many.join(',')}]}`;
    expect(splitWithText(body, 4093, { rawText: true }).raw).toEqual(many);
  });

  test('no text where the parsed row would be written differently', () => {
    const rows = [
      '{"a": 1}', // whitespace between tokens
      '{\n"a":1}', // a newline would split the staged line
      '{"a":1.50}', // a number JavaScript prints another way
      '{"a":1e3}',
      '{"a":-0}',
      '{"a":1E+21}',
      '{"a":0.10000000000000000}',
      '{"a":12345678901234567890}', // kept as text (inexact)
      '{"a":1e400}',
      '{"a":1,"a":2}', // a repeated name: JSON.parse keeps the last
      '{"n":{"b":1,"b":2}}',
      '{"a":[1, 2]}',
    ];
    expect(rawOf(rows)).toEqual(rows.map(() => undefined));
    // The rows are still parsed as without the option.
    const body = `{"rows":[${rows.join(',')}]}`;
    expect(splitWithText(body, 5, { rawText: true }).rows).toEqual(split(body, 5).rows);
  });

  test('invalid UTF-8: no text for its row (decoding replaced it), rows unchanged', () => {
    const good = Array.from({ length: 400 }, (_, i) => `{"i":${i},"s":"${'x'.repeat(200)}"}`);
    for (const at of [0, 1, 250, 399]) {
      const body = Buffer.concat([
        Buffer.from(`{"rows":[${good.slice(0, at).join(',')}${at > 0 ? ',' : ''}{"a":"`),
        Buffer.from([0xff, 0xfe]),
        Buffer.from(`"}${at < 400 ? ',' : ''}${good.slice(at).join(',')}]}`),
      ]);
      for (const step of [body.length, 4096]) {
        const { rows, raw } = splitWithText(body, step, { rawText: true });
        expect(rows[at]).toEqual({ a: '\ufffd\ufffd' });
        expect(rows.filter((_, k) => k !== at)).toEqual(good.map((t) => JSON.parse(t) as Row));
        expect(raw[at]).toBeUndefined();
        // Every text handed out is its row's.
        raw.forEach((t, k) => {
          if (t !== undefined) expect(JSON.parse(t), `row ${k}`).toEqual(rows[k]);
        });
      }
    }
  });

  test('off by default', () => {
    expect(splitWithText('{"rows":[{"a":1}]}', 4, {}).raw).toEqual([undefined]);
  });

  test('kept for the last batch only: memory does not grow with the body', () => {
    const row = JSON.stringify({ s: 'x'.repeat(1000) });
    const body = Buffer.from(`{"rows":[${Array.from({ length: 200 }, () => row).join(',')}]}`);
    const ex = createRowExtractor({ rawText: true });
    ex.push(body);
    const first = ex.take() as Row[];
    expect(ex.rawText(first[0] as Row)?.toString()).toBe(row);
    const second = ex.take() as Row[];
    expect(second.length).toBeGreaterThan(0);
    expect(ex.rawText(first[1] as Row)).toBeUndefined();
    expect(ex.rawText(second[1] as Row)?.toString()).toBe(row);
    expect(ex.rawText({ s: 'x'.repeat(1000) })).toBeUndefined(); // equal, but not a row it returned
  });

  test('a view of the received bytes, not handed out once the next chunk is pushed', () => {
    // The text is not copied: the next push() may overwrite the bytes (the carried-over row is
    // moved to the front of the work buffer), so a batch's text ends with the push after it.
    const rows = Array.from({ length: 40 }, (_, i) => JSON.stringify({ i, s: `${i}`.repeat(40) }));
    const body = Buffer.from(`{"rows":[${rows.join(',')}]}`);
    for (const step of [97, 500, 1000]) {
      const ex = createRowExtractor({ rawText: true });
      let checked = 0;
      for (let i = 0; i < body.length; i += step) {
        const held: Row[] = [];
        ex.push(body.subarray(i, i + step));
        for (let b = ex.take(); b; b = ex.take()) {
          for (const r of b) expect(ex.rawText(r)?.toString()).toBe(JSON.stringify(r));
          held.push(...b);
        }
        if (i + step >= body.length) break;
        ex.push(Buffer.alloc(0));
        for (const r of held) expect(ex.rawText(r)).toBeUndefined();
        checked += held.length;
      }
      expect(checked).toBeGreaterThan(0);
    }
  });
});

describe('the quick path for compact bodies', () => {
  /** Rows shaped like facts/full rows: hex keys, dates with colons and dashes, nulls, small integers. */
  function factsLike(count: number, extra: (i: number) => Row = () => ({})): Row[] {
    return Array.from({ length: count }, (_, i) => ({
      fact_key: (i * 7919).toString(16).padStart(64, 'a1e9'),
      period_key: `duration:2025-01-${String((i % 28) + 1).padStart(2, '0')}..2026-01-25`,
      period_start: null,
      period_end_year: 2025 + (i % 3),
      scale: -2,
      value_num: '2345546.35',
      metric_label: 'Accounts Payable, Current',
      is_consolidated: i % 2 === 0,
      axis_types: i % 5 === 0 ? ['segment'] : [],
      highlight: { frame: 'CY2026Q2I', fy: null },
      ...extra(i),
    }));
  }

  function run(body: string, step: number, opts: { rawText?: boolean } = {}) {
    const bytes = Buffer.from(body, 'utf8');
    const splitter = new RowSplitter(opts);
    const rows: Row[] = [];
    const raw: (string | undefined)[] = [];
    const batches: number[] = [];
    for (let i = 0; i < bytes.length; i += step) {
      splitter.push(bytes.subarray(i, i + step));
      for (let b = splitter.take(); b; b = splitter.take()) {
        batches.push(b.length);
        rows.push(...b);
        raw.push(...b.map((r) => splitter.rawText(r)?.toString('utf8')));
      }
    }
    return { rows, raw, batches, envelope: splitter.finish(), stats: splitter.stats };
  }

  test('compact rows come out of the quick path, equal to JSON.parse, with their text', () => {
    const rows = factsLike(3000);
    const body = JSON.stringify({ scope: 'company', rows, count: rows.length });
    for (const step of [65536, 16384, 1000, body.length]) {
      for (const rawText of [false, true]) {
        const got = run(body, step, { rawText });
        expect(got.rows, `step ${step}`).toEqual(rows);
        expect(got.envelope).toEqual({ scope: 'company', count: rows.length });
        // The scanner reads only the rows a chunk boundary cuts (and the first).
        if (step >= 16384)
          expect(got.stats.quickRows, `step ${step}`).toBeGreaterThan(got.stats.scannedRows * 5);
        expect(Math.max(...got.batches) * 300).toBeLessThanOrEqual(MAX_BATCH_BYTES + 600);
        if (rawText) expect(got.raw).toEqual(rows.map((r) => JSON.stringify(r)));
      }
    }
  });

  test('an inexact literal or an exponent in a batch sends that batch to the scanner', () => {
    const rows = factsLike(2000, (i) =>
      i === 700 ? { big: '12345678901234567890' } : i === 1500 ? { e: 25e-3, x: -0.5 } : {},
    );
    // The API sends it as a number literal; it arrives as its exact text.
    const text = JSON.stringify({ rows }).replace(
      '"big":"12345678901234567890"',
      '"big":12345678901234567890',
    );
    expect(text).toContain('"big":12345678901234567890');
    for (const rawText of [false, true]) {
      const got = run(text, 65536, { rawText });
      expect(got.rows[700]?.big).toBe('12345678901234567890');
      expect(got.rows[1500]).toMatchObject({ e: 0.025, x: -0.5 });
      expect(got.rows).toEqual(rows);
      expect(got.stats.quickRows).toBeGreaterThan(1000);
      expect(got.stats.scannedRows).toBeGreaterThan(100); // the two batches with those rows
      if (rawText) {
        expect(got.raw[700]).toBeUndefined();
        expect(got.raw[1500]).toBe(JSON.stringify(rows[1500]));
        expect(got.raw[0]).toBe(JSON.stringify(rows[0]));
      }
    }
  });

  test('row text: a `},{` inside a string, a repeated name, escapes, non-ASCII', () => {
    const texts = factsLike(1500).map((r) => JSON.stringify(r));
    texts[300] = texts[300]!.replace('"scale":-2', '"scale":-2,"note":"a},{b"');
    texts[600] = texts[600]!.replace('"scale":-2', '"scale":-2,"scale":-3');
    texts[900] = texts[900]!.replace('"scale":-2', '"scale":-2,"q":"say \\"hi\\""');
    texts[1200] = texts[1200]!.replace('"scale":-2', '"scale":-2,"name":"Société"');
    const body = `{"rows":[${texts.join(',')}]}`;
    for (const step of [65536, 7000]) {
      const got = run(body, step, { rawText: true });
      expect(got.rows).toEqual(texts.map((t) => JSON.parse(t) as Row));
      expect(got.rows[600]?.scale).toBe(-3);
      expect(got.raw[600]).toBeUndefined();
      const expected = texts.map((t, k) => (k === 600 ? undefined : t));
      expect(got.raw).toEqual(expected);
      expect(got.stats.quickRows).toBeGreaterThan(0);
    }
  });

  test('a `},{` inside rows (arrays of objects) turns the quick path off; rows unchanged', () => {
    const rows = Array.from({ length: 2000 }, (_, i) => ({ i, list: [{ a: i }, { b: 'x'.repeat(50) }] }));
    const body = JSON.stringify({ rows });
    for (const rawText of [false, true]) {
      const got = run(body, 65536, { rawText });
      expect(got.rows).toEqual(rows);
      // A cut may land on a row boundary by chance; the first that does not turns the quick path off.
      expect(got.stats.scannedRows).toBeGreaterThan(got.stats.quickRows);
      if (rawText) expect(got.raw).toEqual(rows.map((r) => JSON.stringify(r)));
    }
  });

  test('rows separated by whitespace are scanned in full batches, not one row at a time', () => {
    const rows = factsLike(3000);
    const body = `{"rows":[\n${rows.map((r) => JSON.stringify(r)).join(',\n')}\n]}`;
    for (const step of [65536, 4096]) {
      const got = run(body, step);
      expect(got.rows).toEqual(rows);
      expect(got.stats.quickRows).toBe(0);
      expect(got.batches.length, `step ${step}`).toBeLessThan(rows.length / 5);
    }
  });
});

describe('both paths against the literal finder and JSON.parse, on generated bodies', () => {
  const PIECES = ['x', 'abc', '},{', ' , ', ':1e5', '12345678901234567890', '[{'];
  const ODD_PIECES = ['"', '\\', 'é', '😀', '\n'];
  const INTEGERS = ['0', '7', '-12', '2026', '123456789012345'];
  const ODD_NUMBERS = [
    '-0',
    '1.5',
    '1.50',
    '1e3',
    '-3E+2',
    '0.1',
    '12345678901234567890',
    '9007199254740993',
  ];
  const MORE_ODD_NUMBERS = ['12345678.123456789', '1e400', '0.30000000000000004'];
  const KEYS = ['fact_key', 'value', 'a', 'rows', 'k},{', 'list', 'n'];

  /**
   * JSON text of a value, sometimes spelled as JSON.stringify would not (escapes, literals, spaces).
   * `compact`: only what the quick path's row text accepts (ASCII, no escape or space, integers),
   * so that path is the one that runs, still with `},{` inside strings and repeated names.
   */
  function valueText(r: () => number, depth: number, compact: boolean): string {
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
    const roll = r();
    if (roll < 0.35) {
      const pieces = compact ? PIECES : [...PIECES, ...ODD_PIECES];
      let str = '';
      const n = Math.floor(r() * 6);
      for (let i = 0; i < n; i++) str += pick(pieces);
      if (r() < 0.02) str += 'y'.repeat(70_000); // longer than a batch
      const text = JSON.stringify(str);
      return r() < 0.1 && !compact ? text.replace(/x/g, '\\u0078') : text;
    }
    if (roll < 0.6) return pick(compact ? INTEGERS : [...INTEGERS, ...ODD_NUMBERS, ...MORE_ODD_NUMBERS]);
    if (roll < 0.75) return pick(['true', 'false', 'null']);
    if (depth > 2) return 'null';
    if (roll < 0.87) {
      const items = Array.from({ length: Math.floor(r() * 4) }, () => valueText(r, depth + 1, compact));
      return `[${items.join(r() < 0.1 && !compact ? ', ' : ',')}]`;
    }
    return objectText(r, depth + 1, compact);
  }

  function objectText(r: () => number, depth: number, compact: boolean): string {
    const keys = compact ? KEYS : [...KEYS, 'é'];
    const members: string[] = [];
    for (let i = Math.floor(r() * 6); i > 0; i--) {
      const key = keys[Math.floor(r() * keys.length)] as string; // repeats happen
      const colon = r() < 0.05 && !compact ? ' : ' : ':';
      members.push(`${JSON.stringify(key)}${colon}${valueText(r, depth, compact)}`);
    }
    return `{${members.join(',')}}`;
  }

  test('rows and envelopes equal the oracle; row text only where it says the same', () => {
    for (let seed = 1; seed <= 60; seed++) {
      const r = seededRandom(seed); // a failure names the seed that reproduces it
      const compact = seed % 2 === 0;
      const rowTexts = Array.from({ length: 20 + Math.floor(r() * 300) }, () => objectText(r, 0, compact));
      const sep = r() < 0.15 && !compact ? ',\n' : ',';
      const body = `{"scope":"company","n":${valueText(r, 3, false)},"rows":[${rowTexts.join(sep)}],"after":${valueText(r, 3, false)}}`;
      // The oracle is the byte scan's literal finder, not the token check both quick paths share.
      const bytes = Buffer.from(body, 'utf8');
      const whole = JSON.parse(decodeQuoting(bytes, 0, bytes.length, inexactLiterals(bytes))) as Row & {
        rows: Row[];
      };
      expect(parseJsonLossless(body), `seed ${seed}`).toEqual(whole); // the typed methods' path
      const { rows: expected, ...envelope } = whole;
      const step = [1 + Math.floor(r() * 50), 4096, 65536, body.length][Math.floor(r() * 4)] as number;
      for (const rawText of [false, true]) {
        const got = splitWithText(body, step, { rawText });
        expect(got.rows, `seed ${seed} step ${step}`).toEqual(expected);
        expect(got.envelope, `seed ${seed}`).toEqual(envelope);
        got.raw.forEach((t, k) => {
          if (t === undefined) return;
          expect(t, `seed ${seed} row ${k}`).toBe(rowTexts[k]);
          expect(JSON.parse(t), `seed ${seed} row ${k}`).toEqual(expected[k]);
          // No repeated name either (JSON.parse would hide it): without escapes, the same length.
          if (!t.includes('\\'))
            expect(t.length, `seed ${seed} row ${k}`).toBe(JSON.stringify(expected[k]).length);
        });
        if (rawText) {
          // A row spelled exactly as JSON.stringify writes it always gets its text.
          expected.forEach((row, k) => {
            if (JSON.stringify(row) === rowTexts[k])
              expect(got.raw[k], `seed ${seed} row ${k}`).toBe(rowTexts[k]);
          });
        }
      }
    }
  });
});

describe('bodies cut short or not envelopes', () => {
  const body = JSON.stringify({ scope: 'company', rows: tricky, count: 4 });

  test('cut mid-row, mid-string, mid-escape, mid-number, between rows or after rows: truncated', () => {
    const cuts = [
      body.indexOf('brackets') + 3, // mid-string
      body.indexOf('\\"') + 1, // right after a backslash
      body.indexOf('-0.5') + 2, // mid-number
      body.indexOf('},{') + 1, // between rows
      body.indexOf('],"count"') + 1, // after rows
      body.length - 1,
      10, // in the envelope before rows
    ];
    for (const cut of cuts) {
      for (const step of [1, 9, cut]) {
        const err = failure(body.slice(0, cut), step);
        expect(err.kind, `cut ${cut} step ${step}`).toBe('truncated');
      }
    }
    expect(failure('').kind).toBe('truncated');
  });

  test('not JSON, not an envelope, or bad JSON inside a row: malformed', () => {
    const cases = [
      '[1,2]',
      '{"rows":{"a":1}}',
      '{"rows":[1]}',
      '{"rows":["a"]}',
      '{"rows":[[1]]}',
      '{"count":0}',
      '{"rows":[]}}',
      '{"rows":[]} x',
      '{"rows":[{"a":1}{"b":2}]}',
      '{"rows":[{"a":1},]}',
      '{"rows":[{"a":xyz}]}',
      '{"rows":[{"a":xyz',
      '{"rows":[{"a":1},{"b":2},1,{"c":3}]}',
      '{"rows":[{"a":1},{"b":2},[1],{"c":3}]}',
      '{"rows":[{"a":1},{"b":2}}],{"c":3}]}',
      '{"rows":[{"a":1},{"b":xyz},{"c":3}]}',
      '<html>busy</html>',
    ];
    for (const c of cases) {
      for (const step of [1, c.length]) expect(failure(c, step).kind, `${c} step ${step}`).toBe('malformed');
    }
  });
});
