/**
 * Queues the pieces of a part being staged as they become ready (readyPieces of
 * src/output/staged-part), one convert job each. Polled by the export-part job as rows arrive;
 * enqueue failures are logged, never fail the part (publishing converts what no piece holds).
 */
import { coerceError } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { Config } from '../../config/load.js';
import { readyPieces, rowsPerPiece } from '../../output/staged-part/index.js';
import type { DatasetName } from '../../types.js';
import type { ConvertPiecePayload } from './job-payloads.js';
import type { PartWriter } from '../part/index.js';

/** How a parts worker hands ranges of a part being staged to the control workers. */
export interface EarlyConversion {
  /** Rows per piece: whole row groups (src/output/staged-part/row-cuts.ts). */
  pieceRows: number;
  /** Queues one conversion job. */
  enqueue(payload: ConvertPiecePayload): Promise<void>;
}

/** The early conversion of `output.convert_while_staging`, or none when it is off. */
export function earlyConversionOf(
  config: Config,
  enqueue: EarlyConversion['enqueue'],
): EarlyConversion | undefined {
  if (!config.output.convert_while_staging) return undefined;
  return { pieceRows: rowsPerPiece(config.output.row_group_rows ?? undefined), enqueue };
}

export interface PieceAnnouncerOptions {
  early: EarlyConversion;
  writer: PartWriter;
  snapshotId: string;
  outDir: string;
  dataset: DatasetName;
  logger: Logger;
}

export class PieceAnnouncer {
  /** First row of the next piece. */
  private next = 0;
  private readonly queued: Promise<void>[] = [];
  private failed = false;

  constructor(private readonly o: PieceAnnouncerOptions) {}

  /** Queues every whole piece now on disk. Cheap when none is: call it as rows are written. */
  poll(): void {
    if (this.failed) return;
    const ready = readyPieces(this.o.writer, this.next, this.o.early.pieceRows);
    this.next = ready.next;
    for (const piece of ready.pieces) {
      const payload: ConvertPiecePayload = {
        v: 1,
        snapshotId: this.o.snapshotId,
        outDir: this.o.outDir,
        dataset: this.o.dataset,
        ...piece,
      };
      this.queued.push(
        this.o.early.enqueue(payload).catch((err: unknown) => {
          this.failed = true;
          this.o.logger.warn(
            { reason: coerceError(err).message },
            'could not queue a piece of the part; publishing converts the part',
          );
        }),
      );
    }
  }

  /** Waits until every piece is queued, so each is ahead of the publish job in the queue. */
  async settle(): Promise<number> {
    await Promise.all(this.queued);
    return this.queued.length;
  }
}
