/**
 * Pieces (segments) converted while a part is staged (src/output/staged-part/parquet/convert-piece.ts,
 * the convert-segment job): publishing with them writes the rows a publish without them writes, in the same order;
 * segments of another attempt or another statement are not used; what cannot be converted is
 * skipped with its reason. Real files, real DuckDB; the last block runs the whole pipeline (real
 * Redis, the emulator over HTTP) with a big synthetic company.
 */
import { cp, mkdtemp, readdir, readFile, rename, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { gunzipSync, gzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { Job } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, silentLogger } from '../../src/log.js';
import { openDuck, parquetCodec, ZSTD_LEVEL, type DuckSession } from '../../src/output/convert/duckdb.js';
import {
  conversionSignature,
  convertPiece as convertSegment,
} from '../../src/output/staged-part/parquet/convert-piece.js';
import { plainPiecePath, piecesDir } from '../../src/output/staged-part/layout.js';
import {
  MAX_WAITING_PLAIN_FILES,
  type PieceOutcome,
  type PieceRequest,
} from '../../src/output/staged-part/index.js';
import { writeWholeText } from '../../src/output/staged-part/parquet/all-rows-text.js';
import { createPartWriter, publishSnapshot } from '../../src/output/index.js';
import { rowsPerPiece } from '../../src/output/staged-part/row-cuts.js';
import { baseSchema } from '../../src/datasets/index.js';
import {
  CONVERT_PIECE_JOB as CONVERT_SEGMENT_JOB,
  parseConvertPiecePayload as parseConvertSegmentPayload,
  type ConvertPiecePayload as ConvertSegmentPayload,
} from '../../src/pipeline/queue/job-payloads.js';
import { PieceAnnouncer as SegmentAnnouncer } from '../../src/pipeline/queue/piece-announcer.js';
import {
  convertPieceJob as convertSegmentJob,
  pieceRequestOf as segmentRequestOf,
} from '../../jobs/convert-piece.js';
import { outputPorts } from '../../src/pipeline/output-adapter.js';
import type { PartPointer } from '../../src/types.js';
import { syntheticFactRow } from '../helpers/synthetic-rows.js';
import { startPipelineHarness, testJobHelpers, type PipelineHarness } from '../helpers/pipeline.js';
import { followSnapshot } from '../../src/pipeline/queue/follow.js';
import type { SnapshotStore } from '../../src/pipeline/record/snapshot-store.js';

type Row = Record<string, unknown>;
const DATE = '2026-11-25';
const FETCHED = '2026-11-25T02:03:04.567Z';
const SNAP = 'seg';
const GROUP = 2048;
const ROWS = 40_000;
const rows: Row[] = Array.from({ length: ROWS }, (_, i) =>
  syntheticFactRow(i, { ticker: 'BIG', cik: '0000000001' }),
);

let duck: DuckSession;
const roots: string[] = [];
beforeAll(async () => {
  duck = await openDuck({ threads: 1 });
});
afterAll(async () => {
  duck.close();
  await Promise.all(roots.map((r) => rm(r, { recursive: true, force: true })));
});

async function newRoot(): Promise<string> {
  const r = await mkdtemp(join(tmpdir(), 'fx-segments-'));
  roots.push(r);
  return r;
}

const requestOf = segmentRequestOf;

/**
 * Stages BIG as the export-part job does, announcing segments as members reach the disk. The first
 * segment is converted at once, from the file still being written; the others after finish(), or
 * each as soon as it is queued (`convertEach`). `plain`: each segment's rows also uncompressed,
 * as the export-part job asks when segments are on.
 */
async function stageWithSegments(
  root: string,
  o: { plain?: boolean; convertEach?: boolean; outside?: boolean; maxWaiting?: number; rowsOf?: Row[] } = {},
): Promise<{ part: PartPointer; payloads: ConvertSegmentPayload[]; outcomes: PieceOutcome[] }> {
  const w = createPartWriter({
    root,
    snapshotId: SNAP,
    dataset: 'facts_full',
    ticker: 'BIG',
    lineage: { snapshotId: SNAP, fetchedAt: FETCHED, requestedTicker: 'BIG' },
    chunkBytes: 64 * 1024,
    memberBytes: 512 * 1024,
    ...(o.plain === true || o.outside === true ? { pieceRows: rowsPerPiece(GROUP) } : {}),
    ...(o.outside === true ? { piecesOutsideGzip: true } : {}),
    ...(o.maxWaiting === undefined ? {} : { maxWaitingPlainFiles: o.maxWaiting }),
  });
  const outcomes: PieceOutcome[] = [];
  const payloads: ConvertSegmentPayload[] = [];
  const announcer = new SegmentAnnouncer({
    early: {
      pieceRows: rowsPerPiece(GROUP),
      enqueue: (p) => {
        payloads.push(parseConvertSegmentPayload(JSON.parse(JSON.stringify(p))));
        return Promise.resolve();
      },
    },
    writer: w,
    snapshotId: SNAP,
    outDir: root,
    dataset: 'facts_full',
    logger: silentLogger(),
  });
  let convertedEarly = false;
  const staged = o.rowsOf ?? rows;
  for (let i = 0; i < staged.length; i++) {
    await w.write(staged[i]!);
    if (i % 500 === 499) {
      // As a download does, gives gzip and the file's writes time to catch up.
      await caughtUp(w);
      announcer.poll();
      while (outcomes.length < (o.convertEach === true ? payloads.length : Math.min(1, payloads.length))) {
        const p = payloads[outcomes.length]!;
        if (p.plainBytes !== undefined) {
          // Queued with its uncompressed file complete on disk.
          expect((await stat(plainOf(root, p))).size).toBe(p.plainBytes);
        }
        const done = await convertSegment(requestOf(p), { rowGroupRows: GROUP });
        expect(done.status).toBe('converted');
        expect(p.file).toMatch(/\.tmp-/); // cut from the file being written
        outcomes.push(done);
        convertedEarly = true;
      }
    }
  }
  await announcer.settle();
  const done = await w.finish();
  expect(convertedEarly).toBe(true);
  return { part: { dataset: 'facts_full', ticker: 'BIG', status: 'done', ...done }, payloads, outcomes };
}

/**
 * Waits as a download's pace does: until the writer's complete members on disk and its pieces'
 * files stop growing (three still readings 6 ms apart, at most ~3 s). A fixed sleep let a loaded
 * machine's late gzip or file writes change what the announcer saw, and so which piece got a file.
 */
async function caughtUp(w: ReturnType<typeof createPartWriter>): Promise<void> {
  let last = '';
  let still = 0;
  for (let i = 0; i < 500 && still < 3; i++) {
    await new Promise((r) => setTimeout(r, 6));
    const prefix = w.written?.();
    const dir = prefix === undefined ? undefined : piecesDir(prefix.finalFile);
    const files = dir === undefined ? [] : await readdir(dir).catch(() => [] as string[]);
    const sizes = await Promise.all(
      files.map((f) =>
        stat(join(dir!, f)).then(
          (st) => st.size,
          () => -1,
        ),
      ),
    );
    const now = `${prefix?.bytes ?? 0}|${files.join(',')}|${sizes.join(',')}`;
    still = now === last ? still + 1 : 0;
    last = now;
  }
}

/** The uncompressed file a segment's payload names by its size. */
function plainOf(root: string, p: ConvertSegmentPayload): string {
  expect(p.outDir).toBe(root);
  return plainPiecePath(p.finalFile, p.stagingId, p.skip, p.take);
}

/** The uncompressed files left in the part's segments folder. */
async function plainLeft(part: PartPointer, root: string): Promise<string[]> {
  const names = await readdir(piecesDir(join(root, part.file!))).catch(() => [] as string[]);
  return names.filter((n) => n.endsWith('.ndjson'));
}

/** Stages `ticker`'s rows without segments. */
async function stagePlain(root: string, ticker = 'BIG', rowsOf: readonly Row[] = rows): Promise<PartPointer> {
  const w = createPartWriter({
    root,
    snapshotId: SNAP,
    dataset: 'facts_full',
    ticker,
    lineage: { snapshotId: SNAP, fetchedAt: FETCHED, requestedTicker: ticker },
  });
  for (const r of rowsOf) await w.write(r);
  return { dataset: 'facts_full', ticker, status: 'done', ...(await w.finish()) };
}

/** Publishes and returns the digest of every value in file order, and how many segments were used. */
async function publish(
  root: string,
  ...parts: PartPointer[]
): Promise<{ digest: string; n: number; used: number }> {
  const lines: string[] = [];
  const logger = createLogger({
    level: 'debug',
    pretty: false,
    destination: new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    }),
  });
  await publishSnapshot({
    root,
    snapshotId: SNAP,
    snapshotDate: DATE,
    formats: ['parquet'],
    parts,
    rowGroupRows: GROUP,
    logger,
  });
  const used = lines
    .map((l) => JSON.parse(l) as { msg: string; piecesUsed?: number })
    .filter((l) => l.msg === 'segments converted while staging')
    .reduce((s, l) => s + (l.piecesUsed ?? 0), 0);
  const files = `read_parquet('${root}/facts_full/*/*/*.parquet', filename = true, file_row_number = true)`;
  const [content] = await duck.all(
    `SELECT count(*)::INTEGER AS n, md5(string_agg(CAST(t AS VARCHAR), chr(10) ORDER BY t.file, t.rn)) AS digest FROM (SELECT parse_filename(filename) AS file, file_row_number AS rn, * EXCLUDE (filename, file_row_number) FROM ${files}) t`,
  );
  return { digest: String(content?.digest), n: Number(content?.n), used };
}

