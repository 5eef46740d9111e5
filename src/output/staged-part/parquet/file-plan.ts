/**
 * Sizing: which staged rows go into which output file. Parts are taken in order (by ticker) and
 * packed into files of about the target size; small companies share a file, a company larger than
 * a file is split across several. Sizes are predicted from the staged bytes and the ratio of
 * output bytes to staged bytes measured on the files already written (adaptive, deterministic).
 */
import type { PieceFile } from '../row-cuts.js';

export interface PlannedPart {
  /** Absolute path of the staged file. */
  path: string;
  /** The part's company (part key), recorded in the manifest's file entries. @defaultValue none */
  ticker?: string | undefined;
  rows: number;
  /** Staged (gzip NDJSON) bytes. */
  bytes: number;
  /**
   * What the part's rows would take staged whole, when some are staged outside the gzip (its
   * segments): sizes the files instead of `bytes`. @defaultValue bytes
   */
  planBytes?: number | undefined;
  /** Where the staged file's first row held is (row-cuts.ts `joinedMembers`). @defaultValue 0 */
  gzipFrom?: number | undefined;
  /**
   * Row ranges a file must not be split inside: the segments of rows staged outside the gzip,
   * which only whole segments' Parquet holds. @defaultValue none
   */
  unsplittable?: readonly { skip: number; take: number }[] | undefined;
  /**
   * The plain files holding rows [0, gzipFrom) in row order, each with its complete size: read
   * when the file must be converted from every row (all-rows-text.ts). @defaultValue none
   */
  plainText?: readonly { path: string; bytes: number }[] | undefined;
  /** Longest staged line in UTF-16 code units; undefined when unknown. */
  maxLineChars?: number | undefined;
  /** Where the staged file's gzip members after the first start: row and byte offset. */
  members?: readonly { row: number; offset: number }[] | undefined;
  /** Row ranges of the part converted while it was staged (convert-piece.ts). */
  segments?: readonly PieceFile[] | undefined;
}

export interface Cursor {
  part: number;
  row: number;
}

export interface FileSlice {
  /** Staged files the output file reads, in order. */
  files: string[];
  /** Rows of the first file to skip. */
  skip: number;
  /** Rows to take from the concatenation (after skip). */
  take: number;
  /** Rows in the concatenation of `files`. */
  total: number;
  /** Staged bytes the slice stands for (pro rata for partial parts). */
  stagedBytes: number;
  next: Cursor;
}

/** A tail smaller than this share of a file joins the file before it instead of standing alone. */
const TAIL_SHARE = 0.1;

/**
 * The next output file from `cursor`, holding about `budgetBytes` staged bytes. Always takes at
 * least one row; returns undefined when every row is planned.
 */
export function nextSlice(
  parts: readonly PlannedPart[],
  cursor: Cursor,
  budgetBytes: number,
): FileSlice | undefined {
  let { part, row } = cursor;
  while (part < parts.length && row >= parts[part]!.rows) {
    part++;
    row = 0;
  }
  if (part >= parts.length) return undefined;

  const remainingBytes = parts
    .slice(part)
    .reduce((s, p, i) => s + perRow(p) * (p.rows - (i === 0 ? row : 0)), 0);
  // Everything left fits (or leaves only a sliver): one file takes it all.
  const budget = remainingBytes <= budgetBytes * (1 + TAIL_SHARE) ? Infinity : Math.max(budgetBytes, 1);

  const files: string[] = [];
  const skip = row;
  let total = 0;
  let take = 0;
  let staged = 0;
  let left = budget;
  while (part < parts.length) {
    const p = parts[part]!;
    if (p.rows === 0) {
      part++;
      row = 0;
      continue;
    }
    const rowsLeft = p.rows - row;
    const bytesLeft = perRow(p) * rowsLeft;
    if (bytesLeft <= left) {
      files.push(p.path);
      total += p.rows;
      take += rowsLeft;
      staged += bytesLeft;
      left -= bytesLeft;
      part++;
      row = 0;
      continue;
    }
    // Split this part: as many rows as the budget holds, at least one row per file.
    const want = take === 0 ? Math.max(1, Math.floor(left / perRow(p))) : Math.floor(left / perRow(p));
    const n = splitAt(p, row, want, take === 0);
    if (n > 0) {
      files.push(p.path);
      total += p.rows;
      take += n;
      staged += perRow(p) * n;
      row += n;
    }
    break;
  }
  return { files, skip, take, total, stagedBytes: staged, next: { part, row } };
}

function perRow(p: PlannedPart): number {
  return p.rows === 0 ? 0 : Math.max(p.planBytes ?? p.bytes, 1) / p.rows;
}

/**
 * Rows to take from `row` so that the split falls outside the part's unsplittable ranges: back to
 * the range's start, or (when that takes nothing and the file must take something) on to its end.
 */
function splitAt(p: PlannedPart, row: number, n: number, atLeastOne: boolean): number {
  const end = row + n;
  const inside = (p.unsplittable ?? []).find((r) => r.skip < end && end < r.skip + r.take);
  if (inside === undefined) return n;
  if (inside.skip > row || !atLeastOne) return Math.max(0, inside.skip - row);
  return inside.skip + inside.take - row;
}

/** The companies of a slice and their rows' place in its file, in row order. */
export function sliceCompanies(
  parts: readonly PlannedPart[],
  slice: Pick<FileSlice, 'files' | 'skip' | 'take'>,
): { ticker: string; first_row: number; rows: number }[] {
  const byPath = new Map(parts.map((p) => [p.path, p]));
  const out: { ticker: string; first_row: number; rows: number }[] = [];
  let left = slice.take;
  let at = 0;
  slice.files.forEach((path, i) => {
    const p = byPath.get(path);
    const rows = Math.min(left, (p?.rows ?? 0) - (i === 0 ? slice.skip : 0));
    if (rows > 0 && p?.ticker !== undefined) out.push({ ticker: p.ticker, first_row: at, rows });
    at += Math.max(rows, 0);
    left -= Math.max(rows, 0);
  });
  return out;
}
