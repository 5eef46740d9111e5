/**
 * Which pieces of a part being staged are ready to convert: whole pieces of `size` rows whose
 * bytes are on disk (complete gzip members, or a complete plain file), each with what its
 * conversion reads. The parts worker asks as rows arrive and queues each piece once.
 */
import { memberCut } from './row-cuts.js';
import type { PartWriter, PieceRequest } from './types.js';

/** A piece ready to convert: its request without the root, snapshot and dataset the caller adds. */
export type ReadyPiece = Omit<PieceRequest, 'root' | 'snapshotId' | 'dataset' | 'plainOnly'> & {
  plainOnly?: true;
};

/**
 * The pieces ready from row `from` on, in order, and the first row of the next piece. Stops early
 * at a piece whose plain file is still being closed (asked again later).
 */
export function readyPieces(
  writer: PartWriter,
  from: number,
  size: number,
): { pieces: ReadyPiece[]; next: number } {
  const pieces: ReadyPiece[] = [];
  let next = from;
  const w = writer.written();
  if (size <= 0 || w === undefined || w.rows < next + size) return { pieces, next };
  for (; next + size <= w.rows; next += size) {
    // Its uncompressed file is closing: ready at the next ask, to be read from there.
    const plain = writer.takePlainPiece?.(next);
    if (plain === 'pending') break;
    const range = { skip: next, take: size };
    // Rows staged outside the gzip are only in the plain file (never cut from the gzip).
    const plainOnly = next + size <= (w.gzipFrom ?? 0);
    if (plainOnly && plain === undefined) continue;
    const cut = plainOnly ? undefined : memberCut(w.members, range, w.rows, w.gzipFrom);
    pieces.push({
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
    });
  }
  return { pieces, next };
}
