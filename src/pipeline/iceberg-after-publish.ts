/**
 * The Iceberg commit the publisher runs after `_SUCCESS` (`output.iceberg`): the snapshot committed
 * to its datasets' tables, older published nights still missing from them first (src/output/iceberg),
 * and where each snapshot then stands, in one line, for its record (`status`).
 */
import type { Config } from '../config/load.js';
import { coerceError, OutputError } from '../errors.js';
import { commitPublished, openStorage, s3Settings, type SnapshotCommit } from '../output/index.js';
import type { IcebergState } from './record/index.js';

/** Where one snapshot stands in its tables after the commit, for its record. */
export interface IcebergOutcome {
  snapshotId: string;
  state: Extract<IcebergState, 'committed' | 'superseded'>;
  /** One line: each table and its version, or the table that holds a newer night. */
  message: string;
}

/**
 * Commits published snapshot `snapshotId` of root `outDir` (older missing ones first). Any failure
 * is an `ICEBERG_COMMIT_FAILED` naming the snapshot and the root, retryable as its cause is.
 */
export function icebergAfterPublish(
  config: Config,
): (outDir: string, snapshotId: string) => Promise<IcebergOutcome[]> {
  return async (outDir, snapshotId) => {
    const storage = openStorage(outDir, { settings: s3Settings(config.output) });
    try {
      return (await commitPublished(storage, snapshotId)).map(outcomeOf);
    } catch (err: unknown) {
      const e = coerceError(err);
      throw new OutputError(
        'ICEBERG_COMMIT_FAILED',
        `committing snapshot ${snapshotId} to the Iceberg tables of ${storage.root} failed: ${e.message}`,
        { cause: e },
      );
    } finally {
      await storage.close();
    }
  };
}

function outcomeOf(c: SnapshotCommit): IcebergOutcome {
  const older = c.tables.find((t) => t.outcome === 'older');
  if (older !== undefined)
    return {
      snapshotId: c.snapshotId,
      state: 'superseded',
      message: `the ${older.dataset} table holds a newer night: this one is not committed on top of it (iceberg rebuild writes every night in order)`,
    };
  const tables = c.tables.map((t) => `${t.dataset} v${t.version}`).join(', ');
  return { snapshotId: c.snapshotId, state: 'committed', message: tables };
}
