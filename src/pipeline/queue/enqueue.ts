/**
 * Enqueues a snapshot exactly once. The Redis record (SnapshotStore) is created atomically first;
 * only its creator adds the flow. Enqueueing an existing id is a no-op whatever state it is in,
 * also after BullMQ removed the finished jobs. `retry` re-enqueues a failed, stopped or cancelled snapshot:
 * parts already exported are reused, only the others send requests.
 */
import { Job, type FlowProducer, type Queue } from 'bullmq';
import type { Logger } from '../../log.js';
import { buildSnapshotFlow, type FlowSettings } from './flow.js';
import { partJobId, publishJobId } from './ids.js';
import {
  companyKey,
  isRetryable,
  type SnapshotRecord,
  type SnapshotSpec,
  type SnapshotStore,
} from '../record/index.js';

export interface EnqueueDeps {
  store: SnapshotStore;
  flows: FlowProducer;
  /** Queues of the flow, to clear the old jobs of a retried snapshot. */
  partsQueue: Queue;
  snapshotsQueue: Queue;
  settings: FlowSettings;
  logger: Logger;
  /** @defaultValue Date.now */
  now?: () => number;
}

export type EnqueueOutcome =
  | { kind: 'created'; record: SnapshotRecord }
  | { kind: 'retried'; record: SnapshotRecord }
  /** The id is taken: nothing was enqueued. */
  | { kind: 'exists'; record: SnapshotRecord };

/** A record stuck in `enqueuing` this long belongs to a process that died before adding the flow. */
const STALE_ENQUEUE_MS = 60_000;

export async function enqueueSnapshot(
  deps: EnqueueDeps,
  spec: SnapshotSpec,
  opts: { retry?: boolean } = {},
): Promise<EnqueueOutcome> {
  const now = deps.now ?? Date.now;
  let kind: 'created' | 'retried' = 'created';
  if (!(await deps.store.create(spec))) {
    const existing = await deps.store.get(spec.id);
    if (!existing) return enqueueSnapshot(deps, spec, opts); // expired between the two calls
    const stale = existing.state === 'enqueuing' && now() - existing.updatedAtMs > STALE_ENQUEUE_MS;
    if (opts.retry && isRetryable(existing.state)) {
      if (!(await deps.store.reopen(spec.id)))
        return { kind: 'exists', record: (await deps.store.get(spec.id)) ?? existing };
      await removeOldJobs(deps, existing.spec);
      kind = 'retried';
    } else if (!stale) {
      return { kind: 'exists', record: existing };
    }
    // A retry or a stale enqueue runs the spec the snapshot was created with.
    spec = existing.spec;
  }
  try {
    await deps.flows.add(buildSnapshotFlow(spec, deps.settings));
  } catch (err: unknown) {
    if (kind === 'created') await deps.store.discard(spec.id);
    throw err;
  }
  await deps.store.transition(spec.id, ['enqueuing'], 'running');
  deps.logger.debug(
    { snapshot: spec.id, parts: spec.companies.length * spec.datasets.length },
    `snapshot ${kind}`,
  );
  const record = await deps.store.get(spec.id);
  if (!record) throw new Error(`snapshot ${spec.id} vanished right after it was enqueued`);
  return { kind, record };
}

/** Removes the finished jobs of an earlier run, so the same deterministic ids can be added again. */
async function removeOldJobs(deps: EnqueueDeps, spec: SnapshotSpec): Promise<void> {
  const parent = await Job.fromId(deps.snapshotsQueue, publishJobId(spec.id));
  if (parent) await parent.remove({ removeChildren: true });
  const ids = spec.companies.flatMap((c) => spec.datasets.map((d) => partJobId(spec.id, d, companyKey(c))));
  for (let i = 0; i < ids.length; i += 200) {
    await Promise.all(ids.slice(i, i + 200).map((id) => deps.partsQueue.remove(id)));
  }
}
