/**
 * The warehouse load the control worker runs after publish (`output.load_into`): every published
 * snapshot not yet loaded, up to `latest`, through src/warehouse (its retries: queue/job-payloads.ts).
 */
import type { Config } from '../config/load.js';
import { openStorage, s3Settings } from '../output/index.js';

/** What one dataset of a load did (warehouse/load.ts `DatasetLoad`, without importing it here). */
export interface LoadedDataset {
  snapshotId: string;
  dataset: string;
  mode: 'full' | 'changes' | 'skip';
  rows: number;
  reason: string;
  /** The companies the load removed from the table, in words ("1 of 3 companies removed (NVDA)"), when any. */
  shrink?: string;
  /** What the load did to the dataset's history (output.load_history), in words, gaps named. */
  history?: string;
}

export function loadAfterPublish(config: Config): (outDir: string) => Promise<LoadedDataset[]> {
  return async (outDir) => {
    const into = config.output.load_into;
    if (into === null) return [];
    const tmp = config.worker.tmp_dir !== null ? { tmpDir: config.worker.tmp_dir } : {};
    // Loaded here, not at start: the warehouse drivers (pg, DuckDB) cost every worker's start-up
    // ~60 ms of module loading whether or not `output.load_into` is set.
    const { loadSnapshots, openWarehouse, describeShrink, describeHistory } =
      await import('../warehouse/index.js');
    const storage = openStorage(outDir, { settings: s3Settings(config.output) });
    try {
      const warehouse = await openWarehouse(into, tmp);
      try {
        // No --allow-shrink here: a load that would empty a table or remove most of its companies
        // fails WAREHOUSE_SHRINK_REFUSED, and a person decides with `load --allow-shrink`.
        const report = await loadSnapshots({
          storage,
          warehouse,
          history: config.output.load_history,
          ...tmp,
        });
        return report.snapshots.flatMap((s) =>
          s.datasets.map(({ shrink, history, ...d }) => ({
            snapshotId: s.snapshotId,
            ...d,
            ...(shrink !== undefined ? { shrink: describeShrink(shrink) } : {}),
            ...(history !== undefined ? { history: describeHistory(history) } : {}),
          })),
        );
      } finally {
        await warehouse.close();
      }
    } finally {
      await storage.close();
    }
  };
}
