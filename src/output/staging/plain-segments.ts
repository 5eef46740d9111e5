/**
 * Each segment's rows, uncompressed, in a file of their own while a part is staged: the part writer
 * hands this the same line chunks it gzips, and the segment's conversion (early-segments.ts) reads
 * the plain file instead of cutting and decompressing the gzip members (~0.2 CPU s less per
 * 98,304 facts rows, docs/decisions.md "segments from uncompressed files"). Best effort: a file
 * that fails, or one past the cap of files waiting, is simply not there, and the segment is read
 * from the gzip part as before. The staged part itself never depends on these files.
 *
 * Ownership: a file belongs to the writer until the segment is queued (take()); then to the
 * conversion, which removes it. finish() removes the files never taken; abort() every file.
 */
import { createWriteStream, existsSync, mkdirSync, type WriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { PlainSegment } from '../../types.js';

/** The folder holding the segments (and their plain files) of the staged part at `stagedFile`. */
export function segmentsDir(stagedFile: string): string {
  const datasetDir = dirname(stagedFile);
  return join(
    dirname(datasetDir),
    '_segments',
    basename(datasetDir),
    basename(stagedFile).replace(/\.ndjson\.gz$/, ''),
  );
}

/** The uncompressed rows [skip, skip + take) of staging attempt `stagingId` of the part at `finalFile`. */
export function plainSegmentPath(finalFile: string, stagingId: string, skip: number, take: number): string {
  return join(segmentsDir(finalFile), `${stagingId}-${skip}-${take}.ndjson`);
}

/**
 * Plain files written and not yet converted, per part, before the next segment gets none (its
 * conversion reads the gzip part instead): with the one being written, at most three segments'
 * text per part in flight (~120 MB each for facts rows).
 */
export const MAX_WAITING_PLAIN_FILES = 2;

/** Buffered bytes of a plain file past which the part writer waits for the disk. */
const BACKLOG_BYTES = 4 * 1024 * 1024;

interface Entry {
  skip: number;
  file: string;
  stream: WriteStream | undefined;
  bytes: number;
  state: 'writing' | 'closing' | 'ready' | 'taken' | 'none';
  closed: Promise<void>;
}

export class PlainSegmentFiles {
  private readonly entries: Entry[] = [];
  /** Segment being written (the last entry), undefined before the first chunk. */
  private current: Entry | undefined;
  private failed = false;

  constructor(
    private readonly finalFile: string,
    private readonly stagingId: string,
    private readonly segmentRows: number,
    private readonly maxWaiting: number,
  ) {}

  /**
   * Appends a chunk of whole lines; `cuts` are the offsets in it where a segment starts (the first
   * row of rows k × segmentRows). Resolves when the disk has caught up, if it is behind.
   */
  write(chunk: Buffer, cuts: readonly number[]): Promise<void> | undefined {
    let at = 0;
    for (const cut of cuts) {
      this.append(chunk.subarray(at, cut));
      this.nextSegment();
      at = cut;
    }
    this.append(chunk.subarray(at));
    const s = this.current?.stream;
    // A destroyed stream (an error) emits nothing more: never wait on it.
    if (s === undefined || s.destroyed || s.writableLength < BACKLOG_BYTES) return undefined;
    return new Promise<void>((resolve) => {
      s.once('drain', resolve);
      s.once('close', resolve);
    });
  }

  private append(piece: Buffer): void {
    if (piece.length === 0) return;
    const e = this.current ?? this.open(0);
    if (e.stream === undefined || e.state !== 'writing') return;
    e.bytes += piece.length;
    e.stream.write(piece);
  }

  /** Closes the segment being written (it becomes ready once on disk) and starts the next. */
  private nextSegment(): void {
    const prev = this.current ?? this.open(0);
    if (prev.stream !== undefined && prev.state === 'writing') {
      prev.state = 'closing';
      prev.stream.end();
    }
    this.open(prev.skip + this.segmentRows);
  }

  private open(skip: number): Entry {
    const file = plainSegmentPath(this.finalFile, this.stagingId, skip, this.segmentRows);
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
      stream.on('error', () => {
        this.failed = true;
        if (e.state !== 'taken') e.state = 'none';
        void rm(file, { force: true });
      });
    } catch {
      this.failed = true;
    }
    return e;
  }

  /** Files closed and not yet converted (a taken file is gone once its conversion ends). */
  private waiting(): number {
    let n = 0;
    for (const e of this.entries) {
      if (e.state === 'ready' || e.state === 'closing') n++;
      else if (e.state === 'taken') {
        if (existsSync(e.file)) n++;
        else e.state = 'none';
      }
    }
    return n;
  }

  /**
   * The plain file of the segment starting at row `skip`, handed over to its conversion (which
   * removes it); 'pending' while its bytes are still being written; undefined when it has none.
   */
  take(skip: number): PlainSegment | 'pending' | undefined {
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
