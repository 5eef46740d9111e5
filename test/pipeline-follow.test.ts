/**
 * Following a snapshot: a wake from this process's workers polls at once instead of after pollMs,
 * and following ends on a final state, an abort, or a record that disappeared.
 */
import { describe, expect, it } from 'vitest';
import { followSnapshot } from '../src/pipeline/follow.js';
import type { SnapshotRecord, SnapshotState, SnapshotStore } from '../src/pipeline/snapshot-store.js';

/** The one method followSnapshot reads, over a record the test moves along. */
function storeWith(state: { value: SnapshotState | null }): SnapshotStore {
  return {
    get: async (id: string) =>
      state.value === null ? null : ({ spec: { id }, state: state.value } as unknown as SnapshotRecord),
  } as unknown as SnapshotStore;
}

describe('followSnapshot', () => {
  it('polls at once when woken, not a poll interval later', async () => {
    const state: { value: SnapshotState | null } = { value: 'running' };
    let wake: (() => void) | undefined;
    let unsubscribed = false;
    const t0 = performance.now();
    const followed = followSnapshot(storeWith(state), 's1', {
      pollMs: 60_000,
      wakeOn: (w) => {
        wake = w;
        return () => (unsubscribed = true);
      },
    });
    await new Promise((r) => setTimeout(r, 50));
    state.value = 'published';
    wake?.();
    const rec = await followed;
    expect(rec.state).toBe('published');
    expect(performance.now() - t0).toBeLessThan(30_000);
    expect(unsubscribed).toBe(true);
  });

  it('a wake between polls is harmless, and an abort ends the wait with its reason', async () => {
    const state: { value: SnapshotState | null } = { value: 'running' };
    let wake: (() => void) | undefined;
    const ac = new AbortController();
    const followed = followSnapshot(storeWith(state), 's2', {
      pollMs: 60_000,
      signal: ac.signal,
      wakeOn: (w) => ((wake = w), () => undefined),
    });
    await new Promise((r) => setTimeout(r, 20));
    wake?.();
    wake?.();
    await new Promise((r) => setTimeout(r, 20));
    ac.abort(new Error('interrupted by SIGINT'));
    await expect(followed).rejects.toThrow('interrupted by SIGINT');
  });

  it('says so when the record is gone', async () => {
    await expect(followSnapshot(storeWith({ value: null }), 's3', { pollMs: 10 })).rejects.toThrow(
      'snapshot s3 has no record (removed or expired)',
    );
  });
});
