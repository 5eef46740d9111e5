/**
 * Cuts a part being staged into segments of whole row groups and queues each once the gzip members
 * holding it are on disk (output/convert/early-segments.ts). Polled by the export-part job as rows arrive;
 * enqueue failures are logged, never fail the part (publishing converts what no segment holds).
 */
import { coerceError } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { Config } from '../../config/load.js';
import { memberCut, segmentRows } from '../../output/staging/index.js';
import type { DatasetName } from '../../types.js';
import type { ConvertSegmentPayload } from './job-payloads.js';
import type { PartWriter } from '../part/index.js';

/** How a parts worker hands ranges of a part being staged to the control workers. */
export interface EarlyConversion {
  /** Rows per segment: whole row groups (early-segments.ts SEGMENT_ROW_GROUPS). */
  segmentRows: number;
  /** Queues one convert-segment job. */
  enqueue(payload: ConvertSegmentPayload): Promise<void>;
}

/** The early conversion of `output.convert_while_staging`, or none when it is off. */
export function earlyConversionOf(
  config: Config,
  enqueue: EarlyConversion['enqueue'],
): EarlyConversion | undefined {
  if (!config.output.convert_while_staging) return undefined;
  return { segmentRows: segmentRows(config.output.row_group_rows ?? undefined), enqueue };
}

export interface SegmentAnnouncerOptions {
  early: EarlyConversion;
  writer: PartWriter;
  snapshotId: string;
  outDir: string;
  dataset: DatasetName;
  logger: Logger;
}

export class SegmentAnnouncer {
  /** First row of the next segment. */
  private next = 0;
  private readonly queued: Promise<void>[] = [];
  private failed = false;

  constructor(private readonly o: SegmentAnnouncerOptions) {}

  /** Queues every whole segment now on disk. Cheap when none is: call it as rows are written. */
  poll(): void {
    const size = this.o.early.segmentRows;
    if (this.failed || size <= 0) return;
    const w = this.o.writer.written?.();
    if (w === undefined || w.rows < this.next + size) return;
    for (; this.next + size <= w.rows; this.next += size) {
      // Its uncompressed file is closing: queued at the next poll, to be read from there.
      const plain = this.o.writer.takePlainSegment?.(this.next);
      if (plain === 'pending') return;
      const range = { skip: this.next, take: size };
      // Rows staged outside the gzip are only in the plain file (never cut from the gzip).
      const plainOnly = this.next + size <= (w.gzipFrom ?? 0);
      if (plainOnly && plain === undefined) continue;
      const cut = plainOnly ? undefined : memberCut(w.members, range, w.rows, w.gzipFrom);
      const payload: ConvertSegmentPayload = {
        v: 1,
        snapshotId: this.o.snapshotId,
        outDir: this.o.outDir,
        dataset: this.o.dataset,
        file: w.file,
        finalFile: w.finalFile,
        stagingId: w.stagingId,
        ...range,
        // A whole prefix (no cut) is every complete member: bytes [0, w.bytes).
        cut: plainOnly
          ? { offset: 0, end: 0, row: range.skip, rows: range.take }
          : cut === undefined
            ? { offset: 0, end: w.bytes, row: 0, rows: w.rows }
            : { offset: cut.offset, end: cut.end ?? w.bytes, row: cut.row, rows: cut.rows },
        fields: { names: [...w.fields.names], kinds: [...w.fields.kinds] },
        maxLineChars: w.maxLineChars,
        ...(plain === undefined ? {} : { plainBytes: plain.bytes }),
        ...(plainOnly ? { plainOnly: true as const } : {}),
      };
      this.queued.push(
        this.o.early.enqueue(payload).catch((err: unknown) => {
          this.failed = true;
          this.o.logger.warn(
            { reason: coerceError(err).message },
            'could not queue a segment; publishing converts the part',
          );
        }),
      );
    }
  }

  /** Waits until every segment is queued, so each is ahead of the publish job in the queue. */
  async settle(): Promise<number> {
    await Promise.all(this.queued);
    return this.queued.length;
  }
}
