/**
 * Concatenates Parquet files with the same schema into one file without re-encoding anything: the
 * row groups (and whatever else sits between them, such as DuckDB's bloom filters) are copied byte
 * for byte, and one footer lists them all with their offsets moved. What Apache Arrow's
 * `parquet-concat` does. It lets one output file be converted in row ranges on several cores
 * (src/output/staged-part/parquet/dataset-files.ts): DuckDB reads a gzip file on one thread, and its COPY cannot append.
 *
 * An input may also contribute only some of its row groups (`{ path, rowGroups }`): each one's
 * column chunks are contiguous, so its byte range is copied and its offsets moved. Its page index
 * and bloom filters lie outside that range, so their offsets are dropped (readers then do without
 * them for those row groups); statistics stay, as they live in the footer.
 *
 * Inputs must be plain (unencrypted) Parquet whose footers agree in everything but their rows: the
 * schema, the key/value metadata, the writer. Anything else is refused, naming the file.
 */
import { open, stat } from 'node:fs/promises';
import { OutputError } from '../../errors.js';
import { appendRanges } from '../storage/index.js';
import {
  decodeStruct,
  encodeStruct,
  field,
  TType,
  type TElement,
  type TStruct,
  type TValue,
} from './thrift-compact.js';

const MAGIC = Buffer.from('PAR1', 'latin1');

// Field ids from parquet.thrift.
const FILE = { NUM_ROWS: 3, ROW_GROUPS: 4, ENCRYPTION: 8 } as const;
const ROW_GROUP = { COLUMNS: 1, NUM_ROWS: 3, FILE_OFFSET: 5, ORDINAL: 7 } as const;
const CHUNK = {
  FILE_PATH: 1,
  FILE_OFFSET: 2,
  META: 3,
  OFFSET_INDEX_OFFSET: 4,
  OFFSET_INDEX_LENGTH: 5,
  COLUMN_INDEX_OFFSET: 6,
  COLUMN_INDEX_LENGTH: 7,
  CRYPTO: 8,
} as const;
/** ColumnMetaData: data, index and dictionary page offsets, bloom filter offset. */
const META_OFFSETS = [9, 10, 11, 14] as const;
const META = { TOTAL_COMPRESSED_SIZE: 7, DATA_PAGE_OFFSET: 9, DICTIONARY_PAGE_OFFSET: 11 } as const;
/** ColumnMetaData: bloom filter offset and length (outside a row group's bytes). */
const META_BLOOM = [14, 15] as const;
/** ColumnChunk: page index offsets and lengths (outside a row group's bytes). */
const CHUNK_INDEX = [
  CHUNK.OFFSET_INDEX_OFFSET,
  CHUNK.OFFSET_INDEX_LENGTH,
  CHUNK.COLUMN_INDEX_OFFSET,
  CHUNK.COLUMN_INDEX_LENGTH,
] as const;

/** A whole file, or the row groups of it (0-based, ascending) to copy. */
export type ConcatInput = string | { path: string; rowGroups: readonly number[] };

interface Footer {
  path: string;
  /** Where the footer starts: the body (row groups and the rest) is [4, bodyEnd). */
  bodyEnd: number;
  meta: TStruct;
}

export interface ConcatResult {
  rows: number;
  rowGroups: number;
  bytes: number;
}

/** Writes `inputs`' rows, in order, as one Parquet file at `out` (created or truncated). */
export async function concatParquet(inputs: readonly ConcatInput[], out: string): Promise<ConcatResult> {
  if (inputs.length === 0) throw new OutputError('OUTPUT_FAILED', 'concatParquet: no input files');
  const footers: Footer[] = [];
  for (const input of inputs) footers.push(await readFooter(typeof input === 'string' ? input : input.path));
  const first = footers[0]!;
  const shared = encodeStruct(withoutRows(first.meta));
  for (const f of footers.slice(1)) {
    if (!Buffer.from(encodeStruct(withoutRows(f.meta))).equals(shared)) {
      throw new OutputError(
        'OUTPUT_FAILED',
        `${f.path}: its schema or file metadata differs from ${first.path}'s, so the two cannot be concatenated`,
      );
    }
  }

  const rowGroups: TValue[] = [];
  const ranges: { path: string; start: number; end: number }[] = [];
  let rows = 0n;
  let at = MAGIC.length; // where the next copied bytes start in the output
  for (const [i, f] of footers.entries()) {
    const input = inputs[i]!;
    const all = listItems(f, f.meta, FILE.ROW_GROUPS);
    if (typeof input === 'string') {
      const shift = BigInt(at - MAGIC.length);
      for (const rg of all) rowGroups.push(shiftRowGroup(f, rg, shift, rowGroups.length, false));
      rows += intField(f, f.meta, FILE.NUM_ROWS);
      ranges.push({ path: f.path, start: MAGIC.length, end: f.bodyEnd });
      at += f.bodyEnd - MAGIC.length;
      continue;
    }
    for (const g of checkedSubset(f, input.rowGroups, all.length)) {
      const rg = all[g]!;
      const { start, end } = rowGroupBytes(f, rg);
      rowGroups.push(shiftRowGroup(f, rg, BigInt(at - start), rowGroups.length, true));
      rows += intField(f, rg, ROW_GROUP.NUM_ROWS);
      const last = ranges[ranges.length - 1];
      // Neighbouring row groups of one file: one read.
      if (last !== undefined && last.path === f.path && last.end === start) last.end = end;
      else ranges.push({ path: f.path, start, end });
      at += end - start;
    }
  }

  const meta: TStruct = {
    t: TType.STRUCT,
    fields: first.meta.fields.map((fl) =>
      fl.id === FILE.NUM_ROWS
        ? { id: fl.id, value: { t: TType.I64, v: rows } }
        : fl.id === FILE.ROW_GROUPS
          ? { id: fl.id, value: { t: TType.LIST, elem: TType.STRUCT, items: rowGroups } }
          : fl,
    ),
  };
  const footer = Buffer.from(encodeStruct(meta));
  const tail = Buffer.alloc(8);
  tail.writeUInt32LE(footer.length, 0);
  MAGIC.copy(tail, 4);

  const fh = await open(out, 'w');
  let bytes = 0;
  try {
    bytes += (await fh.write(MAGIC)).bytesWritten;
    bytes += await appendRanges(fh, ranges);
    bytes += (await fh.write(footer)).bytesWritten;
    bytes += (await fh.write(tail)).bytesWritten;
  } finally {
    await fh.close();
  }
  return { rows: Number(rows), rowGroups: rowGroups.length, bytes };
}

