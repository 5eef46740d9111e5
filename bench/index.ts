/**
 * `npm run bench`: runs every benchmark module and prints one table of the project's headline
 * figures, each with its target. `npm run bench -- NAME…` runs only the named modules.
 */
import { readdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { BenchModule, BenchResult } from './types.js';

const here = dirname(fileURLToPath(import.meta.url));
const only = process.argv.slice(2);
const modules = (await readdir(here))
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => only.length === 0 || only.some((o) => f.startsWith(o)))
  .sort();

const results: BenchResult[] = [];
for (const file of modules) {
  process.stderr.write(`bench: running ${file}...\n`);
  const mod = (await import(pathToFileURL(join(here, file)).href)) as BenchModule;
  try {
    results.push(...(await mod.run()));
  } catch (err) {
    results.push({ group: file, name: 'failed', value: NaN, unit: '', note: String(err) });
  }
}

const rows = results.map((r) => [
  r.group,
  r.name,
  Number.isFinite(r.value) ? formatValue(r.value) : 'n/a',
  r.unit,
  r.target ?? '',
  r.ok === undefined ? '' : r.ok ? 'ok' : 'MISSED',
  r.note ?? '',
]);
const header = ['group', 'figure', 'value', 'unit', 'target', 'met', 'note'];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
const line = (cells: string[]): string => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ');
console.log(line(header));
console.log(widths.map((w) => '-'.repeat(w)).join('-|-'));
for (const r of rows) console.log(line(r));

function formatValue(v: number): string {
  if (Number.isInteger(v)) return String(v);
  // Four decimals below 0.1 (CPU seconds per 1,000 rows): three hide a 20 % change at 0.006.
  return Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) < 0.1 && v !== 0 ? v.toFixed(4) : v.toFixed(3);
}
