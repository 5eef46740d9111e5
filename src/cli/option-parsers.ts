/**
 * Option value parsers for commander. Kept apart from command-support.ts so registering the
 * commands loads only commander: config, zod and pino load when a command actually runs.
 */
import { InvalidArgumentError } from 'commander';

/** Words that mean "no limit" on the command line (case-insensitive). */
export const NO_LIMIT_WORDS = ['none', 'unlimited'] as const;

/**
 * Parses a limit as typed by a user: a whole number ≥ 0, or `none`/`unlimited` → null.
 * Returns undefined when the text is neither.
 */
export function parseLimitText(text: string): number | null | undefined {
  const t = text.trim();
  if ((NO_LIMIT_WORDS as readonly string[]).includes(t.toLowerCase())) return null;
  if (!/^\d+$/.test(t)) return undefined;
  const n = Number(t);
  return Number.isSafeInteger(n) ? n : undefined;
}

/** `A,B, C` → ['A', 'B', 'C']; an empty list is an error naming what was expected. */
export function commaList(text: string): string[] {
  const items = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (items.length === 0) throw new InvalidArgumentError('expected a comma-separated list');
  return items;
}
