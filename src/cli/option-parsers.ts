/**
 * Option value parsers for commander. Kept apart from command-support.ts so registering the
 * commands loads only commander: config, zod and pino load when a command actually runs.
 */
import { InvalidArgumentError } from 'commander';

/** `A,B, C` → ['A', 'B', 'C']; an empty list is an error naming what was expected. */
export function commaList(text: string): string[] {
  const items = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (items.length === 0) throw new InvalidArgumentError('expected a comma-separated list');
  return items;
}
