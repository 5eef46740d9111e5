/**
 * The part writer's line chunks, used again once every stream that took one has written it.
 *
 * Why: a chunk waits for the disk (a segment's plain file) or for zlib, often long enough to
 * outlive two scavenges of a young generation capped at 16 MiB (src/runtime/young-generation.ts), and then
 * dies in the old generation, where its memory (outside V8's heap) waits for a full collection:
 * up to ~40 MB of dead chunks at `run --local`'s peak on Node 24 (docs/decisions.md, "One process:
 * the staging chunks used again"). A chunk in use again is never garbage.
 *
 * Invariant: a buffer goes back to the pool only when its owner has ended its lease and every
 * write it was lent to has called back (written, or failed: the stream is done with it either
 * way). A callback that never comes only keeps the buffer out of the pool.
 */

/** Lends one chunk to the writes of its lines. */
export interface ChunkLease {
  /** The callback for one more stream write of (part of) the chunk. */
  hold(): () => void;
  /** The owner hands out no more writes; the chunk returns once the writes have called back. */
  end(): void;
}

export class ChunkPool {
  private readonly free: Buffer[] = [];

  /**
   * @param chunkBytes the size of every buffer the pool hands out and takes back
   * @param maxFree buffers kept for reuse at most; more returned at once are left to the GC
   */
  constructor(
    readonly chunkBytes: number,
    private readonly maxFree: number,
  ) {}

  /** A chunk-sized buffer whose contents are garbage: one returned earlier, or a new one. */
  take(): Buffer {
    return this.free.pop() ?? Buffer.allocUnsafe(this.chunkBytes);
  }

  /** Buffers waiting to be used again. */
  get freeCount(): number {
    return this.free.length;
  }

  /** A lease on `buf` (taken from this pool); it comes back when the lease ends and its writes are done. */
  lease(buf: Buffer): ChunkLease {
    // The owner's own hold: the count cannot reach 0 while writes are still being handed out.
    let holds = 1;
    // Each hold is released once: a second call must not free a buffer still in use.
    const releaser = (): (() => void) => {
      let called = false;
      return () => {
        if (called) return;
        called = true;
        holds--;
        if (holds === 0) this.give(buf);
      };
    };
    return {
      hold: () => {
        holds++;
        return releaser();
      },
      end: releaser(),
    };
  }

  private give(buf: Buffer): void {
    if (buf.length !== this.chunkBytes || this.free.length >= this.maxFree) return;
    this.free.push(buf);
  }
}
