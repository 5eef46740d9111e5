/**
 * The one way into conversion for publishing: the staged parts of one dataset into its output
 * files. For each part it finds which pieces hold which rows (pieces converted while staging,
 * pieces whose rows are only in their plain files, converted here) and converts the rest from the
 * gzip; the fallbacks (a stale piece, a value that does not fit, a missing plain file) stay here.
 */
import { join } from 'node:path';
import { rm } from 'node:fs/promises';
import pLimit from 'p-limit';
import { OutputError } from '../../../errors.js';
import type { Logger } from '../../../log.js';
import type { BuiltFile, DuckSession } from '../../convert/index.js';
import type { CheckedPart } from '../check-staged.js';
import { discardStagedPart } from '../states.js';
import { plainPiecePath } from '../layout.js';
import type { PieceFile } from '../row-cuts.js';
import { GZIP_SHARE_OF_PLAIN } from '../writer/index.js';
import { conversionSignature } from './convert-piece.js';
import { RowsOutsideGzipError } from './convert-file.js';
import { writeDatasetFiles, type DatasetWriteOptions } from './dataset-files.js';
import { piecesOfPart, type OutsidePiecesOptions } from './pieces-for-publish.js';

/** What writeDatasetFiles takes, stated there once; here the parts are checked staged parts. */
export interface StagedPartsConversion extends Omit<DatasetWriteOptions, 'parts' | 'rangeDucks' | 'logger'> {
  /** The staged parts, checked (checkStagedPart), in row order. */
  parts: readonly CheckedPart[];
  /** More sessions for row ranges of one big file (DatasetWriteOptions.rangeDucks). */
  rangeDucks: readonly DuckSession[];
  log: Logger;
}

export interface StagedPartsConverted {
  files: BuiltFile[];
  /** Files that needed the tolerant conversion (a value did not fit its column; kept in `_extra`). */
  tolerantFiles: { file: string; reason: string }[];
}

/** Parts' pieces read (listed, or found in their plain files) at once. */
const PART_READS = 16;

/** Converts the staged parts of one dataset into its output files (docs/internals/staged-part.md). */
export async function convertStagedParts(o: StagedPartsConversion): Promise<StagedPartsConverted> {
  const input = {
    schema: o.schema,
    kinds: o.kinds,
    extraFields: [...o.extraFields],
    snapshotId: o.snapshotId,
  };
  const outside: OutsidePiecesOptions = {
    input,
    signature: conversionSignature(input, o.compression, o.rowGroupRows),
    duck: o.duck,
    compression: o.compression,
    rowGroupRows: o.rowGroupRows,
    scratchDir: join(o.scratchDir, 'segments'),
    log: o.log,
  };
  const limit = pLimit(PART_READS);
  // Parts staged outside their gzip convert their leftover pieces here, one after another (one session).
  const convertOne = pLimit(1);
  const piecesOf = new Map<string, PieceFile[]>(
    await Promise.all(
      o.parts.map((x) =>
        (x.gzipFrom > 0 ? convertOne : limit)(async (): Promise<[string, PieceFile[]]> => [
          x.path,
          await piecesOfPart(x, outside),
        ]),
      ),
    ),
  );
  try {
    return await writeFiles(o, piecesOf);
  } catch (err: unknown) {
    if (!(err instanceof RowsOutsideGzipError)) throw err;
    throw await restageOutside(o.parts, err);
  } finally {
    await rm(outside.scratchDir, { recursive: true, force: true });
  }
}

async function writeFiles(
  o: StagedPartsConversion,
  piecesOf: ReadonlyMap<string, PieceFile[]>,
): Promise<StagedPartsConverted> {
  const built = await writeDatasetFiles({
    dataset: o.dataset,
    schema: o.schema,
    kinds: o.kinds,
    extraFields: o.extraFields,
    snapshotId: o.snapshotId,
    parts: o.parts.map((x) => ({
      path: x.path,
      ticker: x.pointer.ticker,
      rows: x.rows,
      bytes: x.bytes,
      maxLineChars: x.maxLineChars,
      members: x.members,
      segments: piecesOf.get(x.path),
      ...(x.gzipFrom === 0
        ? {}
        : {
            gzipFrom: x.gzipFrom,
            // Sized as if staged whole: the pieces' rows at level-1 gzip's share of their text.
            planBytes: x.bytes + x.segments.reduce((n, g) => n + g.bytes, 0) * GZIP_SHARE_OF_PLAIN,
            unsplittable: x.segments,
            plainText: plainTextOf(x),
          }),
    })),
    formats: o.formats,
    dir: o.dir,
    // One folder per dataset: datasets published at once (dataset-lanes.ts) never share a scratch file.
    scratchDir: o.scratchDir,
    targetFileBytes: o.targetFileBytes,
    rowGroupRows: o.rowGroupRows,
    compression: o.compression,
    duck: o.duck,
    rangeDucks: o.rangeDucks,
    logger: o.log,
  });
  return { files: built.files, tolerantFiles: built.tolerantFiles };
}

/**
 * Some rows only segments hold are needed again (a value that does not fit, segments that do not
 * join): the parts staged outside their gzip lose their staged files, so that `--retry` fetches
 * them again, staged whole (jobs/export-part/fetch-and-stage.ts), and can convert every row.
 */
async function restageOutside(
  checked: readonly CheckedPart[],
  err: RowsOutsideGzipError,
): Promise<OutputError> {
  const outside = checked.filter((x) => x.gzipFrom > 0);
  for (const x of outside) await discardStagedPart(x.path);
  return new OutputError(
    'OUTPUT_FAILED',
    `${err.message}; the staged files of ${outside.map((x) => `${x.pointer.dataset}/${x.pointer.ticker}`).join(', ')} are removed, so a retried snapshot (--retry) fetches them again, staged whole`,
    { cause: err },
  );
}

/**
 * The plain files of a part's rows staged outside its gzip, in row order (the sidecar reader
 * refuses segments that do not tile [0, gzipFrom): sidecar.ts); none without a staging id.
 */
function plainTextOf(x: CheckedPart): { path: string; bytes: number }[] | undefined {
  const id = x.stagingId;
  if (id === undefined) return undefined;
  return x.segments.map((g) => ({ path: plainPiecePath(x.path, id, g.skip, g.take), bytes: g.bytes }));
}
