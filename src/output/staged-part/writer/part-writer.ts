/**
 * Stages one part (one ticker × dataset of a snapshot) as gzip NDJSON, streaming: memory holds one
 * chunk of lines, whatever the part's size. Written under a temporary name and renamed into
 * place by finish(), so a retried or crashed attempt never leaves half a file under the final name.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { open, rename, rm, unlink } from 'node:fs/promises';
import { once } from 'node:events';
import { dirname, join } from 'node:path';
import { Transform, type TransformOptions } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip, type Gzip, type ZlibOptions } from 'node:zlib';
import { coerceError, InputError, OutputError } from '../../../errors.js';
import type { DatasetName, RowText } from '../../../types.js';
import type { PartWriter, PlainPiece, StagedPart, WrittenPrefix } from '../types.js';
import { FieldTracker } from '../field-kinds.js';
import { fsyncDir, fsyncFile } from '../../storage/index.js';
import { lineageSuffix, rowToJson, withSuffix } from './json-line.js';
import { assertDataset, assertSnapshotId, toPosix } from '../../catalog/index.js';
import { fieldsSidecarPath, plainSegmentPath, stagedPartRelPath } from '../layout.js';
import { RESERVED_NAMES } from '../../../datasets/index.js';
import { writeFieldsSidecar } from '../sidecar.js';
import { ChunkPool, type ChunkLease } from './chunk-pool.js';
import {
  BACKLOG_BYTES,
  MAX_WAITING_OUTSIDE_GZIP,
  MAX_WAITING_PLAIN_FILES,
  PlainSegmentFiles,
  type KeptSegment,
} from './plain-pieces.js';

export interface Lineage {
  snapshotId: string;
  /** When the API request was sent: ISO-8601 string, Date or epoch ms. */
  fetchedAt: string | Date | number;
  /** Company key the exporter asked for (ticker or CIK). */
  requestedTicker: string;
}

export interface PartWriterOptions {
  /** Output root (the snapshot's `--out` directory). */
  root: string;
  snapshotId: string;
  dataset: DatasetName;
  /** Company key; names the staged file `<TICKER>.ndjson.gz`. */
  ticker: string;
  lineage: Lineage;
  /**
   * gzip level of the staged file. Staged files are transient (deleted once the snapshot is
   * published), so speed wins over size. @defaultValue 1
   */
  gzipLevel?: number;
  /** Serialised bytes buffered before one gzip write. @defaultValue 262144 */
  chunkBytes?: number;
  /**
   * Uncompressed bytes per gzip member. The file is one gzip stream to any reader (members
   * concatenate); the sidecar records where each member starts and at which row, so publishing
   * can convert a row range from its own bytes instead of decompressing everything before it.
   * @defaultValue 8388608 (8 MiB: ~8,000 facts rows, ~0.8 MB compressed)
   */
  memberBytes?: number;
  /**
   * Rows per segment converted while staging (parquet/convert-piece.ts): when set, each segment's lines
   * also go, uncompressed, into a file of their own for its conversion (plain-pieces.ts).
   * @defaultValue none: the gzip part only
   */
  pieceRows?: number;
  /**
   * Plain files written and not yet converted before the next segment gets none.
   * @defaultValue MAX_WAITING_PLAIN_FILES (2)
   */
  maxWaitingPlainFiles?: number;
  /**
   * With `pieceRows`: a segment's rows go to its plain file ONLY, not to the gzip part
   * (a part published as Parquet alone: the segment's Parquet replaces them). From the first
   * segment that gets no plain file on, every row goes to the gzip, which then holds the part's
   * rows from that row on (the sidecar's `gzip_from`). docs/output.md "What a staged part is".
   * @defaultValue false: the gzip holds every row
   */
  piecesOutsideGzip?: boolean;
}

export type { PartWriter, StagedPart, WrittenPrefix };

export function createPartWriter(opts: PartWriterOptions): PartWriter {
  return new NdjsonPartWriter(opts);
}

function isoOf(value: string | Date | number, what: string): string {
  const d = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(d.getTime()))
    throw new InputError(`${what} ${JSON.stringify(value)} is not a valid timestamp`);
  return d.toISOString();
}

const HIGH_WATER_MARK = 1 << 20;

/**
 * Chunks kept for reuse per part: as many as can be in flight at once (a plain file's backlog and
 * zlib's high-water mark, each past its limit by a chunk), so that none in steady use is made
 * anew; 24 at the default 256 KiB. More returned at once are left to the GC.
 */
