/**
 * Whether a snapshot is incremental, decided once when it is enqueued (run, the nightly trigger):
 * it reuses from the newest published snapshot of the same root, unless a full refresh is asked
 * for or due, or there is nothing to compare with. The decision travels in the spec, so every
 * worker applies the same one and status can say it.
 */
import type { Config } from '../../config/load.js';
import { counted } from '../../counted.js';
// The modules themselves, not output/index.js: that also holds the publisher, which loads DuckDB.
import { type Manifest, newestPublishedOtherThan } from '../../output/catalog/index.js';
import { openStorage, s3Settings } from '../../output/storage/index.js';
import { CHANGE_DATASET } from '../part/index.js';
import type { SnapshotSpec } from '../record/index.js';

export interface IncrementalSettings {
  /** incremental.enabled */
  enabled: boolean;
  /** incremental.full_refresh_every_days */
  fullRefreshEveryDays: number;
}

export interface IncrementalPlan {
  spec: SnapshotSpec;
  /** One line for the plan: why full, or where parts may come from. */
  note: string;
}

const DAY_MS = 86_400_000;

export async function planIncremental(
  spec: SnapshotSpec,
  settings: IncrementalSettings,
  o: {
    fullRefresh: boolean;
    /** The snapshot published last under the root, other than this one (whatever its date). */
    latestPublished: () => Promise<Manifest | undefined>;
  },
): Promise<IncrementalPlan> {
  const { reuse: _drop, changesAgainst: _prev, ...bare } = spec;
  // The newest published snapshot before this one: the source of reuse and what `changes` compare with.
  const previous = await o.latestPublished();
  const full: SnapshotSpec =
    previous === undefined ? bare : { ...bare, changesAgainst: previous.snapshot_id };
  if (!settings.enabled) return { spec: full, note: 'full: incremental.enabled is false' };
  if (o.fullRefresh) return { spec: full, note: 'full refresh (--full-refresh)' };
  if (!spec.datasets.includes(CHANGE_DATASET))
    return { spec: full, note: `full: incremental nights need ${CHANGE_DATASET} among the datasets` };
  if (spec.datasets.length === 1)
    return { spec: full, note: `full: ${CHANGE_DATASET} alone has nothing to carry over` };
  if (previous === undefined)
    return { spec: full, note: 'full: no earlier published snapshot under this root' };
  const lastFull = previous.incremental?.full_refresh_date ?? previous.snapshot_date;
  const age = Math.round(
    (Date.parse(`${spec.date}T00:00:00Z`) - Date.parse(`${lastFull}T00:00:00Z`)) / DAY_MS,
  );
  if (age >= settings.fullRefreshEveryDays)
    return {
      spec: full,
      note: `full refresh due: the last one was ${lastFull} (${counted(age, 'day')} ago; incremental.full_refresh_every_days=${settings.fullRefreshEveryDays})`,
    };
  const others = spec.datasets.filter((d) => d !== CHANGE_DATASET);
  return {
    spec: { ...full, reuse: { from: previous.snapshot_id, fullRefreshDate: lastFull } },
    note:
      `incremental from ${previous.snapshot_id}: a company whose ${CHANGE_DATASET} is unchanged costs one request ` +
      `(at least ${counted(spec.companies.length, 'request')}; each changed company adds ${others.length}: ${others.join(', ')}); ` +
      `full refresh in ${counted(settings.fullRefreshEveryDays - age, 'day')}`,
  };
}

/** planIncremental over the configured settings, reading the root through the storage port. */
export function incrementalPlanner(
  config: Config,
): (spec: SnapshotSpec, o?: { fullRefresh?: boolean }) => Promise<IncrementalPlan> {
  const settings = {
    enabled: config.incremental.enabled,
    fullRefreshEveryDays: config.incremental.full_refresh_every_days,
  };
  return (spec, o = {}) =>
    planIncremental(spec, settings, {
      fullRefresh: o.fullRefresh === true,
      latestPublished: async () => {
        const storage = openStorage(spec.outDir, { settings: s3Settings(config.output) });
        try {
          return await newestPublishedOtherThan(storage, spec.id);
        } finally {
          await storage.close();
        }
      },
    });
}