/**
 * Whether these Parquet files can be concatenated: their footers agree in everything but their
 * rows (schema, key/value metadata, writer). Files written by another DuckDB version cannot.
 */
export async function concatCompatible(paths: readonly string[]): Promise<boolean> {
  let shared: Buffer | undefined;
  for (const path of new Set(paths)) {
    const meta = Buffer.from(encodeStruct(withoutRows((await readFooter(path)).meta)));
    if (shared === undefined) shared = meta;
    else if (!meta.equals(shared)) return false;
  }
  return true;
}

/** The row groups of a Parquet file: their rows, in order (what a caller picks a subset from). */
export async function parquetRowGroups(path: string): Promise<number[]> {
  const f = await readFooter(path);
  return listItems(f, f.meta, FILE.ROW_GROUPS).map((rg) => Number(intField(f, rg, ROW_GROUP.NUM_ROWS)));
}

function checkedSubset(f: Footer, picked: readonly number[], count: number): readonly number[] {
  if (picked.length === 0) throw new OutputError('OUTPUT_FAILED', `${f.path}: no row groups picked`);
  picked.forEach((g, i) => {
    if (!Number.isInteger(g) || g < 0 || g >= count || (i > 0 && g <= picked[i - 1]!))
      throw new OutputError(
        'OUTPUT_FAILED',
        `${f.path}: row groups [${picked.join(', ')}] are not ascending indexes below its ${count} row groups`,
      );
  });
  return picked;
}

/**
 * The bytes of one row group: from its first column chunk's first page to the end of its last.
 * Chunks are written one after another, so this range holds them all and nothing of another group.
 */
function rowGroupBytes(f: Footer, rg: TStruct): { start: number; end: number } {
  let start = Infinity;
  let end = 0;
  for (const c of listItems(f, rg, ROW_GROUP.COLUMNS)) {
    const m = asStruct(f, field(c, CHUNK.META) ?? { t: TType.STRUCT, fields: [] });
    const dict = field(m, META.DICTIONARY_PAGE_OFFSET);
    const first =
      dict !== undefined && dict.t === TType.I64 && dict.v > 0n
        ? dict.v
        : intField(f, m, META.DATA_PAGE_OFFSET);
    const from = Number(first);
    start = Math.min(start, from);
    end = Math.max(end, from + Number(intField(f, m, META.TOTAL_COMPRESSED_SIZE)));
  }
  if (!(start >= MAGIC.length && end > start && end <= f.bodyEnd))
    throw new OutputError('OUTPUT_FAILED', `${f.path}: a row group's pages lie outside its body`);
  return { start, end };
}

