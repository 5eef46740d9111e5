/** Date handling of search requests: `after`/`before` values and the clock's calendar day (UTC). */
import { badRequest } from '../../server/http-error.js';

/** Bounds of a relative `after` window (section 4.9). */
export const MIN_WINDOW_YEARS = 1;
export const MAX_WINDOW_YEARS = 50;
/** Automatic floor of single-term company-scoped queries (section 4.9 rule 3). */
export const AUTO_FLOOR_YEARS = 3;

export type AfterSpec =
  { kind: 'date'; date: string } | { kind: 'relative'; years: number; text: string } | { kind: 'all' };

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;

export function isValidDate(text: string): boolean {
  const m = DATE_RE.exec(text);
  if (!m) return false;
  const d = new Date(`${text}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === text;
}

export function parseAfter(value: unknown): AfterSpec | undefined {
  if (value === undefined || value === null) return undefined;
  const message = `after must be a date YYYY-MM-DD, a relative window from ${MIN_WINDOW_YEARS}y to ${MAX_WINDOW_YEARS}y, or all`;
  if (typeof value !== 'string') throw badRequest(message);
  const text = value.trim().toLowerCase();
  if (text === 'all') return { kind: 'all' };
  const rel = /^(\d{1,3})y$/.exec(text);
  if (rel?.[1]) {
    const years = Number(rel[1]);
    if (years < MIN_WINDOW_YEARS || years > MAX_WINDOW_YEARS) throw badRequest(`${message} (got ${value})`);
    return { kind: 'relative', years, text };
  }
  if (isValidDate(text)) return { kind: 'date', date: text };
  throw badRequest(`${message} (got ${JSON.stringify(value)})`);
}

export function parseBefore(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || !isValidDate(value.trim())) {
    throw badRequest(`before must be a date YYYY-MM-DD (got ${JSON.stringify(value)})`);
  }
  return value.trim();
}

/** The UTC calendar day `years` before `nowMs`, as YYYY-MM-DD (Feb 29 rolls to Mar 1). */
export function yearsBefore(nowMs: number, years: number): string {
  const d = new Date(nowMs);
  d.setUTCFullYear(d.getUTCFullYear() - years);
  return d.toISOString().slice(0, 10);
}

/** Whole days from `date` (YYYY-MM-DD) to `nowMs`; negative when the date is in the future. */
export function daysSince(date: string, nowMs: number): number {
  return Math.floor((nowMs - Date.parse(`${date}T00:00:00Z`)) / 86_400_000);
}
