/**
 * The part writer (staging) and the small pure pieces of the output module: file planning, field
 * kinds and type inference, exact decimal text, layout names.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InputError } from '../../src/errors.js';
import { baseSchema } from '../../src/datasets/index.js';
import { convertSelect } from '../../src/output/convert/convert-sql.js';
import { FieldTracker, Kind } from '../../src/output/staged-part/field-kinds.js';
import { nextSlice, type PlannedPart } from '../../src/output/staged-part/parquet/file-plan.js';
import { createRowExtractor } from '../../src/api/row-extractor.js';
import { createPartWriter } from '../../src/output/index.js';
import { assertSnapshotId } from '../../src/output/catalog/paths.js';
import { tickerFileName } from '../../src/output/staged-part/layout.js';
import { inferType } from '../../src/output/convert/schema-registry.js';
import { readFieldsSidecar } from '../../src/output/staged-part/sidecar.js';
import { fieldsSidecarPath } from '../../src/output/staged-part/index.js';
import { MAX_WAITING_PLAIN_FILES } from '../../src/output/staged-part/index.js';
import { piecesDir } from '../../src/output/staged-part/layout.js';
import { RowText } from '../../src/types.js';
import { exactDecimal, syntheticFactRow } from '../helpers/synthetic-rows.js';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'fx-output-writer-'));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const lineage = (ticker: string) => ({
  snapshotId: 'snap-w',
  fetchedAt: '2026-11-21T03:04:05.678Z',
  requestedTicker: ticker,
});

function readLines(file: string): Promise<Record<string, unknown>[]> {
  return readFile(file).then((b) =>
    gunzipSync(b)
      .toString('utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>),
  );
}

describe('createPartWriter', () => {
  it('stages rows with lineage under a temporary name and renames on finish', async () => {
    const w = createPartWriter({
      root,
      snapshotId: 'snap-w',
      dataset: 'facts_full',
      ticker: 'aapl',
      lineage: lineage('aapl'),
    });
    const rows = Array.from({ length: 2500 }, (_, i) =>
      syntheticFactRow(i, { cik: '0000320193', ticker: 'AAPL' }),
    );
    for (const r of rows) await w.write(r);
    const dir = join(root, '_staging', 'snap-w', 'facts_full');
    // Before finish, nothing under the final name.
    expect(existsSync(join(dir, 'AAPL.ndjson.gz'))).toBe(false);
    expect((await readdir(dir)).some((n) => n.startsWith('AAPL.ndjson.gz.tmp-'))).toBe(true);
    const staged = await w.finish();
    expect(staged.file).toBe('_staging/snap-w/facts_full/AAPL.ndjson.gz');
    expect(staged.rows).toBe(rows.length);
    const bytes = await readFile(join(root, staged.file));
    expect(staged.bytes).toBe(bytes.length);
    expect(staged.sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
    expect((await readdir(dir)).filter((n) => n.includes('.tmp-'))).toEqual([]);

    const lines = await readLines(join(root, staged.file));
    expect(lines).toHaveLength(rows.length);
    expect(lines[7]).toEqual({
      ...rows[7],
      _snapshot_id: 'snap-w',
      _fetched_at: '2026-11-21T03:04:05.678Z',
      _requested_ticker: 'aapl',
    });
    // Values beyond 2^53 stay exact strings.
    expect(lines[97]?.value_scaled_int).toBe(rows[97]?.value_scaled_int);

    const sidecar = await readFieldsSidecar(join(dir, 'AAPL.fields.json'));
    expect(sidecar?.rows).toBe(rows.length);
    expect(sidecar?.sha256).toBe(staged.sha256);
    const kinds = new Map(sidecar?.fields.names.map((n, i) => [n, sidecar.fields.kinds[i]]));
    expect(kinds.get('period_start')).toBe(Kind.NULL | Kind.DATE_STRING);
    expect(kinds.get('axis_types')).toBe(Kind.STRING_ARRAY);
    expect(kinds.get('axis_member_path')).toBe(Kind.NULL | Kind.ARRAY);
    expect(kinds.has('_snapshot_id')).toBe(false);
  });

  it('abort leaves no file; a retried attempt replaces the earlier one', async () => {
    const first = createPartWriter({
      root,
      snapshotId: 'snap-w',
      dataset: 'evidence',
      ticker: 'MSFT',
      lineage: lineage('MSFT'),
    });
    await first.write({ evidence_key: 'e1' });
    await first.abort();
    const dir = join(root, '_staging', 'snap-w', 'evidence');
    expect(await readdir(dir)).toEqual([]);
    await expect(first.finish()).rejects.toThrow(/finish after aborted/);

    for (const n of [3, 2]) {
      const w = createPartWriter({
        root,
        snapshotId: 'snap-w',
        dataset: 'evidence',
        ticker: 'MSFT',
        lineage: lineage('MSFT'),
      });
      for (let i = 0; i < n; i++) await w.write({ evidence_key: `e${i}` });
      await w.finish();
    }
    expect(await readLines(join(dir, 'MSFT.ndjson.gz'))).toHaveLength(2);
  });

  it('keeps awkward rows exact: empty objects, bigint, reserved names, odd tickers', async () => {
    const w = createPartWriter({
      root,
      snapshotId: 'snap-w',
      dataset: 'series_catalog',
      ticker: 'BRK/B',
      lineage: lineage('BRK/B'),
    });
    await w.write({});
    await w.write({ big: 123456789012345678901234567890n, nested: { a: [1, null] } });
    await w.write({ _snapshot_id: 'from-the-api', x: 1 });
    const staged = await w.finish();
    expect(staged.file).toBe('_staging/snap-w/series_catalog/BRK~2FB.ndjson.gz');
    const text = gunzipSync(await readFile(join(root, staged.file))).toString('utf8');
    expect(text).toContain('"big":123456789012345678901234567890,');
    const lines = text
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines[0]).toEqual({
      _snapshot_id: 'snap-w',
      _fetched_at: '2026-11-21T03:04:05.678Z',
      _requested_ticker: 'BRK/B',
    });
    expect(lines[2]).toMatchObject({ _api_snapshot_id: 'from-the-api', x: 1, _snapshot_id: 'snap-w' });
  });

  it("copies a row's received text (rawJson) to the same staged bytes as serialising it", async () => {
    const body = JSON.stringify({
      rows: [
        ...Array.from({ length: 3000 }, (_, i) => syntheticFactRow(i, { cik: '0000320193', ticker: 'AAPL' })),
        {},
        { note: 'ü ✓ "quoted" \\ ]}', n: -1.25, list: [1, { a: null }] },
        { _fetched_at: 'from-the-api', x: 1 }, // a reserved name: renamed, so serialised from here on
        { value: 'BIG', y: 2 },
      ],
    })
      .replace('"BIG"', '12345678901234567890') // inexact: kept as text
      .replace('"y":2', '"y":2.0'); // printed otherwise by JavaScript
    const ex = createRowExtractor({ rawText: true });
    ex.push(Buffer.from(body));
    const rows: Record<string, unknown>[] = [];
    const texts: (Uint8Array | undefined)[] = [];
    for (let b = ex.take(); b; b = ex.take()) {
      rows.push(...b);
      texts.push(...b.map((r) => ex.rawText(r)));
    }
    ex.end();
    expect(texts.filter((t) => t !== undefined).length).toBe(3003);
    const staged: string[] = [];
    for (const copy of [true, false]) {
      const w = createPartWriter({
        root,
        snapshotId: 'snap-w',
        dataset: 'facts_full',
        ticker: copy ? 'RAW' : 'SER',
        lineage: lineage('X'),
        chunkBytes: 4096,
      });
      for (let i = 0; i < rows.length; i++)
        await w.write(rows[i] as Record<string, unknown>, copy ? texts[i] : undefined);
      const part = await w.finish();
      expect(part.rows).toBe(rows.length);
      staged.push(gunzipSync(await readFile(join(root, part.file))).toString('utf8'));
    }
    expect(staged[0]).toBe(staged[1]);
    const lines = (staged[0] as string).split('\n');
    expect(lines[3001]).toBe(
      '{"note":"ü ✓ \\"quoted\\" \\\\ ]}","n":-1.25,"list":[1,{"a":null}],' +
        '"_snapshot_id":"snap-w","_fetched_at":"2026-11-21T03:04:05.678Z","_requested_ticker":"X"}',
    );
    expect(JSON.parse(lines[3002] as string)).toMatchObject({ _api_fetched_at: 'from-the-api', x: 1 });
    expect(lines[3003]).toContain('"value":"12345678901234567890","y":2,');
    // The copy is what was staged: text that differs from JSON.stringify only in its escapes stays as received.
    const escaped = createRowExtractor({ rawText: true });
    escaped.push(Buffer.from('{"rows":[{"e":"\\u00e9"}]}'));
    const [row] = escaped.take() as Record<string, unknown>[];
    const w = createPartWriter({
      root,
      snapshotId: 'snap-w',
      dataset: 'facts_full',
      ticker: 'ESC',
      lineage: lineage('X'),
    });
    await w.write(row as Record<string, unknown>, escaped.rawText(row as Record<string, unknown>));
    const part = await w.finish();
    const line = gunzipSync(await readFile(join(root, part.file))).toString('utf8');
    expect(line.startsWith('{"e":"\\u00e9","_snapshot_id":"snap-w",')).toBe(true);
  });

  it('stages unparsed rows (writeText) to the same bytes and field list as the parsed ones', async () => {
    // Every kind the compact scanner reads, dates and near-dates, nested and empty arrays and
    // objects, rows it turns down (a fraction, non-ASCII, another name order), and a reserved name.
    // One kind per field, so that a row given a wrong kind shows in the OR over the part.
    const kinded = (i: number): Record<string, unknown> => ({
      ticker: 'AAPL',
      end: `2024-0${(i % 9) + 1}-30`,
      near: `2024-${(i % 9) + 1}-01`,
      val: i * 1_000_003 - 999_999_999_999,
      flag: i % 2 === 0,
      none: null,
      tags: i % 2 === 0 ? [] : ['a', '2024-01-01'],
      nested: i % 2 === 0 ? [['x']] : [1, 'y'],
      dims: i % 2 === 0 ? {} : { a: { b: [1, {}] }, '},{': ':' },
    });
    const body = (rows: Record<string, unknown>[]): Buffer => Buffer.from(JSON.stringify({ rows }));
    const bodies = [
      body([
        ...Array.from({ length: 4000 }, (_, i) => kinded(i)),
        { ...kinded(1), val: 1.5 },
        { ...kinded(2), ticker: 'café' },
        { end: '2024-01-01', ...kinded(3) },
        ...Array.from({ length: 2000 }, (_, i) => kinded(i + 7)),
      ]),
      // A name the writer renames (`_fetched_at`), from the first row on.
      body(Array.from({ length: 3000 }, (_, i) => ({ _fetched_at: `api-${i}`, ...kinded(i) }))),
    ];
    for (const [k, b] of bodies.entries()) {
      const parsed = await stageBody(b, `PARSED${k}`, false);
      const unparsed = await stageBody(b, `TEXT${k}`, true);
      expect(unparsed.unparsed).toBeGreaterThan(2000);
      expect(parsed.unparsed).toBe(0);
      expect(unparsed.bytes.equals(parsed.bytes)).toBe(true);
      expect(unparsed.sidecar).toEqual(parsed.sidecar);
    }
  });

  it('rejects what is not a row and bad identifiers with errors naming them', async () => {
    const w = createPartWriter({
      root,
      snapshotId: 'snap-w',
      dataset: 'facts_core',
      ticker: 'X',
      lineage: lineage('X'),
    });
    expect(() => w.write([] as unknown as Record<string, unknown>)).toThrow(InputError);
    await w.abort();
    expect(() => assertSnapshotId('../etc')).toThrow(/snapshot id/);
    expect(() =>
      createPartWriter({
        root,
        snapshotId: 'snap-w',
        dataset: 'nope' as never,
        ticker: 'X',
        lineage: lineage('X'),
      }),
    ).toThrow(/unknown dataset "nope"/);
    expect(() =>
      createPartWriter({
        root,
        snapshotId: 'snap-w',
        dataset: 'facts_core',
        ticker: 'X',
        lineage: { ...lineage('X'), fetchedAt: 'yesterday' },
      }),
    ).toThrow(/lineage.fetchedAt/);
  });

  it('applies backpressure: write() returns promises under load and every row arrives', async () => {
    const w = createPartWriter({
      root,
      snapshotId: 'snap-w',
      dataset: 'facts_latest',
      ticker: 'BIG',
      lineage: lineage('BIG'),
      chunkBytes: 4096,
    });
    let waits = 0;
    for (let i = 0; i < 20_000; i++) {
      const p = w.write(syntheticFactRow(i, { cik: '0000000001', ticker: 'BIG' }));
      if (p) {
        waits++;
        await p;
      }
    }
    const staged = await w.finish();
    expect(waits).toBeGreaterThan(0);
    expect((await readLines(join(root, staged.file))).length).toBe(20_000);
  });
});

/**
 * Stages a body's rows: parsed (write with the received text) or, with `compact`, the batches the
 * compact scanner proves as RowText (writeText). The staged bytes and the sidecar without its
 * random staging id.
 */