export function maxFreeChunks(chunkBytes: number): number {
  return Math.ceil((BACKLOG_BYTES + HIGH_WATER_MARK) / chunkBytes) + 4;
}

/** One NDJSON line to stage: serialised (with its suffix), or a row's received text (without). */
type Line = string | Uint8Array;

class NdjsonPartWriter implements PartWriter {
  private readonly rel: string;
  private readonly finalPath: string;
  private readonly tmpPath: string;
  readonly stagingId: string;
  private readonly file: WriteStream;
  private readonly suffix: string;
  private readonly suffixBytes: Buffer;
  private readonly chunkBytes: number;
  private readonly pool: ChunkPool;
  private readonly tracker = new FieldTracker();
  /** The member being written; members after the first wait in `queued` for their turn. */
  private gzip: Gzip;
  private readonly gzipOptions: ZlibOptions & TransformOptions;
  private readonly tap: Transform;
  private readonly queued: Gzip[] = [];
  private readonly memberBytes: number;
  /** Uncompressed bytes written to the current member. */
  private memberIn = 0;
  /** Compressed bytes of each finished member, in order. */
  private readonly memberSizes: number[] = [];
  /** First row of each member after the first. */
  private readonly memberRows: number[] = [];
  /** Rows whose lines went to gzip; `bufRows` are in `buf`. */
  private flushedRows = 0;
  private bufRows = 0;
  private readonly done: Promise<void>;
  private readonly hash = createHash('sha256');
  private bytes = 0;
  /**
   * Lines are encoded straight into this Buffer (`buf.write`), one fresh Buffer per gzip write:
   * concatenating lines into a string and letting the stream encode it cost ~14 µs per facts row
   * (flattening the rope and UTF-8 encoding it), 3–4x the rest of serialising
   * (docs/decisions.md "Output: staging writer tuning").
   */
  private buf: Buffer;
  private used = 0;
  private count = 0;
  /** Longest line in UTF-16 units: sizes the line reader's buffer when publishing. */
  private maxLineChars = 0;
  private seenNames = 0;
  private reservedSeen = false;
  /** Segments' uncompressed files, and where in `buf` a segment starts (first row `nextCut`). */
  private readonly plain: PlainSegmentFiles | undefined;
  private readonly plainRows: number;
  private cuts: number[] = [];
  private nextCut = Infinity;
  /**
   * First row the gzip holds: 0, or with `piecesOutsideGzip` undefined while rows go to the
   * segments' files only, then the first row of the first segment that got no file.
   */
  private gzipFrom: number | undefined = 0;
  /**
   * Staged outside the gzip, until the first segment is whole: the chunks (bytes, rows) its file
   * got. A part that ends before (no whole segment) is gzipped from that file at finish, chunk
   * for chunk, so a small part is staged byte for byte as when staged whole.
   */
  private firstChunks: { bytes: number; rows: number }[] | undefined;
  private failure: Error | undefined;
  private state: 'open' | 'finishing' | 'finished' | 'aborted' = 'open';

