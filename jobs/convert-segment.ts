/**
 * Job `convert-segment`: converts rows of a big part to Parquet while the part is still being
 * staged, so publishing only has the rest left after the last byte (src/output/convert/early-segments.ts).
 * Queued by the export-part job as the part's gzip members reach the disk; run by a control worker.
 * Best effort by design: whatever it cannot do (a staged file gone, a value that does not fit, a
 * snapshot already published) it skips, and publishing converts those rows itself.
 */
import { coerceError } from '../src/errors.js';
import {
  CONVERT_SEGMENT,
  defineJob,
  type ConvertSegmentPayload,
  type JobHelpers,
  type SegmentOutcome,
  type SegmentRequest,
} from '../src/pipeline/index.js';

export type { ConvertSegmentPayload };

/** Runs in the control worker; without a converter (no local staging) every segment is skipped. */
export const convertSegmentJob = defineJob({ type: CONVERT_SEGMENT, run: convertSegment });

async function convertSegment(payload: ConvertSegmentPayload, helpers: JobHelpers): Promise<SegmentOutcome> {
  const { convertSegment: convert, discardSegment: discard } = helpers;
  const log = helpers.logger.child({
    snapshot: payload.snapshotId,
    segment: `${payload.dataset} ${payload.skip}+${payload.take}`,
  });
  // Published, failed or stopped: its staging is gone or about to be; nothing would use the segment.
  const state = await helpers.record.state(payload.snapshotId);
  if (state !== 'running') {
    // A failed or stopped snapshot keeps its staging for --retry: the segment's plain file goes
    // now, unless it holds the segment's only rows (which a retried publish converts).
    if (payload.plainOnly !== true)
      await discard?.(segmentRequestOf(payload)).catch((err: unknown) => {
        log.debug({ reason: coerceError(err).message }, "could not remove the segment's plain file");
      });
    const outcome: SegmentOutcome = { status: 'skipped', reason: `snapshot is ${state ?? 'gone'}` };
    log.debug({ reason: outcome.reason }, 'segment skipped');
    return outcome;
  }
  const outcome: SegmentOutcome = convert
    ? await convert(segmentRequestOf(payload))
    : { status: 'skipped', reason: 'no segment converter' };
  if (outcome.status === 'converted')
    log.debug({ ms: outcome.ms, read: outcome.read }, 'segment converted while staging');
  else log.info({ reason: outcome.reason }, 'segment skipped; publishing converts these rows');
  return outcome;
}

/** The converter's request for a checked payload. */
export function segmentRequestOf(p: ConvertSegmentPayload): SegmentRequest {
  return {
    root: p.outDir,
    snapshotId: p.snapshotId,
    dataset: p.dataset,
    file: p.file,
    finalFile: p.finalFile,
    stagingId: p.stagingId,
    skip: p.skip,
    take: p.take,
    cut: p.cut,
    fields: p.fields,
    maxLineChars: p.maxLineChars,
    ...(p.plainBytes === undefined ? {} : { plainBytes: p.plainBytes }),
    ...(p.plainOnly === true ? { plainOnly: true } : {}),
  };
}
