/**
 * Where rows are cut, as pure arithmetic: row ranges of whole row groups (several conversions of
 * one file), the gzip members holding a range (also of parts joined into one file), and which
 * segments converted while staging a file can use. No DuckDB here: the parts worker uses it too.
 */
import type { MemberStart } from './sidecar.js';

/** Parquet row-group size of published files (docs/decisions.md "Output: publishing memory"). */
export const DEFAULT_ROW_GROUP_ROWS = 24_576;

/** DuckDB fills row groups in whole vectors: a row group holds `rowGroupRows` rounded up to these. */
export const DUCKDB_VECTOR_ROWS = 2048;

/** Rows of one row group as DuckDB writes it (`rowGroupRows` rounded up to whole vectors). */
export function rowGroupUnit(rowGroupRows: number): number {
  return Math.ceil(rowGroupRows / DUCKDB_VECTOR_ROWS) * DUCKDB_VECTOR_ROWS;
}

/**
 * Row groups per segment converted while staging. Fewer make the wait after the last byte shorter
 * (the last segment and the rest are converted then); each costs a job and a DuckDB session.
 */
export const SEGMENT_ROW_GROUPS = 4;

/** Rows per segment converted while staging, for a row-group size. */
export function rowsPerPiece(rowGroupRows: number = DEFAULT_ROW_GROUP_ROWS): number {
  return rowGroupUnit(rowGroupRows) * SEGMENT_ROW_GROUPS;
}

/** A segment found on disk for a part: rows [skip, skip + take) in `path`. */
export interface PieceFile {
  skip: number;
  take: number;
  path: string;
  signature: string;
}

/** Fewest row groups per range: below this, a second conversion costs more than it saves. */
const MIN_RANGE_ROW_GROUPS = 4;
/**
 * What skipping a row costs against converting it: decompressing and splitting its line, ~1.8 of
 * ~7.6 s per million facts rows (docs/decisions.md). Without gzip members to start from, a range
 * that starts later skips more rows, so it gets fewer, and the ranges end together.
 */
export const SKIP_COST = 0.25;

/**
 * Splits `take` rows from `skip` into at most `ways` ranges of whole row groups (the last takes the
 * rest), so the concatenated file has as many row groups as one conversion writes, of the same
 * size give or take the rows of a chunk. `skipCost` is what reading past a row costs a range
 * against converting it (0 when it starts at its own gzip member); sizes shrink range by range so
 * that each costs about the same.
 */
export function rowRanges(
  skip: number,
  take: number,
  ways: number,
  rowGroupRows: number,
  skipCost = SKIP_COST,
): { skip: number; take: number }[] {
  const unit = rowGroupUnit(rowGroupRows);
  const groups = Math.ceil(take / unit);
  const n = Math.max(1, Math.min(ways, Math.floor(groups / MIN_RANGE_ROW_GROUPS)));
  // Range i costs skipCost × (rows before it) + its rows; equal costs put boundary i at
  // groups × (1 − keep^i) / (1 − keep^n), keep = 1 − skipCost (i / n when keep = 1).
  const keep = 1 - skipCost;
  const ranges: { skip: number; take: number }[] = [];
  let prev = 0;
  for (let i = 1; i <= n; i++) {
    const share = keep === 1 ? i / n : (1 - keep ** i) / (1 - keep ** n);
    const at = i === n ? groups : Math.min(groups - (n - i), Math.max(prev + 1, Math.round(groups * share)));
    const from = prev * unit;
    ranges.push({ skip: skip + from, take: Math.min(at * unit, take) - from });
    prev = at;
  }
  return ranges;
}

/**
 * The bytes of a staged file that hold a row range: from the gzip member the range starts in to
 * the first member past its end. `row` is the first row of those bytes, `rows` how many they hold.
 * Undefined when that is the whole file (no members recorded, or the range spans them all).
 * `gzipFrom`: the first row the file holds (a part staged with its segments outside the gzip).
 */
export function memberCut(
  members: readonly MemberStart[],
  r: { skip: number; take: number },
  total: number,
  gzipFrom = 0,
): { offset: number; end: number | undefined; row: number; rows: number } | undefined {
  let start: MemberStart = { row: gzipFrom, offset: 0 };
  for (const m of members) {
    if (m.row > r.skip) break;
    start = m;
  }
  const after = members.find((m) => m.row >= r.skip + r.take);
  if (start.offset === 0 && start.row === 0 && after === undefined) return undefined;
  return {
    offset: start.offset,
    end: after?.offset,
    row: start.row,
    rows: (after?.row ?? total) - start.row,
  };
}

/**
 * The segments publishing can use for rows [from, to) of a file: those made with `signature`
 * (the statement the file is converted with) that lie inside, by first row, skipping any that
 * overlaps one taken before it. `segments` are in the file's row numbers.
 */
export function usablePieces(
  segments: readonly PieceFile[],
  signature: string,
  from: number,
  to: number,
): PieceFile[] {
  const inside = segments
    .filter((s) => s.signature === signature && s.take > 0 && s.skip >= from && s.skip + s.take <= to)
    .sort((a, b) => a.skip - b.skip);
  const out: PieceFile[] = [];
  let at = from;
  for (const s of inside) {
    if (s.skip < at) continue;
    out.push(s);
    at = s.skip + s.take;
  }
  return out;
}

/**
 * Member starts of staged files concatenated in order (one gzip stream: members concatenate):
 * each file after the first starts a member, and its own members move by the rows and bytes
 * before it. Also each file's first row in the concatenation, and the rows no file's bytes hold
 * (`holes`: rows [0, gzipFrom) of a part staged with its segments outside the gzip).
 */
export function joinedMembers(
  files: readonly {
    rows: number;
    bytes: number;
    members?: readonly MemberStart[] | undefined;
    gzipFrom?: number | undefined;
  }[],
): { members: MemberStart[]; firstRows: number[]; holes: { skip: number; take: number }[] } {
  const members: MemberStart[] = [];
  const firstRows: number[] = [];
  const holes: { skip: number; take: number }[] = [];
  let row = 0;
  let offset = 0;
  for (const f of files) {
    firstRows.push(row);
    const from = f.gzipFrom ?? 0;
    if (from > 0) holes.push({ skip: row, take: from });
    // The file's bytes start at its first row held: one member start, even at offset 0.
    if (offset > 0 || from > 0) members.push({ row: row + from, offset });
    for (const m of f.members ?? []) members.push({ row: row + m.row, offset: offset + m.offset });
    row += f.rows;
    offset += f.bytes;
  }
  return { members, firstRows, holes };
}
