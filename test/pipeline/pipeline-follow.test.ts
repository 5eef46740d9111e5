/**
 * Following a snapshot: a wake from this process's workers polls at once instead of after pollMs,
 * and following ends on a final state, an abort, or a record that disappeared.
 */
import { describe, expect, it, vi } from 'vitest';
import { followSnapshot } from '../../src/pipeline/queue/follow.js';
import type { SnapshotState, SnapshotView } from '../../src/pipeline/record/snapshot-states.js';
import type { SnapshotStore } from '../../src/pipeline/record/snapshot-store.js';

/** The one method followSnapshot reads, over a record the test moves along. */
function storeWith(state: { value: SnapshotState | null }): SnapshotStore {
  return {
    view: async (id: string) =>
      state.value === null ? null : ({ spec: { id }, state: state.value } as unknown as SnapshotView),
  } as unknown as SnapshotStore;
}

describe('followSnapshot', () => {
  it('polls at once when woken, not a poll interval later', async () => {
    // Fake timers: the poll interval never elapses unless the test moves time, so only the wake
    // can end the wait.
    vi.useFakeTimers();
    try {
      const state: { value: SnapshotState | null } = { value: 'running' };
      let polls = 0;
      const store = storeWith(state);
      const counted = {
        view: async (id: string) => (polls++, store.view(id)),
      } as unknown as SnapshotStore;
      let wake: (() => void) | undefined;
      let unsubscribed = false;
      let settled: SnapshotView | undefined;
      const followed = followSnapshot(counted, 's1', {
        pollMs: 60_000,
        wakeOn: (w) => {
          wake = w;
          return () => (unsubscribed = true);
        },
      }).then((rec) => (settled = rec));
      await vi.advanceTimersByTimeAsync(1000);
      expect(polls).toBe(1);
      state.value = 'published';
      wake?.();
      // One second of the fake clock, far short of the 60 s interval: the wake alone polled.
      await vi.advanceTimersByTimeAsync(1000);
      expect(settled?.state).toBe('published');
      expect(polls).toBe(2);
      expect(vi.getTimerCount()).toBe(0);
      expect(unsubscribed).toBe(true);
      await followed;
    } finally {
      vi.useRealTimers();
    }
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