  constructor(private readonly opts: PartWriterOptions) {
    assertSnapshotId(opts.snapshotId);
    assertDataset(opts.dataset);
    if (opts.lineage.snapshotId !== opts.snapshotId) {
      throw new InputError(
        `lineage.snapshotId ${opts.lineage.snapshotId} differs from snapshotId ${opts.snapshotId}`,
      );
    }
    this.rel = stagedPartRelPath(opts.snapshotId, opts.dataset, opts.ticker);
    this.finalPath = join(opts.root, this.rel);
    this.stagingId = randomBytes(8).toString('hex');
    this.tmpPath = `${this.finalPath}.tmp-${process.pid}-${this.stagingId}`;
    this.suffix = lineageSuffix({
      _snapshot_id: opts.snapshotId,
      _fetched_at: isoOf(opts.lineage.fetchedAt, 'lineage.fetchedAt'),
      _requested_ticker: opts.lineage.requestedTicker,
    });
    this.suffixBytes = Buffer.from(this.suffix, 'utf8');
    this.chunkBytes = opts.chunkBytes ?? 262_144;
    this.pool = new ChunkPool(this.chunkBytes, maxFreeChunks(this.chunkBytes));
    this.buf = this.pool.take();
    try {
      mkdirSync(dirname(this.finalPath), { recursive: true });
    } catch (err: unknown) {
      // A local fault (not a directory, no permission, read-only, disk full) does not heal by
      // retrying: fail the part at once, naming the path.
      throw localFault(`cannot create the staging folder ${dirname(this.finalPath)}`, err);
    }
    // A deep write buffer lets the main thread keep serialising while zlib compresses on the threadpool.
    // zlib passes stream options through to its Transform (the typings omit them).
    const gzipOptions: ZlibOptions & TransformOptions = {
      level: opts.gzipLevel ?? 1,
      // 64 KiB output chunks: with 256 KiB ones a worker staging 1M rows carried ~100 MB more
      // Buffer memory between full GCs (output slices keep their chunk alive), at no gain in speed
      // (docs/decisions.md, "staging writer tuning").
      chunkSize: 64 * 1024,
      writableHighWaterMark: HIGH_WATER_MARK,
    };
    this.gzipOptions = gzipOptions;
    this.memberBytes = opts.memberBytes ?? 8 * 1024 * 1024;
    this.tap = new Transform({
      transform: (chunk: Buffer, _enc, cb) => {
        this.hash.update(chunk);
        this.bytes += chunk.length;
        cb(null, chunk);
      },
    });
    this.file = createWriteStream(this.tmpPath);
    this.done = pipeline(this.tap, this.file);
    this.done.catch((err: unknown) => {
      this.failure ??= localFault(`staging ${this.tmpPath} failed`, err);
    });
    this.gzip = this.newMember();
    this.forward(this.gzip);
    this.plainRows = opts.pieceRows ?? 0;
    if (this.plainRows > 0) {
      const outside = opts.piecesOutsideGzip === true;
      this.plain = new PlainSegmentFiles(
        this.finalPath,
        this.stagingId,
        this.plainRows,
        opts.maxWaitingPlainFiles ?? (outside ? MAX_WAITING_OUTSIDE_GZIP : MAX_WAITING_PLAIN_FILES),
        // The files hold rows written nowhere else: losing one fails the part.
        outside
          ? (err: unknown) => {
              this.failure ??= localFault(`staging a segment of ${this.tmpPath} failed`, err);
            }
          : undefined,
      );
      this.nextCut = this.plainRows;
      if (outside) {
        this.gzipFrom = undefined;
        this.firstChunks = [];
      }
    }
  }

  private newMember(): Gzip {
    const g = createGzip(this.gzipOptions);
    g.on('error', (err: unknown) => {
      this.failure ??= localFault(`staging ${this.tmpPath} failed`, err);
      this.tap.destroy(this.failure);
    });
    return g;
  }

  /**
   * Sends one member's output to the file, then the next queued member's: members must not
   * interleave. A queued member buffers its output (and applies backpressure) until its turn.
   */
  private forward(g: Gzip): void {
    let size = 0;
    g.on('data', (c: Buffer) => {
      size += c.length;
      if (!this.tap.write(c)) {
        g.pause();
        this.tap.once('drain', () => g.resume());
      }
    });
    g.once('end', () => {
      this.memberSizes.push(size);
      const next = this.queued.shift();
      if (next !== undefined) this.forward(next);
      else if (this.state !== 'open') this.tap.end();
    });
  }

  /** Ends the current member and starts the next at `row` (the next row to be flushed). */
  private nextMember(row = this.flushedRows): void {
    const prev = this.gzip;
    this.gzip = this.newMember();
    this.memberRows.push(row);
    this.memberIn = 0;
    this.queued.push(this.gzip);
    prev.end();
  }

  get rows(): number {
    return this.count;
  }

  written(): WrittenPrefix | undefined {
    if (this.state !== 'open') return undefined;
    // bytesWritten counts bytes whose write() returned: readable by any process from here on.
    const onDisk = this.file.bytesWritten;
    let bytes = 0;
    let k = 0;
    while (k < this.memberSizes.length && bytes + this.memberSizes[k]! <= onDisk)
      bytes += this.memberSizes[k++]!;
    // Rows only in segments' files count as written: their files say when they are complete (take).
    const gzipFrom = this.gzipFrom ?? this.flushedRows;
    if (k === 0 && gzipFrom === 0) return undefined;
    const fields = this.tracker.snapshot();
    fields.names = fields.names.map((n) => (RESERVED_NAMES.has(n) ? `_api${n}` : n));
    return {
      file: this.tmpPath,
      finalFile: this.finalPath,
      stagingId: this.stagingId,
      rows: k === 0 ? gzipFrom : this.memberRows[k - 1]!,
      bytes,
      members: this.memberStarts().slice(0, k),
      fields,
      maxLineChars: this.maxLineChars,
      ...(gzipFrom > 0 ? { gzipFrom } : {}),
    };
  }

