/**
 * Job CONVERT_PIECE (its wire name is the older version's): converts a piece of a big part (rows
 * of whole row groups) to Parquet while the part is still being staged, so publishing only has the
 * rest left after the last byte (src/output/staged-part/parquet/convert-piece.ts). Queued by the
 * export-part job as the part's bytes reach the disk; run by a control worker. Best effort by
 * design: whatever it cannot do (a staged file gone, a value that does not fit, a snapshot already
 * published) it skips, and publishing converts those rows itself.
 */
import { coerceError } from '../src/errors.js';
import {
  CONVERT_PIECE,
  defineJob,
  type ConvertPiecePayload,
  type JobHelpers,
  type PieceOutcome,
  type PieceRequest,
} from '../src/pipeline/index.js';

export type { ConvertPiecePayload };

/** Runs in the control worker; without a converter (no local staging) every piece is skipped. */
export const convertPieceJob = defineJob({ type: CONVERT_PIECE, run: convertPiece });

async function convertPiece(payload: ConvertPiecePayload, helpers: JobHelpers): Promise<PieceOutcome> {
  const { convertPiece: convert, discardPiece: discard } = helpers.staged;
  const log = helpers.logger.child({
    snapshot: payload.snapshotId,
    piece: `${payload.dataset} ${payload.skip}+${payload.take}`,
  });
  // Published, failed or stopped: its staging is gone or about to be; nothing would use the piece.
  const state = await helpers.record.state(payload.snapshotId);
  if (state !== 'running') {
    // A failed or stopped snapshot keeps its staging for --retry: the piece's uncompressed file goes
    // now, unless it holds the piece's only rows (which a retried publish converts).
    if (payload.plainOnly !== true)
      await discard?.(pieceRequestOf(payload)).catch((err: unknown) => {
        log.debug({ reason: coerceError(err).message }, "could not remove the piece's uncompressed file");
      });
    const outcome: PieceOutcome = { status: 'skipped', reason: `snapshot is ${state ?? 'gone'}` };
    log.debug({ reason: outcome.reason }, 'piece skipped');
    return outcome;
  }
  const outcome: PieceOutcome = convert
    ? await convert(pieceRequestOf(payload))
    : { status: 'skipped', reason: 'no piece converter' };
  if (outcome.status === 'converted')
    log.debug({ ms: outcome.ms, read: outcome.read }, 'piece converted while staging');
  else log.info({ reason: outcome.reason }, 'piece skipped; publishing converts these rows');
  return outcome;
}

/** The converter's request for a checked payload. */
export function pieceRequestOf(p: ConvertPiecePayload): PieceRequest {
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
