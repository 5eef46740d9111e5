/**
 * The `<TICKER>.fields.json` sidecar of a staged part: its rows, sha256 and field list with kinds.
 * When a sidecar is missing or describes another attempt's file, the staged file is scanned instead.
 */
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createGunzip } from 'node:zlib';
import { coerceError, OutputError } from '../../errors.js';
import { FieldTracker, kindsToNames, namesToKinds, type FieldKinds } from './field-kinds.js';
import { writeFileAtomic } from '../storage/index.js';
import { ndjsonLines } from './ndjson-lines.js';

export interface FieldsSidecar {
  rows: number;
  sha256: string;
  fields: FieldKinds;
  /** Longest line in UTF-16 code units, newline included (absent in sidecars of older writers). */
  maxLineChars?: number;
  /**
   * Where each gzip member after the first starts: its first row and byte offset, both increasing
   * (absent in sidecars of older writers, whose files are one member).
   */
  members?: MemberStart[];
  /** The staging attempt that wrote the file (PartWriter.stagingId); absent in older sidecars. */
  stagingId?: string;
  /**
   * A part staged with its segments outside the gzip: the first row the gzip file holds (its first
   * member starts there; `rows`, `members` and the rows of `segments` count from the part's first
   * row). @defaultValue 0: the gzip holds every row
   */
  gzipFrom?: number;
  /** The segments holding rows [0, gzipFrom), in order: rows and the size of each one's plain file. */
  segments?: PieceRows[];
}

/** Rows [skip, skip + take) of a part, in a segment's plain file of `bytes` bytes (or its Parquet). */
export interface PieceRows {
  skip: number;
  take: number;
  bytes: number;
}

export interface MemberStart {
  row: number;
  offset: number;
}

interface SidecarJson {
  format: 1;
  rows: number;
  sha256: string;
  fields: { name: string; kinds: string[] }[];
  max_line_chars?: number;
  /** [row, offset] pairs. */
  members?: [number, number][];
  staging_id?: string;
  gzip_from?: number;
  /** [skip, take, bytes] triples. */
  segments?: [number, number, number][];
}

export async function writeFieldsSidecar(path: string, s: FieldsSidecar): Promise<void> {
  const json: SidecarJson = {
    format: 1,
    rows: s.rows,
    sha256: s.sha256,
    fields: s.fields.names.map((name, i) => ({ name, kinds: kindsToNames(s.fields.kinds[i] ?? 0) })),
    ...(s.maxLineChars === undefined ? {} : { max_line_chars: s.maxLineChars }),
    ...(s.members === undefined ? {} : { members: s.members.map((m) => [m.row, m.offset]) }),
    ...(s.stagingId === undefined ? {} : { staging_id: s.stagingId }),
    ...(s.gzipFrom === undefined ? {} : { gzip_from: s.gzipFrom }),
    ...(s.segments === undefined ? {} : { segments: s.segments.map((g) => [g.skip, g.take, g.bytes]) }),
  };
  await writeFileAtomic(path, `${JSON.stringify(json)}\n`);
}

/** The sidecar, or undefined when absent or unreadable. */
export async function readFieldsSidecar(path: string): Promise<FieldsSidecar | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return undefined;
  }
  try {
    const j = JSON.parse(text) as SidecarJson;
    if (j.format !== 1 || !Array.isArray(j.fields)) return undefined;
    return {
      rows: j.rows,
      sha256: j.sha256,
      fields: { names: j.fields.map((f) => f.name), kinds: j.fields.map((f) => namesToKinds(f.kinds)) },
      ...(Number.isSafeInteger(j.max_line_chars) && (j.max_line_chars ?? -1) >= 0
        ? { maxLineChars: j.max_line_chars }
        : {}),
      ...memberStartsOf(j.members),
      ...(typeof j.staging_id === 'string' && j.staging_id !== '' ? { stagingId: j.staging_id } : {}),
      ...piecesOf(j),
    };
  } catch {
    return undefined;
  }
}

/**
 * Where the gzip starts and the segments before it. Unlike member starts these are not optional
 * hints: a sidecar whose segments do not tile rows [0, gzip_from) exactly is rejected whole.
 */
function piecesOf(j: SidecarJson): { gzipFrom?: number; segments?: PieceRows[] } {
  if (j.gzip_from === undefined && j.segments === undefined) return {};
  const from = j.gzip_from;
  if (!Number.isSafeInteger(from) || from! < 0 || from! > j.rows || !Array.isArray(j.segments))
    throw new Error('bad gzip_from');
  const segments: PieceRows[] = [];
  let at = 0;
  for (const g of j.segments) {
    if (!Array.isArray(g) || g.length !== 3 || !g.every((n) => Number.isSafeInteger(n) && n >= 0))
      throw new Error('bad segment');
    const [skip, take, bytes] = g;
    if (skip !== at || take <= 0) throw new Error('segments do not tile');
    segments.push({ skip, take, bytes });
    at = skip + take;
  }
  if (at !== from) throw new Error('segments do not reach gzip_from');
  return { gzipFrom: from!, segments };
}

/** Member starts as written, or none when they are not increasing pairs of whole numbers. */
function memberStartsOf(raw: unknown): { members?: MemberStart[] } {
  if (!Array.isArray(raw)) return {};
  const members: MemberStart[] = [];
  let row = 0;
  let offset = 0;
  for (const m of raw) {
    if (!Array.isArray(m) || m.length !== 2) return {};
    const [r, o] = m as unknown[];
    if (!Number.isSafeInteger(r) || !Number.isSafeInteger(o)) return {};
    if ((r as number) < row || (o as number) <= offset) return {};
    members.push({ row: r as number, offset: o as number });
    row = r as number;
    offset = o as number;
  }
  return { members };
}

/**
 * Field kinds of a staged file by reading it (the fallback when the sidecar is unusable). Big
 * integers read as JSON numbers are classified FLOAT here (not safe integers), never mis-typed INT.
 */
export async function scanFieldKinds(
  path: string,
): Promise<{ rows: number; fields: FieldKinds; maxLineChars: number }> {
  const tracker = new FieldTracker();
  let rows = 0;
  let lineNo = 0;
  let maxLineChars = 0;
  for await (const line of ndjsonLines(createReadStream(path).pipe(createGunzip()), path)) {
    lineNo++;
    if (line.trim() === '') continue;
    tracker.observe(parseLine(line, path, lineNo));
    // +1: the newline the reader strips.
    if (line.length + 1 > maxLineChars) maxLineChars = line.length + 1;
    rows++;
  }
  return { rows, fields: tracker.snapshot(), maxLineChars };
}

function parseLine(line: string, path: string, lineNo: number): Record<string, unknown> {
  try {
    return JSON.parse(line) as Record<string, unknown>;
  } catch (err: unknown) {
    throw new OutputError('OUTPUT_FAILED', `${path} line ${lineNo}: ${coerceError(err).message}`, {
      cause: err,
    });
  }
}
