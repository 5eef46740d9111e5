/**
 * What the job processors need from the client and the output, as small interfaces. The worker
 * runner adapts the real modules (src/api, src/output) to them; tests can pass the real ones too.
 */
// The shapes exchanged with output are output's own, read through its DuckDB-free faces: the
// published manifest's (catalog) and a staged part's (staged-part).
import type { Manifest } from '../../output/catalog/index.js';
import type {
  CarryOverRequest,
  CarryOverResult,
  PartWriter,
  PieceOutcome,
  PieceRequest,
  StagedPart,
  StagingPlan,
  WrittenPrefix,
} from '../../output/staged-part/index.js';
import type { Company } from '../record/index.js';
import type { DatasetName, OutputFormat, PartPointer, RateLimitState, RowText } from '../../types.js';

/** The rows of one response, streamed: memory stays flat whatever the company's size. */
export interface PartResponse {
  rows: AsyncIterable<Record<string, unknown>>;
  /** Envelope fields without `rows`; resolves after the rows are consumed. */
  envelope(): Promise<Record<string, unknown>>;
  status: number;
  rateLimit: RateLimitState;
  /**
   * Stops reading and releases the connection. Every path that abandons a response before its
   * end calls it: an unread body would pin a pooled connection for ever.
   */
  cancel(): Promise<void>;
  /** A row's received JSON text when it can be staged as is (RowStream.rawText); none for a body read whole. */
  rawText?(row: Record<string, unknown>): Uint8Array | undefined;
  /**
   * The same rows with those the client proved compact left unparsed (RowStream.compactRows), for
   * a consumer that needs no field of a row; iterate either this or `rows`.
   */
  compactRows?: AsyncIterable<Record<string, unknown> | RowText>;
}

/** Sends the one request of a part. Exactly one HTTP request per call, no retries inside. */
export interface PartFetcher {
  fetch(dataset: DatasetName, company: Company, signal?: AbortSignal): Promise<PartResponse>;
}

export type { StagedPart };

/** Converts a piece of a part being staged (src/output/staged-part), in a control worker. */
export type PieceConverter = (req: PieceRequest) => Promise<PieceOutcome>;

/** Removes what a piece's job would have read (its uncompressed file) when it skips the piece unread. */
export type PieceDiscarder = (req: PieceRequest) => Promise<void>;

/** The pipeline's view of a staged part (src/output/staged-part): staging one, its size, its pieces. */
export interface StagedPartPorts {
  createWriter: PartWriterFactory;
  /** Size of a staged part under a root (local file or stored object), null when absent. @defaultValue a local stat */
  bytes?: (root: string, file: string) => Promise<number | null>;
  /** Converts pieces of parts being staged. @defaultValue none: their jobs are skipped */
  convertPiece?: PieceConverter;
  /** Removes a piece's uncompressed file when its job skips it unread. @defaultValue none */
  discardPiece?: PieceDiscarder;
}

export interface PartWriterRequest {
  root: string;
  snapshotId: string;
  dataset: DatasetName;
  /** Company key (ticker or 10-digit CIK): the `_requested_ticker` lineage column and file name. */
  ticker: string;
  /** When the request was sent (ISO): the `_fetched_at` lineage column. */
  fetchedAt: string;
  /** What is known of how the part will be read; the staged part decides its files from it. @defaultValue none: converted whole at publish */
  plan?: StagingPlan;
}

export type { PieceOutcome, PieceRequest, WrittenPrefix };

export type PartWriterFactory = (req: PartWriterRequest) => PartWriter;

export interface PublishRequest {
  root: string;
  snapshotId: string;
  snapshotDate: string;
  formats: OutputFormat[];
  datasets: DatasetName[];
  parts: PartPointer[];
  /** Quota waits the snapshot went through (the manifest says so). */
  waits: unknown[];
  startedAt: string;
  /** Requests sent for the snapshot, all attempts. */
  requests: number;
  /** Failed attempts that were retried, over all parts. */
  retries: number;
  /** 429 answers (per-minute and quota) the parts received. */
  rateLimited429: number;
  /** An incremental snapshot: where reused parts come from, and the chain's last full refresh. */
  incremental?: { reusedFrom: string; fullRefreshDate: string };
  /** Write the `changes` dataset against this published snapshot. */
  changesAgainst?: string;
}

/** Reads an earlier published snapshot and carries its parts over (incremental nights). */
export interface ReusePorts {
  /** The manifest of a published snapshot under `root` (cached); rejects when it is not there. */
  previousManifest(root: string, snapshotId: string): Promise<Manifest>;
  /** Copies an archived part to this snapshot's staging and checks it (output/staged-part/carry-over.ts). */
  carryOver(root: string, req: CarryOverRequest): Promise<CarryOverResult>;
  /** Whether published files are there at their manifest's size (a stat or HEAD each, no bytes read). */
  checkSourceFiles(root: string, files: readonly { path: string; bytes: number }[]): Promise<CarryOverResult>;
}

export interface PublishResult {
  /** Absolute path of manifest.json. */
  manifestPath: string;
  /** Rows per dataset in the published files. */
  rows: Record<string, number>;
  /** Why `changes` was asked for but not written (the manifest's `changes_missing.reason`). */
  changesMissing?: string;
}

export type SnapshotPublisher = (req: PublishRequest) => Promise<PublishResult>;

export type { PartWriter };