async function readFooter(path: string): Promise<Footer> {
  const bad = (what: string): OutputError =>
    new OutputError('OUTPUT_FAILED', `${path} is not a Parquet file this can concatenate: ${what}`);
  const size = (await stat(path)).size;
  if (size < 12) throw bad(`only ${size} bytes`);
  const fh = await open(path, 'r');
  try {
    const head = Buffer.alloc(4);
    const tail = Buffer.alloc(8);
    await fh.read(head, 0, 4, 0);
    await fh.read(tail, 0, 8, size - 8);
    if (!head.equals(MAGIC) || !tail.subarray(4).equals(MAGIC))
      throw bad('no PAR1 magic at both ends (an encrypted footer, or not Parquet)');
    const len = tail.readUInt32LE(0);
    const bodyEnd = size - 8 - len;
    if (bodyEnd < MAGIC.length) throw bad(`footer length ${len} is longer than the file`);
    const buf = Buffer.alloc(len);
    await fh.read(buf, 0, len, bodyEnd);
    let meta: TStruct;
    try {
      const decoded = decodeStruct(buf);
      if (decoded.end !== len) throw new RangeError(`footer ends at ${decoded.end} of ${len} bytes`);
      meta = decoded.struct;
    } catch (err: unknown) {
      throw bad(`its footer does not decode (${err instanceof Error ? err.message : String(err)})`);
    }
    if (field(meta, FILE.ENCRYPTION) !== undefined) throw bad('it is encrypted');
    const footer = { path, bodyEnd, meta };
    let sum = 0n;
    for (const rg of listItems(footer, meta, FILE.ROW_GROUPS))
      sum += intField(footer, rg, ROW_GROUP.NUM_ROWS);
    const total = intField(footer, meta, FILE.NUM_ROWS);
    if (sum !== total) throw bad(`its row groups hold ${sum} rows, its footer says ${total}`);
    return footer;
  } finally {
    await fh.close();
  }
}

function withoutRows(meta: TStruct): TStruct {
  return {
    t: TType.STRUCT,
    fields: meta.fields.filter((f) => f.id !== FILE.NUM_ROWS && f.id !== FILE.ROW_GROUPS),
  };
}

/** `alone`: the row group is copied without the rest of its file, so its index offsets go. */
function shiftRowGroup(f: Footer, rg: TStruct, shift: bigint, ordinal: number, alone: boolean): TValue {
  if (ordinal > 0x7fff) throw new OutputError('OUTPUT_FAILED', `more than 32,767 row groups in one file`);
  return edit(rg, (id, v) => {
    switch (id) {
      case ROW_GROUP.FILE_OFFSET:
        return shifted(v, shift);
      case ROW_GROUP.ORDINAL:
        return { t: TType.I16, v: BigInt(ordinal) };
      case ROW_GROUP.COLUMNS:
        if (v.t !== TType.LIST) return v;
        return { ...v, items: v.items.map((c) => shiftChunk(f, asStruct(f, c), shift, alone)) };
      default:
        return v;
    }
  });
}

function shiftChunk(f: Footer, chunk: TStruct, shift: bigint, alone: boolean): TStruct {
  if (field(chunk, CHUNK.FILE_PATH) !== undefined)
    throw new OutputError('OUTPUT_FAILED', `${f.path}: a column chunk lives in another file`);
  if (field(chunk, CHUNK.CRYPTO) !== undefined)
    throw new OutputError('OUTPUT_FAILED', `${f.path}: a column chunk is encrypted`);
  const kept = alone ? without(chunk, CHUNK_INDEX) : chunk;
  return edit(kept, (id, v) => {
    switch (id) {
      case CHUNK.FILE_OFFSET:
      case CHUNK.OFFSET_INDEX_OFFSET:
      case CHUNK.COLUMN_INDEX_OFFSET:
        return shifted(v, shift);
      case CHUNK.META:
        return edit(alone ? without(asStruct(f, v), META_BLOOM) : asStruct(f, v), (mid, mv) =>
          (META_OFFSETS as readonly number[]).includes(mid) ? shifted(mv, shift) : mv,
        );
      default:
        return v;
    }
  });
}

/** An offset moved by `shift`. 0 is left alone: writers put 0 in deprecated offsets they do not fill. */
function shifted(v: TValue, shift: bigint): TValue {
  if (v.t !== TType.I64 || v.v === 0n) return v;
  return { t: TType.I64, v: v.v + shift };
}

function edit(s: TStruct, fn: (id: number, v: TValue) => TValue): TStruct {
  return { t: TType.STRUCT, fields: s.fields.map((f) => ({ id: f.id, value: fn(f.id, f.value) })) };
}

function without(s: TStruct, ids: readonly number[]): TStruct {
  return { t: TType.STRUCT, fields: s.fields.filter((f) => !ids.includes(f.id)) };
}

function asStruct(f: Footer, v: TElement): TStruct {
  if (v.t !== TType.STRUCT) throw new OutputError('OUTPUT_FAILED', `${f.path}: unexpected footer layout`);
  return v;
}

function listItems(f: Footer, s: TStruct, id: number): TStruct[] {
  const v = field(s, id);
  if (v === undefined) return [];
  if (v.t !== TType.LIST) throw new OutputError('OUTPUT_FAILED', `${f.path}: unexpected footer layout`);
  return v.items.map((item) => asStruct(f, item));
}

function intField(f: Footer, s: TStruct, id: number): bigint {
  const v = field(s, id);
  if (v === undefined || v.t !== TType.I64)
    throw new OutputError('OUTPUT_FAILED', `${f.path}: its footer lacks field ${id} (a row count)`);
  return v.v;
}
