/**
 * Option value parsers and shared option text for commander, in one place. Kept apart from
 * command-support.ts so registering the commands loads only commander: config, zod and pino load
 * when a command actually runs. Every parser's error names the flag and what it expects.
 */
import { InvalidArgumentError, type Command } from 'commander';

/** `--config`, written once for every command that reads the config. */
export function configOption(cmd: Command): Command {
  return cmd.option('--config <file>', 'config file (YAML or JSON); default $FILINGS_EXPORT_CONFIG');
}

/** `--out`, for the commands that read an output root. */
export function outOption(cmd: Command): Command {
  return cmd.option('--out <dir>', 'output root (default: config output.dir, $FILINGS_EXPORT_OUT, ./out)');
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

/** A whole number from `min` to `max`. */
export function integer(flag: string, min: number, max = Number.MAX_SAFE_INTEGER) {
  return (text: string): number => {
    if (!/^\d+$/.test(text.trim()) || Number(text) < min || Number(text) > max) {
      throw new InvalidArgumentError(`${flag} must be an integer from ${min} to ${max}`);
    }
    return Number(text);
  };
}

/** A whole number of at least 1. */
export function positiveInt(flag: string) {
  return (text: string): number => {
    if (!/^\d+$/.test(text.trim()) || Number(text) < 1)
      throw new InvalidArgumentError(`${flag} must be a whole number of at least 1`);
    return Number(text);
  };
}

/** A number from 0 to 1. */
export function fraction(flag: string) {
  return (text: string): number => {
    const v = Number(text);
    if (text.trim() === '' || !Number.isFinite(v) || v < 0 || v > 1) {
      throw new InvalidArgumentError(`${flag} must be a number from 0 to 1`);
    }
    return v;
  };
}

/** One of the allowed words. */
export function oneOf<T extends string>(flag: string, allowed: readonly T[]) {
  return (text: string): T => {
    if (!(allowed as readonly string[]).includes(text)) {
      throw new InvalidArgumentError(`${flag} must be one of ${allowed.join(', ')}`);
    }
    return text as T;
  };
}

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

const DURATION_UNITS_MS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** `30d`, `12h`, `90m`, `2w` → milliseconds. */
export function duration(flag: string) {
  return (text: string): number => {
    const m = /^(\d+)\s*([mhdw])$/i.exec(text.trim());
    const unit = m?.[2] !== undefined ? DURATION_UNITS_MS[m[2].toLowerCase()] : undefined;
    if (m?.[1] === undefined || unit === undefined || Number(m[1]) < 1)
      throw new InvalidArgumentError(
        `${flag} must be a whole number and a unit: m, h, d or w (for example 30d)`,
      );
    return Number(m[1]) * unit;
  };
}