  write(row: Record<string, unknown>, rawJson?: Uint8Array): Promise<void> | void {
    this.assertWritable();
    if (row === null || typeof row !== 'object' || Array.isArray(row)) {
      throw new InputError(`row ${this.count + 1} of ${this.rel} is not a JSON object`);
    }
    this.tracker.observe(row);
    if (this.tracker.names.length !== this.seenNames) this.noteNewNames();
    // The received text is the line as is, unless a field must be renamed (or the row is `{}`).
    const line: Line =
      rawJson !== undefined && !this.reservedSeen && rawJson.length > 2
        ? rawJson
        : withSuffix(rowToJson(this.reservedSeen ? renameReserved(row) : row), this.suffix);
    return this.enqueue(line);
  }

  writeText(row: RowText): Promise<void> | void {
    this.assertWritable();
    this.tracker.observeKinds(row.names, row.kinds, row.at);
    if (this.tracker.names.length !== this.seenNames) this.noteNewNames();
    // A field to rename: the row is parsed after all (its text is ASCII, so latin1 is its UTF-8).
    const line: Line = this.reservedSeen
      ? withSuffix(rowToJson(renameReserved(parseAscii(row.text))), this.suffix)
      : row.text;
    return this.enqueue(line);
  }

  private assertWritable(): void {
    if (this.state !== 'open')
      throw new OutputError('OUTPUT_FAILED', `write after ${this.state} on ${this.rel}`);
    if (this.failure) throw this.failure;
  }

  /** Buffers a row's line (flushing under backpressure). */
  private enqueue(line: Line): Promise<void> | void {
    // A UTF-16 unit takes at most 3 bytes of UTF-8; bytes are at least as many as UTF-16 units.
    const units = typeof line === 'string' ? line.length : line.length - 1 + this.suffixBytes.length;
    const room = typeof line === 'string' ? line.length * 3 : units;
    if (units > this.maxLineChars) this.maxLineChars = units;
    this.count++;
    if (this.used + room > this.buf.length) {
      if (this.used > 0) {
        const pending = this.flush();
        if (pending) return pending.then(() => this.append(line, room));
      }
      return this.append(line, room);
    }
    this.put(line);
    if (this.used >= this.chunkBytes) return this.flush();
  }

  /** Adds a line to an empty or roomy buffer (a line longer than a chunk gets its own). */
  private append(line: Line, room: number): Promise<void> | void {
    if (this.used + room > this.buf.length) {
      this.buf = Buffer.allocUnsafe(Math.max(this.chunkBytes, room));
      this.used = 0;
    }
    this.put(line);
    if (this.used >= this.chunkBytes) return this.flush();
  }

  /** Encodes a line at `used`: a serialised one as is, a received row with the lineage suffix for its `}`. */
  private put(line: Line): void {
    if (this.flushedRows + this.bufRows === this.nextCut) {
      this.cuts.push(this.used);
      this.nextCut += this.plainRows;
    }
    this.bufRows++;
    if (typeof line === 'string') {
      this.used += this.buf.write(line, this.used);
      return;
    }
    // The suffix starts where the row's `}` was (copied, then overwritten: no subarray per row).
    this.buf.set(line, this.used);
    this.used += line.length - 1;
    this.buf.set(this.suffixBytes, this.used);
    this.used += this.suffixBytes.length;
  }

  /** An API field named like an exporter column is kept as `_api<name>` (it lands in `_extra`). */
  private noteNewNames(): void {
    for (let i = this.seenNames; i < this.tracker.names.length; i++) {
      if (RESERVED_NAMES.has(this.tracker.names[i]!)) this.reservedSeen = true;
    }
    this.seenNames = this.tracker.names.length;
  }