async function stageBody(body: Buffer, ticker: string, compact: boolean) {
  const w = createPartWriter({
    root,
    snapshotId: 'snap-w',
    dataset: 'facts_full',
    ticker,
    lineage: lineage('X'),
    chunkBytes: 8192,
    memberBytes: 65_536,
  });
  const ex = createRowExtractor({ rawText: true });
  let unparsed = 0;
  for (let at = 0; at < body.length; at += 50_000) {
    ex.push(body.subarray(at, at + 50_000));
    for (let b = compact ? ex.takeCompact() : ex.take(); b; b = compact ? ex.takeCompact() : ex.take()) {
      if (Array.isArray(b)) {
        for (const row of b) await w.write(row, ex.rawText(row));
        continue;
      }
      const n = b.names.length;
      for (let r = 0; r < b.bounds.length / 2; r++, unparsed++) {
        const text = b.bytes.subarray(b.bounds[2 * r], b.bounds[2 * r + 1]);
        await w.writeText(new RowText(text, b.names, b.kinds, r * n));
      }
    }
  }
  ex.end();
  const part = await w.finish();
  const { stagingId, ...sidecar } = (await readFieldsSidecar(fieldsSidecarPath(join(root, part.file))))!;
  expect(stagingId).toBe(w.stagingId);
  return { bytes: await readFile(join(root, part.file)), sidecar, unparsed };
}

