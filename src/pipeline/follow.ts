/** Follows a snapshot's record until it ends (published, failed or stopped). */
import type { SnapshotRecord, SnapshotState, SnapshotStore } from './snapshot-store.js';

export const FINAL_STATES: readonly SnapshotState[] = ['published', 'failed', 'stopped'];

export function isFinal(state: SnapshotState): boolean {
  return FINAL_STATES.includes(state);
}

export interface FollowOptions {
  /** Called with every poll's record. */
  onUpdate?: (rec: SnapshotRecord) => void | Promise<void>;
  /** @defaultValue 500 */
  pollMs?: number;
  /** Stops following (the snapshot goes on). */
  signal?: AbortSignal;
}

export async function followSnapshot(
  store: SnapshotStore,
  id: string,
  opts: FollowOptions = {},
): Promise<SnapshotRecord> {
  const pollMs = opts.pollMs ?? 500;
  for (;;) {
    const rec = await store.get(id);
    if (!rec) throw new Error(`snapshot ${id} has no record (removed or expired)`);
    await opts.onUpdate?.(rec);
    if (isFinal(rec.state)) return rec;
    if (opts.signal?.aborted)
      throw opts.signal.reason instanceof Error ? opts.signal.reason : new Error('stopped following');
    await new Promise<void>((resolve) => {
      const onAbort = (): void => {
        clearTimeout(t);
        resolve();
      };
      const t = setTimeout(() => {
        opts.signal?.removeEventListener('abort', onAbort);
        resolve();
      }, pollMs);
      opts.signal?.addEventListener('abort', onAbort, { once: true });
    });
  }
}