  private flush(): Promise<void> | void {
    const full = this.buf;
    const chunk = full.subarray(0, this.used);
    // The streams keep the chunk until written: the next lines go to another buffer, and this one
    // returns to the pool when the plain file and zlib are done with it.
    const lease = this.pool.lease(full);
    this.buf = this.pool.take();
    this.used = 0;
    // Chunks hold whole lines, so a member starts at a row.
    if (this.memberIn >= this.memberBytes) this.nextMember();
    this.noteFirstChunk(chunk.length, this.bufRows);
    this.flushedRows += this.bufRows;
    this.bufRows = 0;
    const disk = this.writePlain(chunk, lease);
    const lines = this.forGzip(chunk);
    const toGzip = lines.length > 0 ? lease.hold() : undefined;
    lease.end();
    if (toGzip === undefined) return disk;
    this.memberIn += lines.length;
    if (this.gzip.write(lines, toGzip)) return disk;
    const drained = new Promise<void>((resolve, reject) => {
      const onDrain = (): void => {
        this.gzip.off('error', onError);
        resolve();
      };
      const onError = (err: unknown): void => {
        this.gzip.off('drain', onDrain);
        reject(this.failure ?? coerceError(err));
      };
      this.gzip.once('drain', onDrain);
      this.gzip.once('error', onError);
    });
    return disk === undefined ? drained : Promise.all([drained, disk]).then(() => undefined);
  }

  /** The chunk's lines to the segments' plain files, cut where `put` saw a segment start. */
  private writePlain(chunk: Buffer, lease?: ChunkLease): Promise<void> | undefined {
    const cuts = this.cuts;
    this.cuts = [];
    // Once the gzip holds the rest of a part staged outside it, no segment gets a file.
    if (this.plain === undefined || (this.opts.piecesOutsideGzip === true && this.gzipFrom !== undefined))
      return undefined;
    return this.plain.write(chunk, cuts, lease);
  }

  /** Records a chunk of the first segment (before writePlain); none once a segment starts after it. */
  private noteFirstChunk(bytes: number, rows: number): void {
    if (this.firstChunks === undefined) return;
    if (this.cuts.length > 0 || this.gzipFrom !== undefined) this.firstChunks = undefined;
    else this.firstChunks.push({ bytes, rows });
  }

  /**
   * A part staged outside the gzip that never filled its first segment: its rows, in its plain
   * file only, go to the gzip after all, in the chunks they were written in (so members start at
   * the same rows), and the file goes. Reads one chunk at a time.
   */
  private async gzipFirstSegment(chunks: readonly { bytes: number; rows: number }[]): Promise<void> {
    const [seg] = (await this.plain?.keep(this.count)) ?? [];
    const file = plainSegmentPath(this.finalPath, this.stagingId, 0, this.count);
    if (seg === undefined || seg.bytes !== chunks.reduce((n, c) => n + c.bytes, 0))
      throw new OutputError('OUTPUT_FAILED', `staging ${this.rel}: ${file} does not hold the part's rows`);
    const fh = await open(file, 'r');
    try {
      let row = 0;
      for (const [i, c] of chunks.entries()) {
        const buf = Buffer.allocUnsafe(c.bytes);
        if ((await fh.read(buf, 0, c.bytes, null)).bytesRead !== c.bytes)
          throw new OutputError('OUTPUT_FAILED', `staging ${this.rel}: ${file} is short`);
        if (i === chunks.length - 1) {
          if (this.memberIn >= this.memberBytes && c.bytes > 0) this.nextMember(row);
          this.gzip.end(buf);
          break;
        }
        if (this.memberIn >= this.memberBytes) this.nextMember(row);
        this.memberIn += c.bytes;
        if (!this.gzip.write(buf)) await once(this.gzip, 'drain');
        row += c.rows;
      }
    } finally {
      await fh.close();
    }
    await rm(file, { force: true });
    this.gzipFrom = 0;
  }

  /**
   * The chunk's lines the gzip gets (after writePlain): all of them, or for a part staged outside
   * it, none while the segments' files take them, then those from where the files ended.
   */
  private forGzip(chunk: Buffer): Buffer {
    if (this.gzipFrom !== undefined) return chunk;
    const end = this.plain?.end;
    if (end === undefined) return chunk.subarray(0, 0);
    this.gzipFrom = end.row;
    return chunk.subarray(end.offset);
  }

  /**
   * The plain file of the segment starting at row `skip`, handed to its conversion, which removes
   * it; 'pending' while its last bytes are being written; undefined when it has none (or after finish).
   */
  takePlainPiece(skip: number): PlainPiece | 'pending' | undefined {
    if (this.state !== 'open') return undefined;
    return this.plain?.take(skip);
  }

