/**
 * Segments: row ranges of a big part converted to Parquet while the part is still being staged.
 *
 * The parts worker announces each range of whole row groups once the gzip members holding it are
 * on disk; a control worker converts it (`convertSegment`) with the SQL publishing would use for
 * the rows seen so far. Publishing then concatenates the segments that still fit (same staged
 * attempt, same SQL, inside the output file) with what it converts itself, so the
 * conversion no longer waits for the last byte. A segment is only ever an optimisation: one that
 * is missing, stale or failed is converted at publish as before.
 *
 * Layout, beside the staged part `<root>/_staging/<id>/<dataset>/<TICKER>.ndjson.gz`:
 *   <root>/_staging/<id>/_segments/<dataset>/<TICKER>/<staging id>-<skip>-<take>.parquet (+ .json)
 * and, while the segment waits for its conversion, its rows uncompressed (writer/plain-pieces.ts) in
 *   <root>/_staging/<id>/_segments/<dataset>/<TICKER>/<staging id>-<skip>-<take>.ndjson
 */
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { baseSchema } from '../../../datasets/index.js';
import { coerceError } from '../../../errors.js';
import type { DatasetName } from '../../../types.js';
import {
  convertSelect,
  extraFieldNames,
  maxLineBytesFor,
  openDuck,
  parquetCodec,
  parquetFieldIds,
  sqlString,
  type ConvertInput,
  type ConvertSource,
  type DuckDbOptions,
  type ParquetCompression,
} from '../../convert/index.js';
import { copyRanges, writeFileAtomic } from '../../storage/index.js';
import type { PieceOutcome, PieceRequest } from '../types.js';
import { mergeFieldKinds } from '../field-kinds.js';
import {
  fieldsSidecarPath,
  pieceConversionPaths,
  plainPiecePath,
  pieceMetaPath,
  piecesDir,
} from '../layout.js';
import { readFieldsSidecar } from '../sidecar.js';
import { DEFAULT_ROW_GROUP_ROWS, type PieceFile } from '../row-cuts.js';

/** How segments are converted: as publishing converts (publish.ts PublishOptions). */
export interface PieceSettings {
  /** @defaultValue DEFAULT_ROW_GROUP_ROWS */
  rowGroupRows?: number;
  /** @defaultValue 'zstd' */
  compression?: ParquetCompression;
  /** DuckDB options of the session (threads is always 1). */
  duckdb?: DuckDbOptions;
}

interface PieceMeta {
  format: 1;
  staging_id: string;
  skip: number;
  take: number;
  signature: string;
}

/**
 * The conversion input of a dataset whose schema is fixed by the registry, from the kinds seen:
 * what publishing resolves for the same kinds (schema-registry.ts), or undefined when the schema is
 * inferred at publish from every part (catalogs), which a segment cannot know.
 */
export function fixedSchemaInput(
  dataset: DatasetName,
  observed: ReadonlyMap<string, number>,
  snapshotId: string,
): Omit<ConvertInput, 'mode'> | undefined {
  const schema = baseSchema(dataset);
  if (schema.inferred) return undefined;
  return { schema, kinds: observed, extraFields: extraFieldNames(schema, observed), snapshotId };
}

/**
 * Identifies the strict conversion a segment was made with: the SQL for a fixed placeholder
 * source, the compression and the row-group size. Equal signatures convert equal rows to equal
 * Parquet, so a segment is used only when publishing would run the same statement.
 */
export function conversionSignature(
  input: Omit<ConvertInput, 'mode'>,
  compression: ParquetCompression,
  rowGroupRows: number,
): string {
  const placeholder: ConvertSource = { file: '-', skip: 1, take: 1, total: 3, maxLineBytes: 4096 };
  const sql = convertSelect({ ...input, mode: 'strict' }, placeholder);
  return createHash('sha256')
    .update(`${sql}\n${parquetCodec(compression)}\n${rowGroupRows}\n${parquetFieldIds(input.schema.columns)}`)
    .digest('hex');
}

/** The strict COPY of `source` into the Parquet file `to`. */
export function copyStatement(
  input: ConvertInput,
  source: ConvertSource,
  to: string,
  compression: ParquetCompression,
  rowGroupRows: number,
): string {
  return `COPY (${convertSelect(input, source)}) TO ${sqlString(to)} (FORMAT parquet, ${parquetCodec(compression)}, ROW_GROUP_SIZE ${rowGroupRows}, ${parquetFieldIds(input.schema.columns)})`;
}

/**
 * Converts one segment. Never throws for what publishing can redo (a file gone, a value that does
 * not fit, bytes not there yet): it says why it skipped. Writes the Parquet file, then its meta.
 */
