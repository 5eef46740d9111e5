/**
 * Which JSON kinds each row field was seen with. The part writer records it while it writes (a
 * few nanoseconds per field), so publishing knows every field name and how to read and type it
 * without another pass over the staged rows.
 */
import { Kind } from '../../types.js';
import type { FieldKinds } from './types.js';

/** Kind is stated once in src/types.ts (the client's compact rows use it too). */
export { Kind, type FieldKinds };

const KIND_NAMES = Object.keys(Kind) as (keyof typeof Kind)[];

export function kindsToNames(mask: number): string[] {
  return KIND_NAMES.filter((k) => (mask & Kind[k]) !== 0).map((k) => k.toLowerCase());
}

export function namesToKinds(names: readonly string[]): number {
  let mask = 0;
  for (const n of names) {
    const k = Kind[n.toUpperCase() as keyof typeof Kind] as number | undefined;
    if (k === undefined) throw new Error(`unknown field kind "${n}"`);
    mask |= k;
  }
  return mask;
}

function isDateLike(s: string): boolean {
  return s.length === 10 && s.charCodeAt(4) === 45 && s.charCodeAt(7) === 45 && /^\d{4}-\d{2}-\d{2}$/.test(s);
}

export function kindOf(v: unknown): number {
  if (v === null) return Kind.NULL;
  const t = typeof v;
  if (t === 'string') return isDateLike(v as string) ? Kind.DATE_STRING : Kind.STRING;
  if (t === 'number') return Number.isSafeInteger(v) ? Kind.INT : Kind.FLOAT;
  if (t === 'boolean') return Kind.BOOLEAN;
  if (t === 'bigint') return Kind.BIGINT;
  if (t === 'object') {
    if (!Array.isArray(v)) return Kind.OBJECT;
    for (const e of v) if (typeof e !== 'string') return Kind.ARRAY;
    return Kind.STRING_ARRAY;
  }
  return 0; // undefined, functions, symbols: JSON.stringify leaves them out
}

/**
 * Records fields and kinds row by row. Rows of one response share their key order, so the usual
 * row costs one string comparison and one typeof per field (no map lookup, no allocation).
 */
export class FieldTracker {
  private readonly index = new Map<string, number>();
  readonly names: string[] = [];
  readonly kinds: number[] = [];

  observe(row: Record<string, unknown>): void {
    const names = this.names;
    let i = 0;
    for (const k in row) {
      const at = names[i] === k ? i : this.slot(k);
      this.kinds[at]! |= kindOf(row[k]);
      i++;
    }
  }

  /** observe() of a row read without parsing: `kinds[at + i]` is the kind of `names[i]`. */
  observeKinds(names: readonly string[], kinds: readonly number[], at: number): void {
    const known = this.names;
    for (let i = 0; i < names.length; i++) {
      const k = names[i] as string;
      const slot = known[i] === k ? i : this.slot(k);
      this.kinds[slot]! |= kinds[at + i] as number;
    }
  }

  has(name: string): boolean {
    return this.index.has(name);
  }

  private slot(k: string): number {
    let at = this.index.get(k);
    if (at === undefined) {
      at = this.names.length;
      this.index.set(k, at);
      this.names.push(k);
      this.kinds.push(0);
    }
    return at;
  }

  snapshot(): FieldKinds {
    return { names: [...this.names], kinds: [...this.kinds] };
  }
}

/** Union of several parts' field lists, first appearance order. */
export function mergeFieldKinds(parts: readonly FieldKinds[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const p of parts) {
    p.names.forEach((n, i) => out.set(n, (out.get(n) ?? 0) | (p.kinds[i] ?? 0)));
  }
  return out;
}
