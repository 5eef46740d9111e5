/**
 * Counted nouns that agree with their number, for every line a person reads (CLI, status, logs,
 * the status page): "1 company", "2 companies", never "1 companies". Each function is plain
 * JavaScript once compiled and calls nothing else: the status page inlines their source
 * (`COUNTED_SCRIPT`), so the page and the CLI say it alike.
 */

/** The noun for `n` things: `plural(1, 'company', 'companies')` → `company`. */
export function plural(n: number, one: string, many: string = `${one}s`): string {
  return n === 1 ? one : many;
}

/**
 * `n` and its noun: `counted(2, 'company', 'companies')` → `2 companies`. `shown` is how `n` is
 * written when not plainly (grouped digits: `counted(n, 'row', 'rows', n.toLocaleString('en-US'))`).
 */
export function counted(n: number, one: string, many: string = `${one}s`, shown: string = String(n)): string {
  return `${shown} ${n === 1 ? one : many}`;
}

/** Both functions as browser script, for a page that says counts the way the CLI does. */
export const COUNTED_SCRIPT = `const plural = ${plural.toString()};\nconst counted = ${counted.toString()};\n`;
