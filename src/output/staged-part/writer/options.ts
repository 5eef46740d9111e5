/** What a part writer is asked for: where the part goes, its lineage, and how it is staged. */
import type { DatasetName } from '../../../types.js';
import { baseSchema } from '../../../datasets/index.js';

export interface Lineage {
  snapshotId: string;
  /** When the API request was sent: ISO-8601 string, Date or epoch ms. */
  fetchedAt: string | Date | number;
  /** Company key the exporter asked for (ticker or CIK). */
  requestedTicker: string;
}

export interface PartWriterOptions {
  /** Output root (the snapshot's `--out` directory). */
  root: string;
  snapshotId: string;
  dataset: DatasetName;
  /** Company key; names the staged file `<TICKER>.ndjson.gz`. */
  ticker: string;
  lineage: Lineage;
  /**
   * gzip level of the staged file. Staged files are transient (deleted once the snapshot is
   * published), so speed wins over size. @defaultValue 1
   */
  gzipLevel?: number;
  /** Serialised bytes buffered before one gzip write. @defaultValue 262144 */
  chunkBytes?: number;
  /**
   * Uncompressed bytes per gzip member. The file is one gzip stream to any reader (members
   * concatenate); the sidecar records where each member starts and at which row, so publishing
   * can convert a row range from its own bytes instead of decompressing everything before it.
   * @defaultValue 8388608 (8 MiB: ~8,000 facts rows, ~0.8 MB compressed)
   */
  memberBytes?: number;
  /**
   * Rows per segment converted while staging (parquet/convert-piece.ts): when set, each segment's lines
   * also go, uncompressed, into a file of their own for its conversion (plain-pieces.ts).
   * @defaultValue none: the gzip part only
   */
  pieceRows?: number;
  /**
   * Plain files written and not yet converted before the next segment gets none.
   * @defaultValue MAX_WAITING_PLAIN_FILES (2)
   */
  maxWaitingPlainFiles?: number;
  /**
   * With `pieceRows`: a segment's rows go to its plain file ONLY, not to the gzip part
   * (a part published as Parquet alone: the segment's Parquet replaces them). From the first
   * segment that gets no plain file on, every row goes to the gzip, which then holds the part's
   * rows from that row on (the sidecar's `gzip_from`). docs/internals/output.md "What a staged part is".
   * @defaultValue false: the gzip holds every row
   */
  piecesOutsideGzip?: boolean;
}

/**
 * What the pipeline knows about a part it is about to stage. The module decides the part's files
 * from it (stagingOptionsOf): callers never choose pieces or what the gzip holds.
 */
export interface StagingPlan {
  /** Rows per piece converted while staging (`output.convert_while_staging`). @defaultValue none: converted at publish */
  convertWhileStaging?: number;
  /** The snapshot publishes Parquet alone and this part was never staged before. @defaultValue false */
  parquetOnly?: boolean;
}

/**
 * The writer options a plan implies. A dataset whose schema is inferred is converted whole at
 * publish (its columns are known only then), so it gets no pieces.
 */
export function stagingOptionsOf(
  dataset: DatasetName,
  plan: StagingPlan | undefined,
): Pick<PartWriterOptions, 'pieceRows' | 'piecesOutsideGzip'> {
  const rows = plan?.convertWhileStaging;
  if (rows === undefined || baseSchema(dataset).inferred) return {};
  // Parquet alone: a piece's Parquet replaces its rows, so they need no gzip copy.
  return plan?.parquetOnly === true ? { pieceRows: rows, piecesOutsideGzip: true } : { pieceRows: rows };
}
