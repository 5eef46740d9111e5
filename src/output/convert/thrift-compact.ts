/**
 * Thrift's compact protocol, decoded into a tree that keeps every field's wire type, and encoded
 * back to the same bytes. Parquet's footer (FileMetaData) is written in it; parquet-concat.ts edits
 * a few offsets and keeps everything else, including fields this code has never heard of.
 *
 * Generic readers (hyparquet's, for one) return plain values and drop the wire type, so they cannot
 * write a footer back faithfully: an i16 would come back as an i32, which readers skip.
 */

/** Wire types of the compact protocol. */
export const TType = {
  BOOL_TRUE: 1,
  BOOL_FALSE: 2,
  BYTE: 3,
  I16: 4,
  I32: 5,
  I64: 6,
  DOUBLE: 7,
  BINARY: 8,
  LIST: 9,
  SET: 10,
  MAP: 11,
  STRUCT: 12,
} as const;

/**
 * A decoded value. Integers are bigints (i64 needs them; one representation keeps the code small).
 * A bool inside a list keeps its byte (writers differ on whether false is 0 or 2).
 */
export type TValue =
  | { t: typeof TType.BOOL_TRUE | typeof TType.BOOL_FALSE }
  | { t: typeof TType.BYTE | typeof TType.I16 | typeof TType.I32 | typeof TType.I64; v: bigint }
  | { t: typeof TType.DOUBLE | typeof TType.BINARY; v: Uint8Array }
  | { t: typeof TType.LIST | typeof TType.SET; elem: number; items: TElement[] }
  | { t: typeof TType.MAP; key: number; val: number; entries: [TElement, TElement][] }
  | { t: typeof TType.STRUCT; fields: TField[] };

/** A list, set or map element: like a value, except a bool is its byte. */
export type TElement = TValue | { t: 'bool'; byte: number };

export interface TField {
  id: number;
  value: TValue;
}

export type TStruct = Extract<TValue, { t: typeof TType.STRUCT }>;

/** Nesting deeper than this is not a Parquet footer (FileMetaData nests about 6 levels). */
const MAX_DEPTH = 64;

class Reader {
  pos = 0;
  constructor(private readonly buf: Uint8Array) {}

  byte(): number {
    if (this.pos >= this.buf.length) throw new RangeError('thrift: unexpected end of input');
    return this.buf[this.pos++]!;
  }

  varint(): bigint {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      const b = this.byte();
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
      shift += 7n;
      if (shift > 63n) throw new RangeError('thrift: varint longer than 64 bits');
    }
  }

  zigzag(): bigint {
    const n = this.varint();
    return (n >> 1n) ^ -(n & 1n);
  }

  bytes(n: number): Uint8Array {
    if (n < 0 || this.pos + n > this.buf.length) throw new RangeError('thrift: unexpected end of input');
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }
}

function readValue(r: Reader, t: number, depth: number): TValue {
  if (depth > MAX_DEPTH) throw new RangeError('thrift: nesting too deep');
  switch (t) {
    case TType.BOOL_TRUE:
    case TType.BOOL_FALSE:
      return { t };
    case TType.BYTE:
      return { t, v: BigInt(r.byte()) };
    case TType.I16:
    case TType.I32:
    case TType.I64:
      return { t, v: r.zigzag() };
    case TType.DOUBLE:
      return { t, v: r.bytes(8) };
    case TType.BINARY:
      return { t, v: r.bytes(Number(r.varint())) };
    case TType.LIST:
    case TType.SET: {
      const head = r.byte();
      const elem = head & 0x0f;
      const size = head >> 4 === 0x0f ? Number(r.varint()) : head >> 4;
      const items: TElement[] = [];
      for (let i = 0; i < size; i++) items.push(readElement(r, elem, depth + 1));
      return { t, elem, items };
    }
    case TType.MAP: {
      const size = Number(r.varint());
      const kv = size > 0 ? r.byte() : 0;
      const key = kv >> 4;
      const val = kv & 0x0f;
      const entries: [TElement, TElement][] = [];
      for (let i = 0; i < size; i++)
        entries.push([readElement(r, key, depth + 1), readElement(r, val, depth + 1)]);
      return { t, key, val, entries };
    }
    case TType.STRUCT:
      return readStruct(r, depth + 1);
    default:
      throw new RangeError(`thrift: unknown wire type ${t}`);
  }
}

