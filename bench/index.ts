/**
 * `npm run bench`: runs every benchmark module and prints one table of the project's headline
 * figures, each with its target. `npm run bench -- NAME…` runs only the modules whose file names
 * start with NAME (bench/*.bench.ts and one folder down, e.g. bench/warehouse/load.bench.ts). Exits 1
 * when a module throws or a figure misses its target; `-- --advisory` reports misses only.
 */
import { readdir } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { BenchModule, BenchResult } from './support/types.js';
import { benchVerdict, formatValue, parseBenchArgs, type FailedModule } from './support/verdict.js';

const here = dirname(fileURLToPath(import.meta.url));
const { advisory, only } = parseBenchArgs(process.argv.slice(2));
// Modules sit in bench/ or one folder down by role (bench/warehouse/); selected by file name.
const entries = await readdir(here, { withFileTypes: true });
const nested = await Promise.all(
  entries
    .filter((e) => e.isDirectory() && e.name !== 'support')
    .map(async (e) => (await readdir(join(here, e.name))).map((f) => join(e.name, f))),
);
const modules = [...entries.filter((e) => e.isFile()).map((e) => e.name), ...nested.flat()]
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => only.length === 0 || only.some((o) => basename(f).startsWith(o)))
  .sort((a, b) => basename(a).localeCompare(basename(b)));

if (modules.length === 0) throw new Error(`bench: no module matches ${only.join(', ')}`);
const results: BenchResult[] = [];
const failed: FailedModule[] = [];
for (const file of modules) {
  process.stderr.write(`bench: running ${file}...\n`);
  try {
    const mod = (await import(pathToFileURL(join(here, file)).href)) as BenchModule;
    results.push(...(await mod.run()));
  } catch (err) {
    failed.push({ file, error: String(err) });
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

const verdict = benchVerdict(results, failed, { advisory });
for (const p of verdict.problems) process.stderr.write(`${p}\n`);
process.exitCode = verdict.exitCode;