describe('segments converted while staging', () => {
  let plain: { digest: string; n: number; used: number };
  beforeAll(async () => {
    // The reference: the same rows staged and published without any segment.
    const root = await newRoot();
    plain = await publish(root, await stagePlain(root));
    expect(plain).toMatchObject({ n: ROWS, used: 0 });
  });

  it('cuts whole row groups in order, and publishing with them writes the same rows in the same order', async () => {
    const root = await newRoot();
    const { part, payloads } = await stageWithSegments(root);
    const size = rowsPerPiece(GROUP);
    expect(payloads.map((p) => p.skip)).toEqual(payloads.map((_, i) => i * size));
    expect(payloads.every((p) => p.take === size)).toBe(true);
    expect(payloads.length).toBeGreaterThanOrEqual(3); // 40,000 rows: up to 4 segments of 8,192
    for (const p of payloads.slice(1))
      expect((await convertSegment(requestOf(p), { rowGroupRows: GROUP })).status).toBe('converted');
    const withSegments = await publish(root, part);
    expect(withSegments.used).toBe(payloads.length);
    expect(withSegments.digest).toBe(plain.digest);
    expect(withSegments.n).toBe(ROWS);
    // Published: the staging area, segments included, is gone.
    expect(await readdir(piecesDir(join(root, part.file!))).catch(() => 'gone')).toBe('gone');
  });

  it('reads each segment from its uncompressed file, removes the file, and publishes the same rows', async () => {
    const root = await newRoot();
    const { part, payloads, outcomes } = await stageWithSegments(root, { plain: true, convertEach: true });
    expect(payloads.length).toBeGreaterThanOrEqual(3);
    // Converted as soon as queued, none waits: every segment had its file, and read it.
    expect(payloads.every((p) => p.plainBytes !== undefined)).toBe(true);
    expect(outcomes.map((x) => x.status === 'converted' && x.read)).toEqual(payloads.map(() => 'plain'));
    // Converted or never queued (the rows after the last whole segment), no file is left.
    expect(await plainLeft(part, root)).toEqual([]);
    const published = await publish(root, part);
    expect(published).toEqual({ ...plain, used: payloads.length });
  });

  it('falls back to the gzip part when the uncompressed file is missing or short, and removes it whatever happens', async () => {
    const root = await newRoot();
    const { part, payloads, outcomes } = await stageWithSegments(root, { plain: true });
    expect(outcomes[0]).toMatchObject({ status: 'converted', read: 'plain' });
    expect(payloads.length).toBe(4);
    // Nothing converted segments 1 and 2 while staging: they wait with their files; segment 3 got none.
    expect(MAX_WAITING_PLAIN_FILES).toBe(2);
    expect(payloads.map((p) => p.plainBytes !== undefined)).toEqual([true, true, true, false]);
    expect((await plainLeft(part, root)).length).toBe(2);
    const convert = (p: PieceRequest) => convertSegment(p, { rowGroupRows: GROUP });
    // Bytes that are not rows, of the right size: the conversion fails, and the file is removed.
    const [, one, two, three] = payloads.map(requestOf) as [
      PieceRequest,
      PieceRequest,
      PieceRequest,
      PieceRequest,
    ];
    await writeFile(plainOf(root, payloads[1]!), Buffer.alloc(one.plainBytes!, 0x7b));
    expect(await convert(one)).toMatchObject({ status: 'skipped' });
    expect(await plainLeft(part, root)).toHaveLength(1);
    // Missing (just removed): read from the gzip members.
    expect(await convert(one)).toMatchObject({ status: 'converted', read: 'gzip' });
    // Short (a crash mid-write): read from the gzip members, the short file removed.
    await truncate(plainOf(root, payloads[2]!), two.plainBytes! - 1000);
    expect(await convert(two)).toMatchObject({ status: 'converted', read: 'gzip' });
    expect(await convert(three)).toMatchObject({ status: 'converted', read: 'gzip' });
    // Short, and the gzip bytes not there either: skipped as before, the file removed.
    await writeFile(plainOf(root, payloads[2]!), 'short\n');
    const gone = await convert({ ...two, cut: { ...two.cut, end: part.bytes! + 10 } });
    expect(gone.status === 'skipped' && gone.reason).toMatch(/holds \d+ bytes, the segment ends at/);
    expect(await plainLeft(part, root)).toEqual([]);
    // Every segment is used and every row is there once, in order.
    expect(await publish(root, part)).toEqual({ ...plain, used: payloads.length });
  });

  it('removes the uncompressed file of a segment whose job finds the snapshot no longer running', async () => {
    const root = await newRoot();
    const { part, payloads } = await stageWithSegments(root, { plain: true });
    expect(await plainLeft(part, root)).toHaveLength(2);
    const ports = await outputPorts();
    try {
      const process = convertSegmentJob.start(
        testJobHelpers({
          staged: {
            createWriter: ports.staged.createWriter,
            convertPiece: () => Promise.reject(new Error('a snapshot that is not running converts nothing')),
            discardPiece: ports.staged.discardPiece,
          },
          record: { state: () => Promise.resolve('failed') } as unknown as SnapshotStore,
        }),
      );
      // Failed: its staging stays for --retry, the segments' plain files do not.
      for (const p of payloads.slice(1, 3))
        expect(await process({ data: p } as unknown as Job)).toEqual({
          status: 'skipped',
          reason: 'snapshot is failed',
        });
    } finally {
      await ports.closeOutput();
    }
    expect(await plainLeft(part, root)).toEqual([]);
  });

  it('does not use segments of another staging attempt or made by another statement', async () => {
    const root = await newRoot();
    const { part, payloads } = await stageWithSegments(root);
    // The second segment as made; the third twice: with kinds publishing won't use, and as if cut
    // from another attempt's file (same rows, same statement). Neither may be used.
    const convert = async (r: PieceRequest) => (await convertSegment(r, { rowGroupRows: GROUP })).status;
    expect(await convert(requestOf(payloads[1]!))).toBe('converted');
    const third = payloads[2]!;
    const oddFields = { names: [...third.fields.names, 'zz_new'], kinds: [...third.fields.kinds, 4] };
    expect(await convert({ ...requestOf(third), fields: oddFields })).toBe('converted');
    const copy = `${join(root, part.file!)}.copy`;
    await cp(join(root, part.file!), copy);
    expect(await convert({ ...requestOf(third), stagingId: 'ffffffffffffffff', file: copy })).toBe(
      'converted',
    );
    const schema = baseSchema('facts_full');
    const kinds = new Map(third.fields.names.map((n, i) => [n, third.fields.kinds[i]!]));
    expect(conversionSignature({ schema, kinds, extraFields: [], snapshotId: SNAP }, 'zstd', GROUP)).not.toBe(
      conversionSignature({ schema, kinds, extraFields: ['zz_new'], snapshotId: SNAP }, 'zstd', GROUP),
    );
    // The first two are used; the third's rows are converted at publish.
    const published = await publish(root, part);
    expect(published.used).toBe(2);
    expect(published.digest).toBe(plain.digest);
  });

  it('uses the segments of a part that shares its file with a smaller company before it', async () => {
    const small = Array.from({ length: 30 }, (_, i) =>
      syntheticFactRow(i, { ticker: 'AAA', cik: '0000000002' }),
    );
    const stageSmall = (root: string): Promise<PartPointer> => stagePlain(root, 'AAA', small);
    const plainRoot = await newRoot();
    const reference = await publish(plainRoot, await stageSmall(plainRoot), await stagePlain(plainRoot));
    const root = await newRoot();
    const aaa = await stageSmall(root);
    const { part, payloads } = await stageWithSegments(root);
    for (const p of payloads.slice(1))
      expect((await convertSegment(requestOf(p), { rowGroupRows: GROUP })).status).toBe('converted');
    const shared = await publish(root, aaa, part);
    // One file holds AAA's 30 rows, then BIG's: the segments sit 30 rows into it.
    expect(shared.used).toBe(payloads.length);
    expect(shared.n).toBe(ROWS + 30);
    expect(shared.digest).toBe(reference.digest);
  });

  it('skips, saying why, what it cannot convert: a file gone, bytes not written yet, bytes that are not rows', async () => {
    const root = await newRoot();
    const { part, payloads } = await stageWithSegments(root);
    const p = requestOf(payloads[1]!);
    const beyond = await convertSegment(
      { ...p, cut: { ...p.cut, end: part.bytes + 10 } },
      { rowGroupRows: GROUP },
    );
    expect(beyond).toMatchObject({ status: 'skipped' });
    expect(beyond.status === 'skipped' && beyond.reason).toMatch(/holds \d+ bytes, the segment ends at/);
    const gone = await convertSegment({ ...p, stagingId: '0123456789abcdef' }, { rowGroupRows: GROUP });
    expect(gone.status === 'skipped' && gone.reason).toMatch(
      /staged file of attempt 0123456789abcdef is gone/,
    );
    const junk = join(root, 'junk.ndjson.gz');
    await writeFile(junk, Buffer.alloc(p.cut.end + 10, 7));
    const bad = await convertSegment({ ...p, file: junk }, { rowGroupRows: GROUP });
    expect(bad.status).toBe('skipped');
    // Only the segment converted while staging is there: the skipped ones left nothing behind.
    const first = payloads[0]!;
    expect((await readdir(piecesDir(join(root, part.file!)))).sort()).toEqual([
      `${first.stagingId}-${first.skip}-${first.take}.json`,
      `${first.stagingId}-${first.skip}-${first.take}.parquet`,
    ]);
  });

  it('refuses a malformed convert-segment payload, naming the field', () => {
    const ok: ConvertSegmentPayload = {
      v: 1,
      snapshotId: SNAP,
      outDir: '/out',
      dataset: 'facts_full',
      file: '/out/_staging/seg/facts_full/A.ndjson.gz.tmp-1-0123456789abcdef',
      finalFile: '/out/_staging/seg/facts_full/A.ndjson.gz',
      stagingId: '0123456789abcdef',
      skip: 8192,
      take: 8192,
      cut: { offset: 100, end: 200, row: 8000, rows: 9000 },
      fields: { names: ['a'], kinds: [1] },
      maxLineChars: 10,
    };
    expect(parseConvertSegmentPayload(ok)).toEqual(ok);
    expect(() => parseConvertSegmentPayload({ ...ok, cut: { ...ok.cut, rows: 100 } })).toThrow(
      /cut: must hold rows/,
    );
    expect(() => parseConvertSegmentPayload({ ...ok, take: 0 })).toThrow(/take/);
    expect(() => parseConvertSegmentPayload({ ...ok, stagingId: 'x/..' })).toThrow(/stagingId/);
    expect(() => parseConvertSegmentPayload({ ...ok, dataset: 'nope' })).toThrow(/dataset/);
    // Only a staged part of the snapshot, under its root, is read and written beside.
    expect(() =>
      parseConvertSegmentPayload({ ...ok, finalFile: '/etc/passwd', file: '/etc/passwd.tmp-1' }),
    ).toThrow(/file: must be a staged part of the snapshot/);
    expect(() =>
      parseConvertSegmentPayload({ ...ok, file: '/out/_staging/seg/facts_full/B.ndjson.gz' }),
    ).toThrow(/file: must be a staged part/);
  });

  it('writes every Parquet file with one codec choice: zstd at ZSTD_LEVEL, no COPY in src/ naming its own', async () => {
    expect(parquetCodec('zstd')).toBe(`COMPRESSION zstd, COMPRESSION_LEVEL ${ZSTD_LEVEL}`);
    const path = join(await newRoot(), 'codec.parquet');
    await duck.run(
      `COPY (SELECT range AS n FROM range(1000)) TO '${path}' (FORMAT parquet, ${parquetCodec('zstd')})`,
    );
    expect(await duck.all(`SELECT DISTINCT compression FROM parquet_metadata('${path}')`)).toEqual([
      { compression: 'ZSTD' },
    ]);
    // A COPY that named its codec itself would write at DuckDB's default level, not the one decided.
    const offenders: string[] = [];
    const src = join(import.meta.dirname, '..', '..', 'src');
    for (const file of await readdir(src, { recursive: true })) {
      if (!file.endsWith('.ts')) continue;
      (await readFile(join(src, file), 'utf8')).split('\n').forEach((line, i) => {
        if (/FORMAT parquet/i.test(line) && !line.includes('parquetCodec('))
          offenders.push(`${file}:${i + 1}`);
      });
    }
    expect(offenders).toEqual([]);
  });
});