describe('createPartWriter: gzip members', () => {
  it('records where each member starts; each decompresses alone to the rows from its start on', async () => {
    const w = createPartWriter({
      root,
      snapshotId: 'snap-m',
      dataset: 'facts_full',
      ticker: 'MEMB',
      lineage: { ...lineage('MEMB'), snapshotId: 'snap-m' },
      chunkBytes: 4096,
      memberBytes: 64 * 1024,
    });
    const rows = 3000;
    for (let i = 0; i < rows; i++) {
      // Received text for some rows, serialised for others: both paths count rows.
      const row = syntheticFactRow(i, { cik: '0000000001', ticker: 'MEMB' });
      const p = w.write(row, i % 3 === 0 ? new TextEncoder().encode(JSON.stringify(row)) : undefined);
      if (p) await p;
    }
    const staged = await w.finish();
    const path = join(root, staged.file);
    const bytes = await readFile(path);
    const all = gunzipSync(bytes)
      .toString('utf8')
      .split('\n')
      .filter((l) => l !== '');
    expect(all.length).toBe(rows);
    const sidecar = await readFieldsSidecar(`${path.slice(0, -'.ndjson.gz'.length)}.fields.json`);
    const members = sidecar?.members ?? [];
    expect(members.length).toBeGreaterThan(10);
    expect(members[members.length - 1]!.offset).toBeLessThan(bytes.length);
    for (const m of members) {
      // A member starts with the gzip magic, and from there on the file is the rows from m.row.
      expect([...bytes.subarray(m.offset, m.offset + 3)]).toEqual([0x1f, 0x8b, 0x08]);
      const tail = gunzipSync(bytes.subarray(m.offset))
        .toString('utf8')
        .split('\n')
        .filter((l) => l !== '');
      expect(tail.length).toBe(rows - m.row);
      expect(tail[0]).toBe(all[m.row]);
    }
    // The whole file is still one gzip stream to every reader, and hashes as reported.
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(staged.sha256);
    expect(staged.bytes).toBe(bytes.length);
  });

  it('writes one member, and no member starts, for a part under a member', async () => {
    const w = createPartWriter({
      root,
      snapshotId: 'snap-m',
      dataset: 'facts_full',
      ticker: 'ONE',
      lineage: { ...lineage('ONE'), snapshotId: 'snap-m' },
    });
    for (let i = 0; i < 50; i++) await w.write(syntheticFactRow(i, { cik: '0000000002', ticker: 'ONE' }));
    const staged = await w.finish();
    const path = join(root, staged.file);
    expect((await readFieldsSidecar(`${path.slice(0, -'.ndjson.gz'.length)}.fields.json`))?.members).toEqual(
      [],
    );
    expect((await readLines(path)).length).toBe(50);
  });
});