function readElement(r: Reader, t: number, depth: number): TElement {
  // In a collection a bool is a whole byte, and both bool types name the element type.
  if (t === TType.BOOL_TRUE || t === TType.BOOL_FALSE) return { t: 'bool', byte: r.byte() };
  return readValue(r, t, depth);
}

function readStruct(r: Reader, depth: number): TStruct {
  const fields: TField[] = [];
  let last = 0;
  for (;;) {
    const head = r.byte();
    if (head === 0) return { t: TType.STRUCT, fields };
    const t = head & 0x0f;
    const delta = head >> 4;
    const id = delta === 0 ? Number(r.zigzag()) : last + delta;
    fields.push({ id, value: readValue(r, t, depth) });
    last = id;
  }
}

/** Decodes one struct from the start of `buf`; `end` is where it stopped. */
export function decodeStruct(buf: Uint8Array): { struct: TStruct; end: number } {
  const r = new Reader(buf);
  const struct = readStruct(r, 0);
  return { struct, end: r.pos };
}

class Writer {
  private buf = new Uint8Array(1 << 16);
  len = 0;

  private room(n: number): void {
    if (this.len + n <= this.buf.length) return;
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.len + n));
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
  }

  byte(b: number): void {
    this.room(1);
    this.buf[this.len++] = b & 0xff;
  }

  varint(n: bigint): void {
    let v = BigInt.asUintN(64, n);
    while (v >= 0x80n) {
      this.byte(Number(v & 0x7fn) | 0x80);
      v >>= 7n;
    }
    this.byte(Number(v));
  }

  zigzag(n: bigint): void {
    this.varint((n << 1n) ^ (n >> 63n));
  }

  bytes(b: Uint8Array): void {
    this.room(b.length);
    this.buf.set(b, this.len);
    this.len += b.length;
  }

  result(): Uint8Array {
    return this.buf.slice(0, this.len);
  }
}

function writeValue(w: Writer, value: TValue): void {
  switch (value.t) {
    case TType.BOOL_TRUE:
    case TType.BOOL_FALSE:
      return; // a field's bool lives in its header
    case TType.BYTE:
      return w.byte(Number(value.v));
    case TType.I16:
    case TType.I32:
    case TType.I64:
      return w.zigzag(value.v);
    case TType.DOUBLE:
      return w.bytes(value.v);
    case TType.BINARY:
      w.varint(BigInt(value.v.length));
      return w.bytes(value.v);
    case TType.LIST:
    case TType.SET: {
      const n = value.items.length;
      if (n < 15) w.byte((n << 4) | value.elem);
      else {
        w.byte(0xf0 | value.elem);
        w.varint(BigInt(n));
      }
      for (const item of value.items) writeElement(w, item);
      return;
    }
    case TType.MAP:
      w.varint(BigInt(value.entries.length));
      if (value.entries.length > 0) w.byte((value.key << 4) | value.val);
      for (const [k, v] of value.entries) {
        writeElement(w, k);
        writeElement(w, v);
      }
      return;
    case TType.STRUCT:
      return writeStruct(w, value);
    default: {
      const never: never = value;
      throw new Error(`thrift: cannot write ${JSON.stringify(never)}`);
    }
  }
}

function writeElement(w: Writer, e: TElement): void {
  if (e.t === 'bool') w.byte(e.byte);
  else writeValue(w, e);
}

function writeStruct(w: Writer, s: TStruct): void {
  let last = 0;
  for (const f of s.fields) {
    const delta = f.id - last;
    if (delta > 0 && delta <= 15) w.byte((delta << 4) | f.value.t);
    else {
      w.byte(f.value.t);
      w.zigzag(BigInt(f.id));
    }
    writeValue(w, f.value);
    last = f.id;
  }
  w.byte(0);
}

/** Encodes a struct as the compact protocol writes it. */
export function encodeStruct(s: TStruct): Uint8Array {
  const w = new Writer();
  writeStruct(w, s);
  return w.result();
}

/** The value of field `id`, if present. */
export function field(s: TStruct, id: number): TValue | undefined {
  for (const f of s.fields) if (f.id === id) return f.value;
  return undefined;
}
