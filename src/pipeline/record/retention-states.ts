/**
 * What the snapshot records say about snapshots found under an output root, in retention's terms:
 * prune never removes one the pipeline is running or may still retry.
 */
import type { PipelineState } from '../../output/index.js';
import { assertNever } from '../../types.js';
import type { SnapshotStore } from './snapshot-store.js';

export async function pipelineStates(
  store: SnapshotStore,
  snapshotIds: readonly string[],
): Promise<Map<string, PipelineState>> {
  const out = new Map<string, PipelineState>();
  for (const id of snapshotIds) {
    const rec = await store.get(id);
    if (rec === undefined) {
      out.set(id, { kind: 'unknown' });
      continue;
    }
    switch (rec.state) {
      case 'enqueuing':
      case 'running':
        out.set(id, { kind: 'active' });
        break;
      case 'failed':
      case 'stopped':
      case 'cancelled':
        out.set(id, { kind: 'retryable', updatedAtMs: rec.updatedAtMs });
        break;
      case 'published':
        out.set(id, { kind: 'published' });
        break;
      default:
        assertNever(rec.state, 'snapshot state');
    }
  }
  return out;
}