describe("createPartWriter: segments' uncompressed files", () => {
  const SEG = 7;
  /** Small rows: a 2,048-byte chunk holds ~20 lines, so several segments start inside one chunk. */
  const smallRow = (i: number): Record<string, unknown> => ({ i, s: `row-${i}` });
  const open = (ticker: string, pieceRows?: number, maxWaitingPlainFiles?: number, snapshotId = 'snap-p') =>
    createPartWriter({
      root,
      snapshotId,
      dataset: 'facts_full',
      ticker,
      lineage: { ...lineage(ticker), snapshotId },
      chunkBytes: 2048,
      memberBytes: 16 * 1024,
      ...(pieceRows === undefined ? {} : { pieceRows }),
      ...(maxWaitingPlainFiles === undefined ? {} : { maxWaitingPlainFiles }),
    });
  const plainFiles = async (finalFile: string): Promise<string[]> =>
    (await readdir(piecesDir(finalFile)).catch(() => [] as string[])).filter((n) => n.endsWith('.ndjson'));
  const finalOf = (ticker: string) => join(root, '_staging', 'snap-p', 'facts_full', `${ticker}.ndjson.gz`);

  it("writes each segment's lines, cut at its first row, while the gzip part stays byte-identical", async () => {
    const ROWS = 1000;
    // No cap here: several segments end inside one chunk, so several files close at once.
    const w = open('PLN', SEG, 1000);
    const taken = new Map<number, string>();
    let k = 0;
    // Taken as conversions would take them: read, then removed. Undefined: not started yet (no
    // segment is left without a file here).
    const takeReady = async (): Promise<void> => {
      for (let t = w.takePlainPiece!(k * SEG); t !== 'pending' && t !== undefined;) {
        const text = await readFile(t.file, 'latin1');
        expect(text.length).toBe(t.bytes);
        taken.set(k * SEG, text);
        await unlink(t.file);
        k++;
        t = w.takePlainPiece!(k * SEG);
      }
    };
    for (let i = 0; i < ROWS; i++) {
      const p = w.write(smallRow(i));
      if (p) await p;
      if (i % 40 === 39) await new Promise((r) => setTimeout(r, 1));
      await takeReady();
    }
    // Until the writes in flight land: a segment's file is whole once its chunk is written, and
    // only the last chunk (~20 lines, under 4 segments) waits for finish. Polled, never a fixed sleep.
    for (let quiet = 0, seen = taken.size; quiet < 5;) {
      await new Promise((r) => setTimeout(r, 10));
      await takeReady();
      quiet = taken.size === seen ? quiet + 1 : 0;
      seen = taken.size;
    }
    const staged = await w.finish();
    const lines = gunzipSync(await readFile(join(root, staged.file)))
      .toString('latin1')
      .split('\n')
      .slice(0, -1);
    expect([...taken.keys()]).toEqual([...taken.keys()].map((_, i) => i * SEG));
    expect(taken.size).toBeGreaterThan(ROWS / SEG - 5);
    for (const [skip, text] of taken) expect(text).toBe(lines.slice(skip, skip + SEG).join('\n') + '\n');
    // What was never taken (the segment being written at finish) is gone with it.
    expect(await plainFiles(finalOf('PLN'))).toEqual([]);
    // The same rows staged again without plain files (a second attempt): the same gzip bytes.
    const v = open('PLN');
    for (let i = 0; i < ROWS; i++) await v.write(smallRow(i));
    expect((await v.finish()).sha256).toBe(staged.sha256);
  });

  it('stages the part as always when the plain files cannot be written (their segments read the gzip part)', async () => {
    // `_segments` is a file: no segment folder can be made.
    await mkdir(join(root, '_staging', 'snap-q'), { recursive: true });
    await writeFile(join(root, '_staging', 'snap-q', '_segments'), 'not a folder');
    const w = open('NOSEG', SEG, undefined, 'snap-q');
    for (let i = 0; i < 300; i++) {
      const p = w.write(smallRow(i));
      if (p) await p;
    }
    expect(w.takePlainPiece!(0)).toBeUndefined();
    const staged = await w.finish();
    expect(staged.rows).toBe(300);
    expect((await readLines(join(root, staged.file))).map((r) => r.i)).toEqual([...Array(300).keys()]);
  });

  it('keeps at most MAX_WAITING_PLAIN_FILES waiting for their conversion, and removes them all on abort', async () => {
    const w = open('CAP', SEG);
    const write = async (from: number, to: number): Promise<void> => {
      for (let i = from; i < to; i++) {
        const p = w.write(smallRow(i));
        if (p) await p;
        if (i % 40 === 39) await new Promise((r) => setTimeout(r, 1));
      }
      await new Promise((r) => setTimeout(r, 20));
    };
    // No conversion keeps up: the first segments' files wait, the next segments get none.
    await write(0, 300);
    expect((await plainFiles(finalOf('CAP'))).length).toBe(MAX_WAITING_PLAIN_FILES);
    const first = w.takePlainPiece!(0);
    expect(first).toMatchObject({ bytes: expect.any(Number) as number });
    expect(w.takePlainPiece!(SEG)).toMatchObject({ bytes: expect.any(Number) as number });
    expect(w.takePlainPiece!(10 * SEG)).toBeUndefined();
    // One converted (its file removed): the next segment to start gets a file again.
    await unlink((first as { file: string }).file);
    await write(300, 400);
    const names = await plainFiles(finalOf('CAP'));
    expect(names.length).toBe(MAX_WAITING_PLAIN_FILES);
    expect(names.some((n) => Number(n.split('-')[1]) >= 2 * SEG)).toBe(true);
    // Abort: every file goes, the taken one too.
    await w.abort();
    expect(await plainFiles(finalOf('CAP'))).toEqual([]);
  });
});

