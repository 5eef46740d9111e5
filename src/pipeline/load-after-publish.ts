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
}

export function loadAfterPublish(config: Config): (outDir: string) => Promise<LoadedDataset[]> {
  return async (outDir) => {
    const into = config.output.load_into;
    if (into === null) return [];
    const tmp = config.worker.tmp_dir !== null ? { tmpDir: config.worker.tmp_dir } : {};
    // Loaded here, not at start: the warehouse drivers (pg, DuckDB) cost every worker's start-up
    // ~60 ms of module loading whether or not `output.load_into` is set.
    const { loadSnapshots, openWarehouse } = await import('../warehouse/index.js');
    const storage = openStorage(outDir, { settings: s3Settings(config.output) });
    try {
      const warehouse = await openWarehouse(into, tmp);
      try {
        const report = await loadSnapshots({ storage, warehouse, ...tmp });
        return report.snapshots.flatMap((s) => s.datasets.map((d) => ({ snapshotId: s.snapshotId, ...d })));
      } finally {
        await warehouse.close();
      }
    } finally {
      await storage.close();
    }
  };
}
