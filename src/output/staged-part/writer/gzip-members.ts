/**
 * The gzip side of a staged part: members written one after another into the temporary file
 * (never interleaved), their sizes and first rows (the sidecar's member starts), and the file's
 * sha256 and size. The part writer decides where a member ends; this owns the streams.
 */
import { createHash } from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';
import { Transform, type TransformOptions } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip, type Gzip, type ZlibOptions } from 'node:zlib';

/** Records a failure of the file's streams and returns the part's failure (the first one). */
export type FailureSink = (what: string, err: unknown) => Error;

export class GzipMembers {
  /** The member being written; members after the first wait in `queued` for their turn. */
  private member: Gzip;
  private readonly queued: Gzip[] = [];
  private readonly tap: Transform;
  private readonly file: WriteStream;
  /** Settles once the file is written (or failed). */
  readonly done: Promise<void>;
  private readonly hash = createHash('sha256');
  /** Compressed bytes written to the file. */
  bytes = 0;
  /** Uncompressed bytes written to the current member. */
  memberIn = 0;
  /** Compressed bytes of each finished member, in order. */
  readonly memberSizes: number[] = [];
  /** First row of each member after the first. */
  readonly memberRows: number[] = [];
  /** The last member was ended: its end ends the file. */
  private ending = false;

  constructor(
    private readonly path: string,
    private readonly options: ZlibOptions & TransformOptions,
    private readonly fail: FailureSink,
  ) {
    this.tap = new Transform({
      transform: (chunk: Buffer, _enc, cb) => {
        this.hash.update(chunk);
        this.bytes += chunk.length;
        cb(null, chunk);
      },
    });
    this.file = createWriteStream(path);
    this.done = pipeline(this.tap, this.file);
    this.done.catch((err: unknown) => {
      this.fail(`staging ${path} failed`, err);
    });
    this.member = this.newMember();
    this.forward(this.member);
  }

  /** The member being written. */
  get gzip(): Gzip {
    return this.member;
  }

  /** Bytes whose write() returned: readable by any process from here on. */
  get onDisk(): number {
    return this.file.bytesWritten;
  }

  private newMember(): Gzip {
    const g = createGzip(this.options);
    g.on('error', (err: unknown) => {
      this.tap.destroy(this.fail(`staging ${this.path} failed`, err));
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
      else if (this.ending) this.tap.end();
    });
  }

  /** Ends the current member and starts the next at `row`. */
  next(row: number): void {
    const prev = this.member;
    this.member = this.newMember();
    this.memberRows.push(row);
    this.memberIn = 0;
    this.queued.push(this.member);
    prev.end();
  }

  /** Ends the last member with `chunk`; the file ends once every member is written. */
  end(chunk: Buffer): void {
    this.ending = true;
    this.member.end(chunk);
  }

  digest(): string {
    return this.hash.digest('hex');
  }

  /** Where each member after the first starts: its first row and its byte offset in the file. */
  starts(): { row: number; offset: number }[] {
    const out: { row: number; offset: number }[] = [];
    let offset = 0;
    for (let i = 0; i < this.memberRows.length; i++) {
      offset += this.memberSizes[i] ?? 0;
      out.push({ row: this.memberRows[i] ?? 0, offset });
    }
    return out;
  }

  /** Stops every stream and waits for the file to close. */
  async destroy(): Promise<void> {
    this.member.destroy();
    for (const g of this.queued) g.destroy();
    this.tap.destroy();
    await this.done.catch(() => undefined);
  }
}