describe('file planning', () => {
  const parts: PlannedPart[] = [
    { path: 'a', rows: 10, bytes: 100 },
    { path: 'b', rows: 10, bytes: 100 },
    { path: 'c', rows: 100, bytes: 1000 },
    { path: 'd', rows: 0, bytes: 20 },
    { path: 'e', rows: 5, bytes: 50 },
  ];
  function plan(budget: number) {
    const out = [];
    let cursor = { part: 0, row: 0 };
    for (;;) {
      const s = nextSlice(parts, cursor, budget);
      if (s === undefined) break;
      out.push(s);
      cursor = s.next;
    }
    return out;
  }

  it('combines small parts and splits big ones, covering every row once', () => {
    const slices = plan(300);
    expect(slices.map((s) => [s.files, s.skip, s.take])).toEqual([
      [['a', 'b', 'c'], 0, 30],
      [['c'], 10, 30],
      [['c'], 40, 30],
      [['c'], 70, 30],
      [['e'], 0, 5],
    ]);
    expect(slices.reduce((n, s) => n + s.take, 0)).toBe(125);
  });

  it('one file when everything fits or leaves a sliver, and always at least one row', () => {
    expect(plan(10_000).map((s) => s.files)).toEqual([['a', 'b', 'c', 'e']]);
    // 1250 bytes in all: a 1200-byte budget would leave 50 bytes (4%) alone, so one file takes them.
    expect(plan(1200).map((s) => s.take)).toEqual([125]);
    expect(plan(1)).toHaveLength(125);
  });
});