  async finish(): Promise<StagedPart> {
    if (this.state !== 'open')
      throw new OutputError('OUTPUT_FAILED', `finish after ${this.state} on ${this.rel}`);
    this.state = 'finishing';
    try {
      if (this.failure) throw this.failure;
      const last = this.buf.subarray(0, this.used);
      if (this.memberIn >= this.memberBytes && last.length > 0) this.nextMember();
      this.noteFirstChunk(last.length, this.bufRows);
      this.flushedRows += this.bufRows;
      this.bufRows = 0;
      this.used = 0;
      await this.writePlain(last);
      const small = this.firstChunks;
      // The last member's end ends the file (forward()), once every member before it is written.
      if (small !== undefined) await this.gzipFirstSegment(small);
      else this.gzip.end(this.forGzip(last));
      await this.done;
      // The segments never queued (the last ones, whole or not) are converted at publish: from
      // the gzip, or (staged outside it) from their files, which are kept.
      let kept: KeptSegment[] | undefined;
      if (small !== undefined) kept = undefined;
      else if (this.opts.piecesOutsideGzip === true) kept = await this.plain?.keep(this.count);
      else await this.plain?.finish();
      if (this.failure) throw this.failure;
      if (this.memberSizes.length !== this.memberRows.length + 1)
        throw new OutputError('OUTPUT_FAILED', `staging ${this.rel}: a gzip member was not written`);
      await fsyncFile(this.tmpPath);
      const sha256 = this.hash.digest('hex');
      const fields = this.tracker.snapshot();
      fields.names = fields.names.map((n) => (RESERVED_NAMES.has(n) ? `_api${n}` : n));
      // The sidecar goes first: a data file under its final name always has its field list.
      await writeFieldsSidecar(fieldsSidecarPath(this.finalPath), {
        rows: this.count,
        sha256,
        fields,
        maxLineChars: this.maxLineChars,
        members: this.memberStarts(),
        stagingId: this.stagingId,
        ...(kept === undefined ? {} : { gzipFrom: this.gzipFrom ?? this.count, segments: kept }),
      });
      await rename(this.tmpPath, this.finalPath);
      await fsyncDir(dirname(this.finalPath));
      this.state = 'finished';
      return { file: toPosix(this.rel), rows: this.count, bytes: this.bytes, sha256 };
    } catch (err: unknown) {
      await this.discard();
      this.state = 'aborted';
      throw err instanceof OutputError
        ? err
        : new OutputError('OUTPUT_FAILED', `staging ${this.rel} failed: ${coerceError(err).message}`, {
            cause: err,
          });
    }
  }

  /** Where each member after the first starts: its first row and its byte offset in the file. */
  private memberStarts(): { row: number; offset: number }[] {
    const out: { row: number; offset: number }[] = [];
    let offset = 0;
    for (let i = 0; i < this.memberRows.length; i++) {
      offset += this.memberSizes[i] ?? 0;
      out.push({ row: this.memberRows[i] ?? 0, offset });
    }
    return out;
  }

  async abort(): Promise<void> {
    if (this.state === 'finished' || this.state === 'aborted') return;
    this.state = 'aborted';
    await this.discard();
  }

  private async discard(): Promise<void> {
    this.gzip.destroy();
    for (const g of this.queued) g.destroy();
    this.tap.destroy();
    await this.done.catch(() => undefined);
    await this.plain?.abort();
    await unlink(this.tmpPath).catch(() => undefined);
  }
}

function parseAscii(text: Uint8Array): Record<string, unknown> {
  return JSON.parse(Buffer.from(text.buffer, text.byteOffset, text.byteLength).toString('latin1')) as Record<
    string,
    unknown
  >;
}

function renameReserved(row: Record<string, unknown>): Record<string, unknown> {
  let copy: Record<string, unknown> | undefined;
  for (const name of RESERVED_NAMES) {
    if (Object.prototype.hasOwnProperty.call(row, name)) {
      copy ??= { ...row };
      copy[`_api${name}`] = copy[name];
      delete copy[name];
    }
  }
  return copy ?? row;
}

/** An OutputError naming the path and the system's reason (ENOSPC, EACCES, ENOTDIR, EROFS…). */
export function localFault(what: string, err: unknown): OutputError {
  const e = coerceError(err) as NodeJS.ErrnoException;
  return new OutputError('OUTPUT_FAILED', `${what}: ${e.code ? `${e.code} ` : ''}${e.message}`, {
    cause: err,
  });
}