/** Rows in a staged part's gzip file, and the sidecar's record of where they start. */
async function stagedRows(root: string, part: PartPointer): Promise<{ lines: number; gzipFrom: unknown }> {
  const path = join(root, part.file!);
  const text = gunzipSync(await readFile(path)).toString('utf8');
  const sidecar = JSON.parse(await readFile(path.replace(/\.ndjson\.gz$/, '.fields.json'), 'utf8')) as {
    gzip_from?: number;
  };
  return { lines: text === '' ? 0 : text.split('\n').length - 1, gzipFrom: sidecar.gzip_from };
}

describe('a Parquet-only part staged with its segments outside the gzip', () => {
  const SEG = rowsPerPiece(GROUP);
  let plain: { digest: string; n: number; used: number };
  let whole: PartPointer;
  beforeAll(async () => {
    const root = await newRoot();
    whole = await stagePlain(root);
    plain = await publish(root, whole);
  });

  it('gzips no row of a segment that has its file, and publishes the same rows as a part staged whole', async () => {
    const root = await newRoot();
    const { part, payloads, outcomes } = await stageWithSegments(root, { outside: true, convertEach: true });
    expect(payloads.length).toBe(Math.floor(ROWS / SEG));
    expect(payloads.every((p) => p.plainOnly === true && p.cut.end === 0)).toBe(true);
    expect(outcomes.map((x) => x.status === 'converted' && x.read)).toEqual(payloads.map(() => 'plain'));
    // Every row is in a segment (the last, partial one in its plain file): the gzip holds none.
    expect(await stagedRows(root, part)).toEqual({ lines: 0, gzipFrom: ROWS });
    expect(part.rows).toBe(ROWS);
    expect(part.bytes).toBeLessThan(100);
    expect(whole.bytes).toBeGreaterThan(100_000);
    // Each converted segment keeps its plain file, the only copy of its rows, until the publish.
    expect((await plainLeft(part, root)).length).toBe(payloads.length + 1);
    // The partial segment is converted at publish from its file: the same rows in the same order.
    expect(await publish(root, part)).toEqual({ ...plain, used: payloads.length + 1 });
  });

  it('converts at publish the segments whose conversion failed or never ran, from their plain files; the gzip holds the rest', async () => {
    const root = await newRoot();
    const { part, payloads } = await stageWithSegments(root, { outside: true, maxWaiting: 2 });
    // Segment 0 converted while staging; 1 and 2 wait with their files, so 3 got none: the gzip
    // holds every row from segment 3 on, and segment 3's job reads it from there.
    expect(payloads.map((p) => p.plainOnly === true)).toEqual([true, true, true, false]);
    expect(payloads[3]!.plainBytes).toBeUndefined();
    expect(await stagedRows(root, part)).toEqual({ lines: ROWS - 3 * SEG, gzipFrom: 3 * SEG });
    // Segment 1's conversion fails (its file not as announced): its file stays for publishing.
    const failed = await convertSegment(
      { ...requestOf(payloads[1]!), plainBytes: payloads[1]!.plainBytes! + 1 },
      { rowGroupRows: GROUP },
    );
    expect(failed.status === 'skipped' && failed.reason).toMatch(/does not hold/);
    // Segment 0's file stays beside its Parquet (the only copy of its rows) until the publish.
    expect((await plainLeft(part, root)).length).toBe(3);
    expect(await convertSegment(requestOf(payloads[3]!), { rowGroupRows: GROUP })).toMatchObject({
      status: 'converted',
      read: 'gzip',
    });
    const published = await publish(root, part);
    expect(published).toEqual({ ...plain, used: 4 });
  });

  it('fails naming the part and the rows when a segment is in neither its Parquet nor its plain file, and publishes nothing', async () => {
    const root = await newRoot();
    const { part, payloads } = await stageWithSegments(root, { outside: true });
    // Staged outside the gzip, four files may wait (MAX_WAITING_OUTSIDE_GZIP): every segment got one.
    expect(payloads.map((p) => p.plainOnly === true)).toEqual([true, true, true, true]);
    expect(await stagedRows(root, part)).toEqual({ lines: 0, gzipFrom: ROWS });
    await rm(plainOf(root, payloads[1]!));
    await expect(publish(root, part)).rejects.toThrow(
      new RegExp(`part facts_full/BIG: rows \\[${SEG}, ${2 * SEG}\\) were staged outside its gzip.*--retry`),
    );
    expect(await readdir(join(root, 'facts_full')).catch(() => [])).toEqual([]);
    // The staged file goes too, so that a retried snapshot fetches the part again.
    await expect(stat(join(root, part.file!))).rejects.toThrow(/ENOENT/);
  });

  it('converts again from its plain file a segment whose Parquet no longer fits the statement (a field seen after it)', async () => {
    const root = await newRoot();
    const later = rows.map((r, i) => (i >= ROWS - 100 ? { ...r, seen_late: i } : r));
    const { part, outcomes } = await stageWithSegments(root, {
      outside: true,
      convertEach: true,
      rowsOf: later,
    });
    expect(outcomes.every((x) => x.status === 'converted')).toBe(true);
    // Every segment's Parquet was made before `seen_late` was seen: stale, so each is converted
    // again from the plain file kept for this; the rows equal the same part staged whole.
    const wholeRoot = await newRoot();
    const expected = await publish(wholeRoot, await stagePlain(wholeRoot, 'BIG', later));
    // The same digest of every value; every segment (the partial one too) made again at publish.
    expect(await publish(root, part)).toEqual({ ...expected, used: outcomes.length + 1 });
  });

  it('publishes a value that does not fit its column, kept in _extra, reading its segment from the plain file', async () => {
    const BAD = SEG + 7; // in the second segment, converted at publish
    const bad = rows.map((r, i) => (i === BAD ? { ...r, period_end: '2024-02-30' } : r));
    const root = await newRoot();
    const { part } = await stageWithSegments(root, { outside: true, rowsOf: bad });
    expect(await stagedRows(root, part)).toEqual({ lines: 0, gzipFrom: ROWS });
    const wholeRoot = await newRoot();
    const expected = await publish(wholeRoot, await stagePlain(wholeRoot, 'BIG', bad));
    // No --retry: every row, the bad one tolerantly, as the same rows staged whole publish.
    const got = await publish(root, part);
    expect({ digest: got.digest, n: got.n }).toEqual({ digest: expected.digest, n: ROWS });
    const [row] = await duck.all(
      `SELECT CAST(period_end AS VARCHAR) AS period_end, _extra FROM read_parquet('${root}/facts_full/*/*/*.parquet') WHERE fact_key = '${String(bad[BAD]!.fact_key)}'`,
    );
    expect(row?.period_end).toBeNull();
    expect(JSON.parse(String(row?._extra))).toMatchObject({ period_end: '2024-02-30' });
  });

  it('publishes a value that does not fit in the gzip tail, converting the file from the plain files and the tail', async () => {
    const BAD = ROWS - 10; // in the tail: with two files waiting, the gzip holds rows from segment 3 on
    const bad = rows.map((r, i) => (i === BAD ? { ...r, period_end: '2024-02-30' } : r));
    const root = await newRoot();
    const { part } = await stageWithSegments(root, { outside: true, maxWaiting: 2, rowsOf: bad });
    expect(await stagedRows(root, part)).toEqual({ lines: ROWS - 3 * SEG, gzipFrom: 3 * SEG });
    const wholeRoot = await newRoot();
    const expected = await publish(wholeRoot, await stagePlain(wholeRoot, 'BIG', bad));
    const got = await publish(root, part);
    expect({ digest: got.digest, n: got.n }).toEqual({ digest: expected.digest, n: ROWS });
  });

  it('converts from the plain files an output file whose segments do not join', async () => {
    const root = await newRoot();
    const { part } = await stageWithSegments(root, { outside: true, convertEach: true });
    // Another writer's footer on the first segment's Parquet (its meta still says usable).
    const dir = piecesDir(join(root, part.file!));
    const first = (await readdir(dir))
      .filter((n) => n.endsWith('.parquet'))
      .sort((a, b) => {
        const skip = (n: string): number => Number(/-(\d+)-\d+\.parquet$/.exec(n)?.[1]);
        return skip(a) - skip(b);
      })[0]!;
    const path = join(dir, first);
    await duck.run(
      `COPY (SELECT * FROM read_parquet('${path}')) TO '${path}.other' (FORMAT parquet, ${parquetCodec('zstd')}, ROW_GROUP_SIZE ${GROUP}, KV_METADATA {writer: 'other'})`,
    );
    await rename(`${path}.other`, path);
    const got = await publish(root, part);
    expect({ digest: got.digest, n: got.n }).toEqual({ digest: plain.digest, n: ROWS });
  });

  it('writes every row as gzip text from the plain files and the tail, or nothing when a plain file is not whole', async () => {
    const root = await newRoot();
    const text = (from: number, to: number): string =>
      rows
        .slice(from, to)
        .map((r) => JSON.stringify(r))
        .join('\n') + '\n';
    const a = join(root, 'a.ndjson');
    const b = join(root, 'b.ndjson');
    const tail = join(root, 'tail.ndjson.gz');
    await writeFile(a, text(0, 3));
    await writeFile(b, text(3, 5));
    await writeFile(tail, gzipSync(text(5, 9)));
    const plainFiles = [
      { path: a, bytes: Buffer.byteLength(text(0, 3)) },
      { path: b, bytes: Buffer.byteLength(text(3, 5)) },
    ];
    const to = join(root, 'whole.ndjson.gz');
    expect(await writeWholeText([{ file: tail }, { file: tail, plain: plainFiles }], to)).toBe(true);
    expect(gunzipSync(await readFile(to)).toString('utf8')).toBe(text(5, 9) + text(0, 9));
    await truncate(b, 10);
    const short = join(root, 'short.ndjson.gz');
    expect(await writeWholeText([{ file: tail, plain: plainFiles }], short)).toBe(false);
    await expect(stat(short)).rejects.toThrow(/ENOENT/);
  });

  it('stages a part with no whole segment byte for byte as a part staged whole', async () => {
    const root = await newRoot();
    const few = rows.slice(0, SEG - 1);
    const stage = async (ticker: string, outside: boolean): Promise<PartPointer> => {
      const w = createPartWriter({
        root,
        snapshotId: SNAP,
        dataset: 'facts_full',
        ticker,
        lineage: { snapshotId: SNAP, fetchedAt: FETCHED, requestedTicker: 'SMALL' },
        chunkBytes: 64 * 1024,
        memberBytes: 512 * 1024,
        pieceRows: SEG,
        ...(outside ? { piecesOutsideGzip: true } : {}),
      });
      for (const r of few) await w.write(r);
      return { dataset: 'facts_full', ticker, status: 'done', ...(await w.finish()) };
    };
    const [outside, whole] = [await stage('OUT', true), await stage('WHOLE', false)];
    expect(await readFile(join(root, outside.file!))).toEqual(await readFile(join(root, whole.file!)));
    expect(outside).toMatchObject({ rows: whole.rows, bytes: whole.bytes, sha256: whole.sha256 });
    const sidecar = async (p: PartPointer): Promise<Record<string, unknown>> => {
      const { staging_id: _id, ...rest } = JSON.parse(
        await readFile(join(root, p.file!.replace(/\.ndjson\.gz$/, '.fields.json')), 'utf8'),
      ) as Record<string, unknown>;
      return rest;
    };
    expect(await sidecar(outside)).toEqual(await sidecar(whole));
    expect((await sidecar(outside)).members).not.toEqual([]);
    expect(await plainLeft(outside, root)).toEqual([]);
  });

  it('keeps every row in the gzip when the part is not staged outside it (its output includes NDJSON)', async () => {
    const root = await newRoot();
    const { part, payloads } = await stageWithSegments(root, { plain: true, convertEach: true });
    expect(payloads.some((p) => p.plainOnly === true)).toBe(false);
    expect(await stagedRows(root, part)).toEqual({ lines: ROWS, gzipFrom: undefined });
    expect(part.rows).toBe(ROWS);
  });
});

