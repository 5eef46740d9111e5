/**
 * Each segment's rows, uncompressed, in a file of their own while a part is staged: the part writer
 * hands this the same line chunks it gzips, and the segment's conversion (parquet/convert-piece.ts) reads
 * the plain file instead of cutting and decompressing the gzip members (~0.2 CPU s less per
 * 98,304 facts rows, docs/decisions.md "segments from uncompressed files"). Best effort: a file
 * that fails, or one past the cap of files waiting, is simply not there, and the segment is read
 * from the gzip part as before. The staged part itself never depends on these files.
 *
 * Ownership: a file belongs to the writer until the segment is queued (take()); then to the
 * conversion, which removes it. finish() removes the files never taken; abort() every file.
 *
 * `required` (a part staged with `piecesOutsideGzip`): the files ARE the segments' rows, not a
 * copy. A write error fails the part (onError); the first segment that gets no file (the cap)
 * ends the files: write() says where in the chunk, and every row from there goes to the gzip
 * tail. finish() keeps every file (the conversion removes a file only once converted; publish
 * converts the rest) and names the last, partial segment by its real row count.
 */
import { createWriteStream, existsSync, mkdirSync, type WriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { PlainPiece } from '../types.js';
import { plainPiecePath, pieceMetaPath } from '../layout.js';
import type { ChunkLease } from './chunk-pool.js';

/**
 * Plain files written and not yet converted, per part, before the next segment gets none (its
 * conversion reads the gzip part instead): with the one being written, at most three segments'
 * text per part in flight (~120 MB each for facts rows).
 */
export const MAX_WAITING_PLAIN_FILES = 2;

/**
 * The same cap for a part staged with its segments outside the gzip, where a segment with no file
 * is not a cheaper read but every later row gzipped: on a loaded 2-core box conversions fell
 * behind by 2 around the fifth of ten segments, gzipping half of SYNBIG's rows.
 */
export const MAX_WAITING_OUTSIDE_GZIP = 4;

/**
 * Bytes of level-1 gzip per byte of staged text: one SYNBIG segment of facts rows, 118 MB of lines,
 * gzips to 10.3 MB (docs/decisions.md "what the staged gzip … cost"). Sizes output files for a
 * part whose segments were never gzipped as if they had been.
 */
export const GZIP_SHARE_OF_PLAIN = 0.087;

/** Buffered bytes of a plain file past which the part writer waits for the disk. */
export const BACKLOG_BYTES = 4 * 1024 * 1024;

interface Entry {
  skip: number;
  file: string;
  stream: WriteStream | undefined;
  bytes: number;
  /** `converted`: taken, and its conversion has removed the file. */
  state: 'writing' | 'closing' | 'ready' | 'taken' | 'converted' | 'none';
  closed: Promise<void>;
}

/** A segment whose rows are in its file only (required mode), as the part's sidecar records it. */
export interface KeptPiece {
  skip: number;
  take: number;
  /** Size of its file when complete. */
  bytes: number;
}

/** Where the files end in a chunk (required mode): its byte offset, and the first row with no file. */
export interface FilesEnd {
  offset: number;
  row: number;
}

export class PlainPieceFiles {
  private readonly entries: Entry[] = [];
  /** Segment being written (the last entry), undefined before the first chunk. */
  private current: Entry | undefined;
  private failed = false;
  /** Required mode: where the files ended (no segment after gets one). */
  private ended: FilesEnd | undefined;

  constructor(
    private readonly finalFile: string,
    private readonly stagingId: string,
    private readonly rowsPerPiece: number,
    private readonly maxWaiting: number,
    /** Required mode: called once with the error that lost a file's rows. @defaultValue best effort */
    private readonly required?: (err: unknown) => void,
  ) {}

  /** Required mode: where the files ended, once a segment got none. */
  get end(): FilesEnd | undefined {
    return this.ended;
  }

  /**
   * Appends a chunk of whole lines; `cuts` are the offsets in it where a segment starts (the first
   * row of rows k × rowsPerPiece). Resolves when the disk has caught up, if it is behind. In
   * required mode, stops at the first segment with no file (then `end` says where). Each write
   * of a piece of the chunk holds `lease` until the disk has it.
   */
  write(chunk: Buffer, cuts: readonly number[], lease?: ChunkLease): Promise<void> | undefined {
    if (this.ended !== undefined) return undefined;
    let at = 0;
    if (this.current === undefined && this.open(0).stream === undefined && this.required) {
      this.ended = { offset: 0, row: 0 };
      return undefined;
    }
    for (const cut of cuts) {
      this.append(chunk.subarray(at, cut), lease);
      this.nextPiece();
      at = cut;
      if (this.required && this.current?.stream === undefined) {
        this.ended = { offset: cut, row: this.current!.skip };
        return this.backlog();
      }
    }
    this.append(chunk.subarray(at), lease);
    return this.backlog();
  }

  /** Resolves when the disk has caught up with the file being written, if it is behind. */
  private backlog(): Promise<void> | undefined {
    const s = this.current?.stream;
    // A destroyed stream (an error) emits nothing more: never wait on it.
    if (s === undefined || s.destroyed || s.writableLength < BACKLOG_BYTES) return undefined;
    // Whichever comes first removes the other: a listener left per wait piled up on the stream.
    return new Promise<void>((resolve) => {
      const done = (): void => {
        s.off('drain', done);
        s.off('close', done);
        resolve();
      };
      s.once('drain', done);
      s.once('close', done);
    });
  }

  private append(piece: Buffer, lease: ChunkLease | undefined): void {
    if (piece.length === 0) return;
    const e = this.current ?? this.open(0);
    if (e.stream === undefined || e.state !== 'writing') return;
    e.bytes += piece.length;
    e.stream.write(piece, lease?.hold());
  }

  /** Closes the segment being written (it becomes ready once on disk) and starts the next. */
  private nextPiece(): void {
    const prev = this.current ?? this.open(0);
    if (prev.stream !== undefined && prev.state === 'writing') {
      prev.state = 'closing';
      prev.stream.end();
    }
    this.open(prev.skip + this.rowsPerPiece);
  }

  private open(skip: number): Entry {
    const file = plainPiecePath(this.finalFile, this.stagingId, skip, this.rowsPerPiece);
    const e: Entry = { skip, file, stream: undefined, bytes: 0, state: 'none', closed: Promise.resolve() };
    this.entries.push(e);
    this.current = e;
    if (this.failed || this.waiting() >= this.maxWaiting) return e;
    try {
      mkdirSync(dirname(file), { recursive: true });
      const stream = createWriteStream(file);
      e.stream = stream;
      e.state = 'writing';
      e.closed = new Promise<void>((resolve) => {
        stream.once('close', () => {
          // Ready only when every byte is written: an error left it short, so it is dropped.
          if (e.state === 'closing' && stream.errored === null) e.state = 'ready';
          resolve();
        });
      });
      stream.on('error', (err: unknown) => {
        this.failed = true;
        this.required?.(err);
        if (e.state !== 'taken') e.state = 'none';
        void rm(file, { force: true });
      });
    } catch (err: unknown) {
      this.failed = true;
      this.required?.(err);
    }
    return e;
  }

  /**
   * Files closed and not yet converted. A taken file is converted once it is gone or, when it
   * holds the only copy of its rows (kept until the publish), once its segment's meta is written.
   */
  private waiting(): number {
    let n = 0;
    for (const e of this.entries) {
      if (e.state === 'ready' || e.state === 'closing') n++;
      else if (e.state === 'taken') {
        if (existsSync(e.file) && !existsSync(pieceMetaPath(e.file))) n++;
        else e.state = 'converted';
      }
    }
    return n;
  }

  /**
   * The plain file of the segment starting at row `skip`, handed over to its conversion (which
   * removes it); 'pending' while its bytes are still being written; undefined when it has none.
   */
  take(skip: number): PlainPiece | 'pending' | undefined {
    const e = this.entries.find((x) => x.skip === skip);
    if (e === undefined) return undefined;
    if (e.state === 'writing' || e.state === 'closing') return 'pending';
    if (e.state !== 'ready') return undefined;
    e.state = 'taken';
    return { file: e.file, bytes: e.bytes };
  }

  /** The part is staged: the files never taken are removed (their rows are converted at publish). */
  async finish(): Promise<void> {
    await this.close((e) => e.state !== 'taken');
  }

  /**
   * Required mode: the part of `rows` rows is staged; every file is kept, the last (partial)
   * segment's renamed to its real row count. The segments, in order, with their files' sizes.
   */
  async keep(rows: number): Promise<KeptPiece[]> {
    const last = this.current;
    if (last?.stream !== undefined && last.state === 'writing') {
      last.state = 'closing';
      last.stream.end();
    }
    await Promise.all(this.entries.map((e) => e.closed));
    const kept: KeptPiece[] = [];
    for (const e of this.entries) {
      if (e.stream === undefined) break;
      if (e.state !== 'ready' && e.state !== 'taken' && e.state !== 'converted')
        throw new Error(`the rows from ${e.skip} were not all written to ${e.file}`);
      const take = Math.min(this.rowsPerPiece, rows - e.skip);
      if (take < this.rowsPerPiece) {
        const to = plainPiecePath(this.finalFile, this.stagingId, e.skip, take);
        await rename(e.file, to);
        e.file = to;
      }
      kept.push({ skip: e.skip, take, bytes: e.bytes });
    }
    return kept;
  }

  /** The part is discarded: every file goes, taken or not (its segments name a staging id never published). */
  async abort(): Promise<void> {
    await this.close(() => true);
  }

  private async close(remove: (e: Entry) => boolean): Promise<void> {
    for (const e of this.entries) {
      if (e.state === 'writing') {
        e.state = 'none';
        e.stream?.end();
      }
    }
    await Promise.all(this.entries.map((e) => e.closed));
    await Promise.all(
      this.entries.filter((e) => e.stream !== undefined && remove(e)).map((e) => rm(e.file, { force: true })),
    );
  }
}
