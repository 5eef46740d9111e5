/**
 * The states of a staged part and every move between them. A part's state is where its files are
 * (layout.ts), never a record of its own: the writer's temporary file while it is staging, the
 * pieces' Parquet beside it, the part and its sidecar under their final names once staged.
 *
 *   staging ──convertPiece──▶ converted in pieces ──finish──▶ staged ──convertStagedParts──▶ published
 *      │                          │                            │
 *      └──abort──▶ discarded ◀────┴────────discardStagedPart───┘
 *
 * A piece is a row range of whole row groups: its Parquet is only ever an optimisation, except
 * for a part staged with its pieces outside the gzip, whose plain files are then its only rows
 * until publishing converts them (docs/internals/staged-part.md).
 */
import { readdir, rm, stat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { OutputError } from '../../errors.js';
import { fieldsSidecarPath, piecesDir, plainPiecePath } from './layout.js';
import type { PieceRequest } from './types.js';

/** Where a staged part is in its life (docs/internals/staged-part.md "States"). */
export type StagedPartState = 'staging' | 'converted-in-pieces' | 'staged' | 'published' | 'discarded';

/** The moves out of each state, by the function of this module that makes them. */
export const STAGED_PART_MOVES: Readonly<
  Record<StagedPartState, readonly { to: StagedPartState; by: string }[]>
> = {
  staging: [
    { to: 'converted-in-pieces', by: 'convertPiece' },
    { to: 'staged', by: 'PartWriter.finish' },
    { to: 'discarded', by: 'PartWriter.abort' },
  ],
  'converted-in-pieces': [
    { to: 'converted-in-pieces', by: 'convertPiece' },
    { to: 'staged', by: 'PartWriter.finish' },
    { to: 'discarded', by: 'PartWriter.abort' },
  ],
  staged: [
    { to: 'published', by: 'convertStagedParts' },
    { to: 'discarded', by: 'discardStagedPart' },
  ],
  published: [],
  discarded: [],
};

/** Whether STAGED_PART_MOVES has a move from `from` to `to`. */
export function isStagedPartMove(from: StagedPartState, to: StagedPartState): boolean {
  return STAGED_PART_MOVES[from].some((m) => m.to === to);
}

/** Throws unless `from → to` is a move of STAGED_PART_MOVES: a mover that breaks the table is a bug. */
export function checkStagedPartMove(from: StagedPartState, to: StagedPartState, part: string): void {
  if (!isStagedPartMove(from, to))
    throw new OutputError(
      'OUTPUT_FAILED',
      `staged part ${part}: no move from ${from} to ${to} (STAGED_PART_MOVES)`,
    );
}

/**
 * The state of the part whose final file is `finalFile`, read from its files alone (the state IS
 * where the files are): a temporary file being written is staging, or converted in pieces once a
 * piece's meta is there; the part with its sidecar is staged. With neither it is discarded, or
 * published when its snapshot's staging was removed: only the snapshot's record tells which, so
 * both read as 'gone'.
 */
export async function stagedPartStateOf(finalFile: string): Promise<StagedPartState | 'gone'> {
  if ((await exists(finalFile)) && (await exists(fieldsSidecarPath(finalFile)))) return 'staged';
  const temp = `${basename(finalFile)}.tmp-`;
  const siblings = await readdir(dirname(finalFile)).catch(() => [] as string[]);
  const writing = siblings.filter((n) => n.startsWith(temp));
  if (writing.length === 0) return 'gone';
  // The temp name ends with the attempt's staging id, which names its pieces.
  const ids = writing.map((n) => n.slice(n.lastIndexOf('-') + 1));
  const pieces = await readdir(piecesDir(finalFile)).catch(() => [] as string[]);
  const converted = pieces.some((n) => n.endsWith('.json') && ids.some((id) => n.startsWith(`${id}-`)));
  return converted ? 'converted-in-pieces' : 'staging';
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/** staged → discarded: the part and its sidecar go, so its job's pointer no longer matches and it is fetched again. */
export async function discardStagedPart(path: string): Promise<void> {
  await rm(path, { force: true });
  await rm(fieldsSidecarPath(path), { force: true });
}

/**
 * A piece skipped unread (its snapshot is over): its plain file goes. Under a bucket a part is
 * staged on its worker, which removes its own files.
 */
export async function discardPiece(req: PieceRequest, isLocal: boolean): Promise<void> {
  if (!isLocal) return;
  await rm(plainPiecePath(req.finalFile, req.stagingId, req.skip, req.take), { force: true });
}
