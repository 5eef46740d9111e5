/**
 * The shapes of a staged part the rest of the exporter exchanges with this module: what a writer
 * is and reports, what is on disk while it writes, and the conversion of a piece (rows [skip,
 * skip + take) of a part, converted to Parquet while the part is still being staged).
 */
import type { DatasetName, RowText } from '../../types.js';

/**
 * What a part writer's finish() reports: the staged file relative to the output root, its rows,
 * bytes and sha256. Stated here once: the output's writer returns it, the pipeline's port expects it.
 */
export interface StagedPart {
  file: string;
  rows: number;
  bytes: number;
  sha256: string;
}

/**
 * A part being staged: rows in, one staged file out. Output's writers (a local root, a bucket through
 * a local file) implement it; the part job drives it through the pipeline's port. Stated once, here.
 */
export interface PartWriter {
  /**
   * Adds a row. Returns a promise only when the caller must wait (backpressure). `rawJson`, when
   * given, is the row's own JSON text (`{…}`, UTF-8) saying exactly what JSON.stringify(row) would
   * (RowStream.rawText): it is copied instead of serialising the row again, and must stay
   * unchanged until the returned promise settles (it may be a view of the received body).
   */
  write(row: Record<string, unknown>, rawJson?: Uint8Array): Promise<void> | void;
  /**
   * Adds a row that was never parsed (RowStream.compactRows): its text and field kinds record the
   * same line and the same field list as write() of the parsed row with that text.
   */
  writeText(row: RowText): Promise<void> | void;
  /** Completes the file, fsyncs it and renames it into place. */
  finish(): Promise<StagedPart>;
  /** Discards everything written; the final name is never touched. */
  abort(): Promise<void>;
  /** Rows written so far. */
  readonly rows: number;
  /** Rows per piece this writer cuts for conversion while staging; undefined: it cuts none. */
  readonly pieceRows?: number;
  /** Names this staging attempt (random): the sidecar records it, and pieces cut from the file. */
  readonly stagingId: string;
  /**
   * The prefix of the file that is complete gzip members already written to disk, which a reader
   * may convert while the rest is staged (parquet/convert-piece.ts). Undefined before the first member ends.
   */
  written(): WrittenPrefix | undefined;
  /**
   * The uncompressed file of the piece starting at row `skip` (written when the writer was asked
   * for `pieceRows`), handed over to its conversion, which removes it; 'pending' while its
   * last bytes are still being written; undefined when it has none. Absent: the writer writes none.
   */
  takePlainPiece?(skip: number): PlainPiece | 'pending' | undefined;
}

/** A piece's rows, uncompressed, in a file of their own (writer/plain-pieces.ts). */
export interface PlainPiece {
  /** Absolute path (layout.ts plainPiecePath). */
  file: string;
  /** Its size once complete: a shorter file is not read. */
  bytes: number;
}

/** The field list of a part: names in order of first appearance with their kinds (field-kinds.ts). */
export interface FieldKinds {
  names: string[];
  kinds: number[];
}

/** Complete gzip members on disk at the start of a staged file being written. */
export interface WrittenPrefix {
  /** The file being written (its temporary name) and its final name, both absolute. */
  file: string;
  finalFile: string;
  stagingId: string;
  /** Rows and bytes of the complete members. */
  rows: number;
  bytes: number;
  /** Start (row, byte offset) of each member after the first, up to the first incomplete one at (rows, bytes). */
  members: { row: number; offset: number }[];
  /** Field kinds of every row written so far (the prefix's and more). */
  fields: FieldKinds;
  maxLineChars: number;
  /**
   * Rows below this are not in the gzip file but only in their pieces' files (a part staged
   * with `piecesOutsideGzip`): the file's first member starts at this row, offset 0.
   * @defaultValue 0: the gzip holds every row
   */
  gzipFrom?: number;
}

/** What a converter needs to convert rows [skip, skip + take) of a part being staged. */
export interface PieceRequest {
  root: string;
  snapshotId: string;
  dataset: DatasetName;
  /** The staged file as it is being written (its temporary name), and its final name. */
  file: string;
  finalFile: string;
  /** The staging attempt (PartWriter stagingId): a piece is used only for the file it was cut from. */
  stagingId: string;
  skip: number;
  take: number;
  /** The bytes holding the rows: [offset, end) of `file`, whose first row is `row`, `rows` rows in all. */
  cut: { offset: number; end: number; row: number; rows: number };
  /** Field kinds of the rows staged so far. */
  fields: FieldKinds;
  /** Longest line so far, UTF-16 units. */
  maxLineChars: number;
  /**
   * Size of the piece's uncompressed file (layout.ts plainPiecePath), when the part writer wrote one:
   * read instead of the gzip bytes if it holds exactly this many. @defaultValue none: the gzip bytes
   */
  plainBytes?: number;
  /**
   * The piece's rows are in its uncompressed file only (not in the gzip part): never read the
   * gzip for them, and keep the file unless the conversion succeeds (publishing converts it then).
   * @defaultValue false
   */
  plainOnly?: boolean;
}

export type PieceOutcome =
  /** `read`: which bytes were converted, the piece's uncompressed file or its gzip members. */
  | { status: 'converted'; path: string; ms: number; read: 'plain' | 'gzip' }
  | { status: 'skipped'; reason: string };