export async function convertPiece(req: PieceRequest, settings: PieceSettings = {}): Promise<PieceOutcome> {
  const started = Date.now();
  const s = {
    rowGroupRows: settings.rowGroupRows ?? DEFAULT_ROW_GROUP_ROWS,
    compression: settings.compression ?? 'zstd',
    duckdb: settings.duckdb ?? {},
  };
  const plain = plainPiecePath(req.finalFile, req.stagingId, req.skip, req.take);
  const {
    parquet: path,
    tmp,
    scratch,
    spill,
  } = pieceConversionPaths(req.finalFile, req.stagingId, req.skip, req.take);
  // The plain file goes whatever happens: converted, skipped or failed (writer/plain-pieces.ts
  // ownership); unless it holds the only copy of the rows (plainOnly): then it stays until the
  // publish, which converts it again if the kinds of later rows or parts made this Parquet stale.
  const leftovers = req.plainOnly === true ? [scratch, tmp, spill] : [plain, scratch, tmp, spill];
  try {
    const input = fixedSchemaInput(req.dataset, mergeFieldKinds([req.fields]), req.snapshotId);
    if (input === undefined)
      return { status: 'skipped', reason: `${req.dataset}: schema is inferred at publish` };
    const source = await pieceSource(req, plain, scratch);
    if ('status' in source) return source;
    const duck = await openDuck({ ...s.duckdb, tempDirectory: spill, threads: 1 });
    try {
      await duck.run(copyStatement({ ...input, mode: 'strict' }, source, tmp, s.compression, s.rowGroupRows));
      const counted = await duck.all(`SELECT count(*)::BIGINT AS n FROM read_parquet(${sqlString(tmp)})`);
      if (Number(counted[0]?.n) !== req.take)
        return { status: 'skipped', reason: `converted ${String(counted[0]?.n)} rows, expected ${req.take}` };
    } finally {
      duck.close();
    }
    await rename(tmp, path);
    const meta: PieceMeta = {
      format: 1,
      staging_id: req.stagingId,
      skip: req.skip,
      take: req.take,
      signature: conversionSignature(input, s.compression, s.rowGroupRows),
    };
    await writeFileAtomic(pieceMetaPath(plain), `${JSON.stringify(meta)}\n`);
    return {
      status: 'converted',
      path,
      ms: Date.now() - started,
      read: source.compression === 'none' ? 'plain' : 'gzip',
    };
  } catch (err: unknown) {
    // A value that does not fit, or bytes that are not what the cut says: publishing converts these rows.
    return { status: 'skipped', reason: coerceError(err).message.split('\n')[0] ?? 'conversion failed' };
  } finally {
    await Promise.all(leftovers.map((p) => rm(p, { recursive: true, force: true })));
  }
}

/**
 * What the segment's conversion reads: its uncompressed file when that is complete (exactly
 * `plainBytes`), else its gzip members, copied out of the staged file into `scratch`.
 */
async function pieceSource(
  req: PieceRequest,
  plain: string,
  scratch: string,
): Promise<ConvertSource | PieceOutcome> {
  const maxLineBytes = maxLineBytesFor(req.maxLineChars);
  if (req.plainBytes !== undefined && (await stat(plain).catch(() => undefined))?.size === req.plainBytes)
    return { file: plain, skip: 0, take: req.take, total: req.take, maxLineBytes, compression: 'none' };
  // Its rows are nowhere else: publishing converts the file once it is whole (or fails naming it).
  if (req.plainOnly === true)
    return {
      status: 'skipped',
      reason: `${plain} does not hold the segment's ${req.plainBytes ?? '?'} bytes`,
    };
  const from = await readableSource(req);
  if (typeof from !== 'string') return from;
  await mkdir(dirname(scratch), { recursive: true });
  await copyRanges([{ path: from, start: req.cut.offset, end: req.cut.end }], scratch);
  return { file: scratch, skip: req.skip - req.cut.row, take: req.take, total: req.cut.rows, maxLineBytes };
}

/** The file holding the cut's bytes: the part being written, or the finished part of the same attempt. */
async function readableSource(req: PieceRequest): Promise<string | PieceOutcome> {
  const sizeOf = async (p: string): Promise<number | undefined> =>
    (await stat(p).catch(() => undefined))?.size;
  let path = req.file;
  let size = await sizeOf(path);
  if (size === undefined) {
    // Finished (renamed) before this job ran: usable only if it is the very attempt the cut was made on.
    const sidecar = await readFieldsSidecar(fieldsSidecarPath(req.finalFile));
    path = req.finalFile;
    size = sidecar?.stagingId === req.stagingId ? await sizeOf(path) : undefined;
    if (size === undefined)
      return { status: 'skipped', reason: `staged file of attempt ${req.stagingId} is gone` };
  }
  if (size < req.cut.end)
    return { status: 'skipped', reason: `${path} holds ${size} bytes, the segment ends at ${req.cut.end}` };
  return path;
}

/** Segments of the staged part at `stagedFile` cut from staging attempt `stagingId`, by first row. */
export async function listPieces(stagedFile: string, stagingId: string): Promise<PieceFile[]> {
  const dir = piecesDir(stagedFile);
  const names = await readdir(dir).catch(() => [] as string[]);
  const out: PieceFile[] = [];
  for (const n of names) {
    if (!n.endsWith('.json') || !n.startsWith(`${stagingId}-`)) continue;
    let meta: PieceMeta;
    try {
      meta = JSON.parse(await readFile(join(dir, n), 'utf8')) as PieceMeta;
    } catch {
      continue;
    }
    if (
      meta.format !== 1 ||
      meta.staging_id !== stagingId ||
      !Number.isSafeInteger(meta.skip) ||
      !Number.isSafeInteger(meta.take) ||
      meta.skip < 0 ||
      meta.take <= 0 ||
      typeof meta.signature !== 'string'
    )
      continue;
    const path = join(dir, n.replace(/\.json$/, '.parquet'));
    if ((await stat(path).catch(() => undefined)) === undefined) continue;
    out.push({ skip: meta.skip, take: meta.take, path, signature: meta.signature });
  }
  return out.sort((a, b) => a.skip - b.skip);
}
