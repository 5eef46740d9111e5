/** What publishing a snapshot is asked for, and what the export reports to its manifest. */
import type { Logger } from '../../log.js';
import type { Clock, OutputFormat, PartPointer } from '../../types.js';
import type { DuckDbOptions, ParquetCompression } from '../convert/index.js';
import type { ReuseSource } from './reuse-plan.js';

/** What the export spent and went through; every field optional (unknown ones are recorded as null). */
export interface SnapshotStats {
  /** API requests sent for the snapshot (all attempts). */
  requests?: number;
  /** 429 responses received. */
  rateLimited429?: number;
  /** Attempts beyond the first, over all parts. */
  retries?: number;
  startedAt?: string | number | Date;
  /** @defaultValue the publish time */
  finishedAt?: string | number | Date;
  /** Quota waits: a summary `{ ms?, … }` or the pipeline's list of waits `{ since, until, message }`. */
  waitedForQuota?: { ms?: number; [k: string]: unknown } | boolean;
  waits?: unknown[];
}

export interface PublishOptions {
  root: string;
  snapshotId: string;
  /** YYYY-MM-DD: the Hive partition `snapshot_date`. */
  snapshotDate: string;
  formats: OutputFormat[];
  /** Every part of the snapshot, whatever its status. */
  parts: PartPointer[];
  stats?: SnapshotStats;
  /** Target size of each output file (Parquet when written, else NDJSON). @defaultValue 128 MiB */
  targetFileBytes?: number;
  /**
   * Parquet row-group size in rows. The writer holds one row group in memory (about 1.8 KB per
   * facts row while converting), so this bounds publishing memory, not the file size.
   * @defaultValue 24576 (docs/decisions.md: "Output: publishing memory")
   */
  rowGroupRows?: number;
  /** @defaultValue `zstd` */
  compression?: ParquetCompression;
  /** Keep `_staging/<snapshot_id>` after publishing (it is removed by default). @defaultValue false */
  keepStaging?: boolean;
  /** Re-hash staged parts against their pointers before using them. @defaultValue true */
  verifyStagedHashes?: boolean;
  /** DuckDB session of the conversion. @defaultValue `{ threads: 1, memoryLimit: '512MB' }` */
  duckdb?: DuckDbOptions;
  /**
   * Conversions that share one big output file, each a DuckDB session on its own thread converting
   * a row range, concatenated without re-encoding. Each beyond the first adds a row group's worth
   * of memory (~70 MB at 24,576 facts rows) and takes its share off the time after the last
   * staged byte (docs/decisions.md, "Publishing: row ranges on several cores"). @defaultValue 1
   */
  conversions?: number;
  logger?: Logger;
  clock?: Clock;
  /**
   * An incremental snapshot: the snapshot its reused parts come from, and the date of the last full
   * refresh of that chain. @defaultValue a full snapshot (full_refresh_date = snapshotDate)
   */
  incremental?: { reusedFrom: string; fullRefreshDate: string };
  /**
   * Write the `changes` dataset against this published snapshot (its manifest and facts Parquet
   * must be under `root`). @defaultValue none
   */
  changesAgainst?: string;
  /**
   * Why `changesAgainst` could not be brought under `root` (a remote root's publisher sets it): the
   * snapshot then publishes without `changes`, and its manifest's `changes_missing` says this.
   */
  changesUnavailable?: string;
  /**
   * Where the parts reused from an earlier snapshot's files find them (a bucket's publisher gives
   * its own). @defaultValue that snapshot under `root`, its files hard-linked
   */
  reuseSource?: ReuseSource;
}
