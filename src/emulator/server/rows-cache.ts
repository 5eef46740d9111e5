/**
 * Serialised row chunks of the row lists served more than once (facts/full of a company, its
 * evidence, catalogs…), kept as Buffers ready for the socket with the public base URL applied.
 * Rows are immutable, so the text never goes stale. Weakly keyed by the list: an entry lives exactly
 * as long as the store keeps the list (its company cache), the cache extends no lifetime. A list is
 * recorded on its second serve, so one-off lists (filtered by-series answers, clone views built per
 * request) never cost memory; a list whose text exceeds `maxListBytes` (SYNBIG's generated million
 * rows) is never kept.
 */

/** Lists shorter than this are serialised every time (one chunk, nothing worth keeping). */
const MIN_ROWS = 256;
/** Largest text kept per list. @defaultValue 64 MiB (NVDA's facts/full is 17 MB) */
const MAX_LIST_BYTES = 64 * 1024 * 1024;

interface Entry {
  /** What the text depends on besides the rows: the base URL of the URL fields. */
  key: string;
  chunks: readonly Buffer[];
}

/** Collects the chunks of one serve; stores them when the serve completes within the size cap. */
export class ChunkRecorder {
  private chunks: Buffer[] | undefined = [];
  private bytes = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly store: (chunks: readonly Buffer[]) => void,
  ) {}

  add(chunk: Buffer): void {
    if (this.chunks === undefined) return;
    this.bytes += chunk.length;
    if (this.bytes > this.maxBytes) this.chunks = undefined;
    else this.chunks.push(chunk);
  }

  /** Call once every row was serialised (not after a failed or abandoned serve). */
  finish(): void {
    if (this.chunks !== undefined) this.store(this.chunks);
    this.chunks = undefined;
  }
}

export class RowsTextCache {
  private readonly seen = new WeakSet<readonly unknown[]>();
  private readonly entries = new WeakMap<readonly unknown[], Entry>();

  constructor(private readonly maxListBytes = MAX_LIST_BYTES) {}

  /** The chunks of `rows` serialised under `key`, if recorded. */
  get(rows: readonly unknown[], key: string): readonly Buffer[] | undefined {
    const e = this.entries.get(rows);
    return e !== undefined && e.key === key ? e.chunks : undefined;
  }

  /** A recorder for this serve of `rows`: from its second serve on, undefined before (and for short lists). */
  recorder(rows: readonly unknown[], key: string): ChunkRecorder | undefined {
    if (rows.length < MIN_ROWS) return undefined;
    if (!this.seen.has(rows)) {
      this.seen.add(rows);
      return undefined;
    }
    return new ChunkRecorder(this.maxListBytes, (chunks) => this.entries.set(rows, { key, chunks }));
  }
}
