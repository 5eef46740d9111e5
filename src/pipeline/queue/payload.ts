/** Payload checks of BullMQ jobs: data arrives as unknown JSON and is parsed before any use. */
import type { z } from 'zod';
import { InputError } from '../../errors.js';

/** Parses `data` with `schema`, or throws an InputError naming the job type, field and value. */
export function parsePayload<T>(schema: z.ZodType<T>, data: unknown, jobName: string): T {
  const r = schema.safeParse(data);
  if (r.success) return r.data;
  const lines = r.error.issues.map((issue) => {
    let path = 'payload';
    for (const k of issue.path) path += typeof k === 'number' ? `[${k}]` : `.${String(k)}`;
    const value = valueAt(data, issue.path);
    const got = value === undefined ? ' (missing)' : ` (got ${truncate(JSON.stringify(value))})`;
    return `${path}: ${issue.message}${got}`;
  });
  return fail(`${jobName} job: invalid payload: ${lines.join('; ')}`);
}

function fail(message: string): never {
  throw new InputError(message);
}

function valueAt(node: unknown, path: readonly PropertyKey[]): unknown {
  let cur = node;
  for (const k of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[k];
  }
  return cur;
}

function truncate(s: string | undefined): string {
  if (s === undefined) return 'undefined';
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}