describe('exact decimals, kinds, names', () => {
  it('exactDecimal follows value_num = value_scaled_int x 10^scale', () => {
    expect(exactDecimal('-12345', -2)).toBe('-123.45');
    expect(exactDecimal('123', 3)).toBe('123000');
    expect(exactDecimal('5', -3)).toBe('0.005');
    expect(exactDecimal('1200', -2)).toBe('12');
    expect(exactDecimal('-0', 5)).toBe('0');
    expect(exactDecimal('90071992547409931', -1)).toBe('9007199254740993.1');
  });

  it('infers column types from kinds, conservatively', () => {
    expect(inferType(Kind.DATE_STRING | Kind.NULL)).toBe('DATE');
    expect(inferType(Kind.DATE_STRING | Kind.STRING)).toBe('VARCHAR');
    expect(inferType(Kind.INT)).toBe('BIGINT');
    expect(inferType(Kind.INT | Kind.FLOAT)).toBe('DOUBLE');
    expect(inferType(Kind.INT | Kind.BIGINT)).toBe('DECIMAL(38,0)');
    expect(inferType(Kind.STRING_ARRAY)).toBe('VARCHAR[]');
    expect(inferType(Kind.OBJECT)).toBe('JSON');
    expect(inferType(Kind.INT | Kind.STRING)).toBe('JSON');
    expect(inferType(Kind.NULL)).toBeUndefined();
  });

  it('tracks fields in order of first appearance', () => {
    const t = new FieldTracker();
    t.observe({ a: 1, b: 'x' });
    t.observe({ b: null, c: [1], a: 2.5 });
    expect(t.snapshot()).toEqual({
      names: ['a', 'b', 'c'],
      kinds: [Kind.INT | Kind.FLOAT, Kind.STRING | Kind.NULL, Kind.ARRAY],
    });
  });

  it('names files of tickers safely and distinctly', () => {
    expect(tickerFileName('brk.b')).toBe('BRK.B');
    expect(tickerFileName('BRK/B')).toBe('BRK~2FB');
    expect(tickerFileName('0000320193')).toBe('0000320193');
  });
});

