/**
 * Stages one part (one ticker × dataset of a snapshot) as gzip NDJSON, streaming: memory holds one
 * chunk of lines, whatever the part's size. Written under a temporary name and renamed into
 * place by finish(), so a retried or crashed attempt never leaves half a file under the final name.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { open, rename, rm, unlink } from 'node:fs/promises';
import { once } from 'node:events';
import { dirname, join } from 'node:path';
import type { TransformOptions } from 'node:stream';
import type { ZlibOptions } from 'node:zlib';
import { coerceError, InputError, OutputError } from '../../../errors.js';
import type { RowText } from '../../../types.js';
import type { PartWriter, PlainPiece, StagedPart, WrittenPrefix } from '../types.js';
import { FieldTracker } from '../field-kinds.js';
import { fsyncDir, fsyncFile } from '../../storage/index.js';
import { isoOf, lineageSuffix, parseAscii, renameReserved, rowToJson, withSuffix } from './json-line.js';
import { localFault } from './local-fault.js';
import type { PartWriterOptions } from './options.js';
import { assertDataset, assertSnapshotId, toPosix } from '../../catalog/index.js';
import { fieldsSidecarPath, plainPiecePath, stagedPartRelPath } from '../layout.js';
import { RESERVED_NAMES } from '../../../datasets/index.js';
import { writeFieldsSidecar } from '../sidecar.js';
import { ChunkPool, type ChunkLease } from './chunk-pool.js';
import { GzipMembers } from './gzip-members.js';
import {
  BACKLOG_BYTES,
  MAX_WAITING_OUTSIDE_GZIP,
  MAX_WAITING_PLAIN_FILES,
  PlainPieceFiles,
  type KeptPiece,
} from './plain-pieces.js';

export type { Lineage, PartWriterOptions } from './options.js';
export { localFault } from './local-fault.js';
export type { PartWriter, StagedPart, WrittenPrefix };

export function createPartWriter(opts: PartWriterOptions): PartWriter {
  return new NdjsonPartWriter(opts);
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
  private readonly suffix: string;
  private readonly suffixBytes: Buffer;
  private readonly chunkBytes: number;
  private readonly pool: ChunkPool;
  private readonly tracker = new FieldTracker();
  /** The gzip members in the temporary file. */
  private readonly members: GzipMembers;
  private readonly memberBytes: number;
  /** Rows whose lines went to gzip; `bufRows` are in `buf`. */
  private flushedRows = 0;
  private bufRows = 0;
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
  private readonly plain: PlainPieceFiles | undefined;
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
    this.memberBytes = opts.memberBytes ?? 8 * 1024 * 1024;
    this.members = new GzipMembers(this.tmpPath, gzipOptions, (what, err) => {
      this.failure ??= localFault(what, err);
      return this.failure;
    });
    this.plainRows = opts.pieceRows ?? 0;
    if (this.plainRows > 0) {
      const outside = opts.piecesOutsideGzip === true;
      this.plain = new PlainPieceFiles(
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

  /** Ends the current member and starts the next at `row` (the next row to be flushed). */
  private nextMember(row = this.flushedRows): void {
    this.members.next(row);
  }

  get rows(): number {
    return this.count;
  }

  get pieceRows(): number | undefined {
    return this.opts.pieceRows;
  }

  written(): WrittenPrefix | undefined {
    if (this.state !== 'open') return undefined;
    // bytesWritten counts bytes whose write() returned: readable by any process from here on.
    const onDisk = this.members.onDisk;
    const { memberSizes, memberRows } = this.members;
    let bytes = 0;
    let k = 0;
    while (k < memberSizes.length && bytes + memberSizes[k]! <= onDisk) bytes += memberSizes[k++]!;
    // Rows only in segments' files count as written: their files say when they are complete (take).
    const gzipFrom = this.gzipFrom ?? this.flushedRows;
    if (k === 0 && gzipFrom === 0) return undefined;
    const fields = this.tracker.snapshot();
    fields.names = fields.names.map((n) => (RESERVED_NAMES.has(n) ? `_api${n}` : n));
    return {
      file: this.tmpPath,
      finalFile: this.finalPath,
      stagingId: this.stagingId,
      rows: k === 0 ? gzipFrom : memberRows[k - 1]!,
      bytes,
      members: this.members.starts().slice(0, k),
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
    if (this.members.memberIn >= this.memberBytes) this.nextMember();
    this.noteFirstChunk(chunk.length, this.bufRows);
    this.flushedRows += this.bufRows;
    this.bufRows = 0;
    const disk = this.writePlain(chunk, lease);
    const lines = this.forGzip(chunk);
    const toGzip = lines.length > 0 ? lease.hold() : undefined;
    lease.end();
    if (toGzip === undefined) return disk;
    this.members.memberIn += lines.length;
    const gzip = this.members.gzip;
    if (gzip.write(lines, toGzip)) return disk;
    const drained = new Promise<void>((resolve, reject) => {
      const onDrain = (): void => {
        gzip.off('error', onError);
        resolve();
      };
      const onError = (err: unknown): void => {
        gzip.off('drain', onDrain);
        reject(this.failure ?? coerceError(err));
      };
      gzip.once('drain', onDrain);
      gzip.once('error', onError);
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
  private async gzipFirstPiece(chunks: readonly { bytes: number; rows: number }[]): Promise<void> {
    const [seg] = (await this.plain?.keep(this.count)) ?? [];
    const file = plainPiecePath(this.finalPath, this.stagingId, 0, this.count);
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
          if (this.members.memberIn >= this.memberBytes && c.bytes > 0) this.nextMember(row);
          this.members.end(buf);
          break;
        }
        if (this.members.memberIn >= this.memberBytes) this.nextMember(row);
        this.members.memberIn += c.bytes;
        if (!this.members.gzip.write(buf)) await once(this.members.gzip, 'drain');
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
      if (this.members.memberIn >= this.memberBytes && last.length > 0) this.nextMember();
      this.noteFirstChunk(last.length, this.bufRows);
      this.flushedRows += this.bufRows;
      this.bufRows = 0;
      this.used = 0;
      await this.writePlain(last);
      const small = this.firstChunks;
      // The last member's end ends the file (GzipMembers), once every member before it is written.
      if (small !== undefined) await this.gzipFirstPiece(small);
      else this.members.end(this.forGzip(last));
      await this.members.done;
      // The segments never queued (the last ones, whole or not) are converted at publish: from
      // the gzip, or (staged outside it) from their files, which are kept.
      let kept: KeptPiece[] | undefined;
      if (small !== undefined) kept = undefined;
      else if (this.opts.piecesOutsideGzip === true) kept = await this.plain?.keep(this.count);
      else await this.plain?.finish();
      if (this.failure) throw this.failure;
      if (this.members.memberSizes.length !== this.members.memberRows.length + 1)
        throw new OutputError('OUTPUT_FAILED', `staging ${this.rel}: a gzip member was not written`);
      await fsyncFile(this.tmpPath);
      const sha256 = this.members.digest();
      const fields = this.tracker.snapshot();
      fields.names = fields.names.map((n) => (RESERVED_NAMES.has(n) ? `_api${n}` : n));
      // The sidecar goes first: a data file under its final name always has its field list.
      await writeFieldsSidecar(fieldsSidecarPath(this.finalPath), {
        rows: this.count,
        sha256,
        fields,
        maxLineChars: this.maxLineChars,
        members: this.members.starts(),
        stagingId: this.stagingId,
        ...(kept === undefined ? {} : { gzipFrom: this.gzipFrom ?? this.count, segments: kept }),
      });
      await rename(this.tmpPath, this.finalPath);
      await fsyncDir(dirname(this.finalPath));
      this.state = 'finished';
      return { file: toPosix(this.rel), rows: this.count, bytes: this.members.bytes, sha256 };
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

  async abort(): Promise<void> {
    if (this.state === 'finished' || this.state === 'aborted') return;
    this.state = 'aborted';
    await this.discard();
  }

  private async discard(): Promise<void> {
    await this.members.destroy();
    await this.plain?.abort();
    await unlink(this.tmpPath).catch(() => undefined);
  }
}
