/**
 * Where a staged part's files are, in one place (docs/internals/staged-part.md):
 *
 *   <root>/_staging/<id>/<dataset>/<TICKER>.ndjson.gz                  the part, gzip NDJSON
 *   <root>/_staging/<id>/<dataset>/<TICKER>.fields.json                its sidecar (fields, members, pieces)
 *   <root>/_staging/<id>/_segments/<dataset>/<TICKER>/<staging id>-<skip>-<take>.ndjson    a piece's rows, plain
 *   <root>/_staging/<id>/_segments/<dataset>/<TICKER>/<staging id>-<skip>-<take>.parquet   a piece converted
 *   <root>/_staging/<id>/_segments/<dataset>/<TICKER>/<staging id>-<skip>-<take>.json      its meta, written last
 *
 * (The folder keeps the name `_segments`: parts staged by an older version stay readable.)
 */
import { basename, dirname, join } from 'node:path';
import { InputError } from '../../errors.js';
import type { DatasetName } from '../../types.js';
import { STAGING_DIR } from '../catalog/index.js';

/**
 * File name of a company key: upper case; characters outside A-Z 0-9 . - become `~XX` (hex), so
 * distinct tickers never share a file (`BRK/B` → `BRK~2FB`).
 */
export function tickerFileName(ticker: string): string {
  if (typeof ticker !== 'string' || ticker.trim() === '')
    throw new InputError('ticker must be a non-empty string');
  return ticker
    .trim()
    .toUpperCase()
    .replace(/[^A-Z0-9.-]/g, (c) => `~${c.codePointAt(0)!.toString(16).toUpperCase().padStart(2, '0')}`)
    .replace(/^\./, '~2E');
}

/** Staged part path relative to the root (what PartPointer.file holds). */
export function stagedPartRelPath(snapshotId: string, dataset: DatasetName, ticker: string): string {
  return join(STAGING_DIR, snapshotId, dataset, `${tickerFileName(ticker)}.ndjson.gz`);
}

/** Sidecar with the part's field names and kinds, next to the staged part. */
export function fieldsSidecarPath(stagedPartAbs: string): string {
  return stagedPartAbs.replace(/\.ndjson\.gz$/, '') + '.fields.json';
}

/**
 * Every file (or key) that holds a staged part, the sidecar first: the order a copy writes them in,
 * so that a part is never there without its field kinds.
 */
export function stagedPartFiles(stagedPart: string): [sidecar: string, part: string] {
  return [fieldsSidecarPath(stagedPart), stagedPart];
}

/** The folder holding the pieces (and their plain files) of the staged part at `stagedFile`. */
export function piecesDir(stagedFile: string): string {
  const datasetDir = dirname(stagedFile);
  return join(
    dirname(datasetDir),
    '_segments',
    basename(datasetDir),
    basename(stagedFile).replace(/\.ndjson\.gz$/, ''),
  );
}

/** Name of a piece's files without extension: `<staging id>-<skip>-<take>`. */
function pieceStem(stagingId: string, skip: number, take: number): string {
  return `${stagingId}-${skip}-${take}`;
}

/** The uncompressed rows [skip, skip + take) of staging attempt `stagingId` of the part at `finalFile`. */
export function plainPiecePath(finalFile: string, stagingId: string, skip: number, take: number): string {
  return join(piecesDir(finalFile), `${pieceStem(stagingId, skip, take)}.ndjson`);
}

/** The meta a converted piece writes beside its Parquet (parquet/convert-piece.ts), named like its plain file. */
export function pieceMetaPath(plainFile: string): string {
  return plainFile.replace(/\.ndjson$/, '.json');
}

/** The files of one piece's conversion, beside its plain file: the result and its scratch files. */
export function pieceConversionPaths(
  finalFile: string,
  stagingId: string,
  skip: number,
  take: number,
): { parquet: string; tmp: string; scratch: string; spill: string } {
  const base = join(piecesDir(finalFile), pieceStem(stagingId, skip, take));
  return {
    parquet: `${base}.parquet`,
    tmp: `${base}.parquet.tmp`,
    scratch: `${base}.ndjson.gz`,
    spill: `${base}.duckdb_tmp`,
  };
}