describe('conversion SQL', () => {
  const schema = baseSchema('facts_full');
  const source = { file: '/x.ndjson.gz', skip: 0, take: 1, total: 1, maxLineBytes: 4096 };
  const sql = (kinds: Map<string, number>, mode: 'strict' | 'tolerant'): string =>
    convertSelect({ schema, kinds, extraFields: [], mode }, source);
  const line = (text: string, column: string): string =>
    text.split('\n').find((l) => l.trimEnd().endsWith(`AS "${column}",`)) ?? '';

  it('casts without a shape guard only what every staged value proved, and only when strict', () => {
    const proven = new Map([
      ['period_end_year', Kind.INT | Kind.NULL],
      ['period_end', Kind.DATE_STRING],
      ['is_consolidated', Kind.BOOLEAN],
    ]);
    const strict = sql(proven, 'strict');
    expect(line(strict, 'period_end_year')).toMatch(/^\s*CAST\("period_end_year" AS INTEGER\) AS/);
    expect(line(strict, 'period_end')).toMatch(/^\s*CAST\("period_end" AS DATE\) AS/);
    expect(line(strict, 'is_consolidated')).toMatch(/^\s*CAST\("is_consolidated" AS BOOLEAN\) AS/);
    // A fraction seen once, a string date, tolerant mode: the guards stay.
    const mixed = sql(
      new Map([
        ['period_end_year', Kind.INT | Kind.FLOAT],
        ['period_end', Kind.DATE_STRING | Kind.STRING],
        ['is_consolidated', Kind.BOOLEAN | Kind.STRING],
      ]),
      'strict',
    );
    expect(line(mixed, 'period_end_year')).toContain('regexp_full_match');
    expect(line(mixed, 'period_end')).toContain('regexp_full_match');
    expect(line(mixed, 'is_consolidated')).toContain(`= 'true'`);
    expect(line(sql(proven, 'tolerant'), 'period_end_year')).toContain('regexp_full_match');
  });
});
