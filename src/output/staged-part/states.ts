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
import { rm } from 'node:fs/promises';
import { fieldsSidecarPath, plainSegmentPath } from './layout.js';
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
  await rm(plainSegmentPath(req.finalFile, req.stagingId, req.skip, req.take), { force: true });
}
