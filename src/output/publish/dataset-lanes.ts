/**
 * Publishes a snapshot's datasets in lanes: each lane takes the next dataset not yet started, in
 * the given order. Lane 0 uses the context's DuckDB session (and its range sessions); every other
 * lane opens a session of its own, without range sessions, closed when the lanes end. One lane is
 * the old one-after-another order; an incremental night, where each dataset is little work beside
 * fixed costs (a rebuild, a conversion of the changed companies), overlaps two.
 */
import type { DatasetName, PartPointer } from '../../types.js';
import type { DuckSession } from '../convert/index.js';
import { publishDataset, type DatasetPublishContext, type DatasetPublished } from './publish-dataset.js';

export interface LaneOptions {
  /** Datasets published at once (>= 1). */
  lanes: number;
  /** Opens the session of lane `i` (i >= 1). */
  openSession(i: number): Promise<DuckSession>;
  /** Called as each dataset is written (in the order they end), with every one written so far. */
  onDone?(written: ReadonlyMap<DatasetName, DatasetPublished>): void;
}

/**
 * Every dataset of `partsOf` published; all lanes have ended (and their sessions closed) when this
 * returns or throws, so nothing runs behind a failure. The first failure is thrown.
 */
export async function publishInLanes(
  context: DatasetPublishContext,
  partsOf: ReadonlyMap<DatasetName, readonly PartPointer[]>,
  o: LaneOptions,
): Promise<Map<DatasetName, DatasetPublished>> {
  // Filled as datasets end; the caller reads it in its own order.
  const queue = [...partsOf.keys()];
  const out = new Map<DatasetName, DatasetPublished>();
  const sessions: DuckSession[] = [];
  let failed = false;
  const lane = async (i: number): Promise<void> => {
    let c = context;
    if (i > 0) {
      const duck = await o.openSession(i);
      sessions.push(duck);
      c = { ...context, duck, rangeDucks: [] };
    }
    for (let dataset = queue.shift(); dataset !== undefined && !failed; dataset = queue.shift()) {
      const done = await publishDataset(c, dataset, partsOf.get(dataset) ?? []);
      out.set(dataset, done);
      o.onDone?.(out);
    }
  };
  const count = Math.max(1, Math.min(o.lanes, queue.length));
  const ended = await Promise.allSettled(
    Array.from({ length: count }, (_, i) =>
      lane(i).catch((err: unknown) => {
        failed = true;
        throw err;
      }),
    ),
  );
  for (const s of sessions) s.close();
  const failure = ended.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failure !== undefined) throw failure.reason;
  return out;
}