describe('a big part exported by the pipeline', () => {
  const BIG = 30_000;
  let h: PipelineHarness;
  beforeAll(async () => {
    h = await startPipelineHarness({
      emulator: { syntheticLargeRows: BIG },
      config: {
        'output.row_group_rows': GROUP,
        'output.formats': ['parquet'],
        // Not the defaults, so convert-segment jobs can only carry them by reading the config.
        'retention.completed_jobs': { age_seconds: 4321, count: 321 },
        'retention.failed_jobs': { age_seconds: 8765, count: 765 },
      },
    });
    await h.startWorkers();
  });
  afterAll(async () => {
    await h?.close();
  });

  it('queues convert-segment jobs while staging, converts them in a control worker and publishes every row once', async () => {
    const rec = await h.runToEnd(h.spec(['SYNBIG'], ['facts_full'], 'segments-e2e'));
    expect(rec.state).toBe('published');
    const jobs = (await h.ctx.snapshotsQueue.getJobs(['completed'])).filter(
      (j) =>
        j.name === CONVERT_SEGMENT_JOB && (j.data as ConvertSegmentPayload).snapshotId === 'segments-e2e',
    );
    // Published as Parquet alone: the first segment's rows went to its plain file only.
    expect(
      (jobs.find((j) => (j.data as ConvertSegmentPayload).skip === 0)?.data as ConvertSegmentPayload)
        .plainOnly,
    ).toBe(true);
    const outcomes = jobs.map((j) => j.returnvalue as { status: string; read?: string });
    // Bounded in Redis like every job: by the configured age and count, failed ones too.
    for (const j of jobs)
      expect(j.opts).toMatchObject({
        attempts: 1,
        removeOnComplete: { age: 4321, count: 321 },
        removeOnFail: { age: 8765, count: 765 },
      });
    expect(outcomes.length).toBeGreaterThanOrEqual(2);
    expect(outcomes.filter((o) => o.status === 'converted').length).toBeGreaterThanOrEqual(1);
    // The export-part job asked for the segments' uncompressed files, and conversions read them.
    expect(outcomes.some((o) => o.read === 'plain')).toBe(true);
    const manifest = JSON.parse(await readFile(rec.manifest!, 'utf8')) as {
      files: { path: string; rows: number }[];
    };
    const files = manifest.files
      .filter((f) => f.path.endsWith('.parquet'))
      .map((f) => `'${join(h.outDir, f.path)}'`)
      .join(', ');
    const [stats] = await duck.all(
      `SELECT count(*)::INTEGER AS n, count(DISTINCT fact_key)::INTEGER AS keys FROM read_parquet([${files}])`,
    );
    expect(stats).toEqual({ n: BIG, keys: BIG });
  });

  it('stages every row in the gzip when NDJSON is among the formats', async () => {
    const spec = {
      ...h.spec(['SYNBIG'], ['facts_full'], 'segments-e2e-ndjson'),
      formats: ['ndjson', 'parquet'],
    };
    const rec = await h.runToEnd(spec as ReturnType<PipelineHarness['spec']>);
    expect(rec.state).toBe('published');
    const payloads = (await h.ctx.snapshotsQueue.getJobs(['completed']))
      .filter((j) => j.name === CONVERT_SEGMENT_JOB)
      .map((j) => j.data as ConvertSegmentPayload)
      .filter((p) => p.snapshotId === spec.id);
    expect(payloads.length).toBeGreaterThanOrEqual(2);
    expect(payloads.some((p) => p.plainOnly === true)).toBe(false);
    const [part] = await h.ctx.store.parts(spec.id);
    expect(part).toMatchObject({ rows: BIG });
    expect(part!.bytes).toBeGreaterThan(100_000);
  });
});

