/**
 * Follows a snapshot's record until it ends (a final state of the record). Each poll reads the
 * record's view, without the company list, so it costs the same at 10 or 10,000 companies.
 */
import { isFinal, type SnapshotStore, type SnapshotView } from '../record/index.js';

export interface FollowOptions {
  /** Called with every poll's record. */
  onUpdate?: (rec: SnapshotView) => void | Promise<void>;
  /** @defaultValue 500 */
  pollMs?: number;
  /** Stops following (the snapshot goes on). */
  signal?: AbortSignal;
  /**
   * Polls at once when the returned registration calls `wake` (workers in this process finishing
   * a job), so `run --local` ends when its snapshot does, not up to `pollMs` later. Returns the
   * unsubscribe.
   */
  wakeOn?: (wake: () => void) => () => void;
}

export async function followSnapshot(
  store: SnapshotStore,
  id: string,
  opts: FollowOptions = {},
): Promise<SnapshotView> {
  const pollMs = opts.pollMs ?? 500;
  /** Ends the current wait between polls early; undefined while polling. */
  let endWait: (() => void) | undefined;
  const unsubscribe = opts.wakeOn?.(() => endWait?.());
  try {
    for (;;) {
      const rec = await store.view(id);
      if (!rec) throw new Error(`snapshot ${id} has no record (removed or expired)`);
      await opts.onUpdate?.(rec);
      if (isFinal(rec.state)) return rec;
      if (opts.signal?.aborted)
        throw opts.signal.reason instanceof Error ? opts.signal.reason : new Error('stopped following');
      await new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(t);
          opts.signal?.removeEventListener('abort', done);
          endWait = undefined;
          resolve();
        };
        const t = setTimeout(done, pollMs);
        opts.signal?.addEventListener('abort', done, { once: true });
        endWait = done;
      });
    }
  } finally {
    unsubscribe?.();
  }
}