describe('a Parquet-only part whose segments went missing before publishing', () => {
  const BIG = 30_000;
  let h: PipelineHarness;
  beforeAll(async () => {
    h = await startPipelineHarness({
      emulator: { syntheticLargeRows: BIG },
      config: { 'output.row_group_rows': GROUP, 'output.formats': ['parquet'] },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('fails the publish naming the rows, and --retry fetches the part again, staged whole, and publishes every row', async () => {
    const spec = h.spec(['SYNBIG'], ['facts_full'], 'segments-gone');
    // Only a parts worker: the part is staged, its segments wait for a control worker.
    const parts = await h.startWorkers({ parts: true, control: false });
    await h.ctx.enqueue(spec);
    let pointer: PartPointer | undefined;
    for (let i = 0; i < 600 && pointer?.status !== 'done'; i++) {
      await new Promise((r) => setTimeout(r, 50));
      pointer = await h.ctx.store.getPart(spec.id, 'facts_full', 'SYNBIG');
    }
    expect(pointer?.status).toBe('done');
    // Behind the exporter's back: every segment's plain file (and any Parquet) goes.
    await rm(piecesDir(join(h.outDir, pointer!.file!)), { recursive: true, force: true });
    await h.startWorkers({ parts: false, control: true });
    const failed = await followSnapshot(h.ctx.store, spec.id, { pollMs: 100 });
    expect(failed.state).toBe('failed');
    // The first publish attempt names the rows and removes the staged file; a retried attempt of
    // the publish job then finds the file missing, as for any staged file gone.
    expect(failed.message).toMatch(
      /part facts_full\/SYNBIG: (rows \[0, 8192\) were staged outside its gzip|staged file \S+SYNBIG\.ndjson\.gz is missing)/,
    );
    expect(failed.manifest).toBeNull();
    await parts.close(2000);
    await h.startWorkers({ parts: true, control: false });

    const retried = await h.runToEnd(spec, { retry: true });
    expect(retried.message ?? retried.state).toBe('published');
    const again = (await h.ctx.snapshotsQueue.getJobs(['completed']))
      .filter((j) => j.name === CONVERT_SEGMENT_JOB)
      .map((j) => j.data as ConvertSegmentPayload)
      .filter((p) => p.snapshotId === spec.id);
    // The retried attempt (another staging id) staged every row in the gzip.
    const ids = [...new Set(again.map((p) => p.stagingId))];
    expect(ids).toHaveLength(2);
    const plainOnlyByAttempt = ids.map((id) =>
      again.filter((p) => p.stagingId === id).every((p) => p.plainOnly === true),
    );
    expect(plainOnlyByAttempt.sort()).toEqual([false, true]);
    const retriedPart = await h.ctx.store.getPart(spec.id, 'facts_full', 'SYNBIG');
    expect(retriedPart!.bytes).toBeGreaterThan(100_000);
    const manifest = JSON.parse(await readFile(retried.manifest!, 'utf8')) as { files: { path: string }[] };
    const files = manifest.files.map((f) => `'${join(h.outDir, f.path)}'`).join(', ');
    const [stats] = await duck.all(
      `SELECT count(*)::INTEGER AS n, count(DISTINCT fact_key)::INTEGER AS keys FROM read_parquet([${files}])`,
    );
    expect(stats).toEqual({ n: BIG, keys: BIG });
  });
});
