/**
 * What `npm run bench` exits with: non-zero when a module threw, or when a figure missed its
 * target (unless `--advisory`, which reports misses without failing). A figure with a target but
 * no number (NaN) counts as missed: nothing was measured against it.
 */
import type { BenchResult } from './types.js';

export interface BenchVerdict {
  /** Process exit code: 0 all good, 1 a module threw or a target was missed (and not advisory). */
  exitCode: 0 | 1;
  /** One line per problem, for stderr. */
  problems: string[];
}

/** A module that threw instead of returning its figures. */
export interface FailedModule {
  file: string;
  error: string;
}

export function benchVerdict(
  results: readonly BenchResult[],
  failed: readonly FailedModule[],
  opts: { advisory: boolean },
): BenchVerdict {
  const problems = failed.map((f) => `bench: ${f.file} failed: ${f.error}`);
  const missed = results.filter(
    (r) => r.ok === false || (r.target !== undefined && !Number.isFinite(r.value)),
  );
  for (const r of missed)
    problems.push(
      `bench: ${opts.advisory ? 'missed (advisory)' : 'MISSED'}: ${r.group} / ${r.name}: ${Number.isFinite(r.value) ? formatValue(r.value) : 'n/a'} ${r.unit}, target ${r.target ?? '(none)'}${r.whenMissed !== undefined ? `. Why: ${r.whenMissed}` : ''}`,
    );
  const failing = failed.length > 0 || (!opts.advisory && missed.length > 0);
  return { exitCode: failing ? 1 : 0, problems };
}

/** Splits the command line: `--advisory`, and module names (prefixes of the bench modules' file names). */
export function parseBenchArgs(argv: readonly string[]): { advisory: boolean; only: string[] } {
  const unknown = argv.filter((a) => a.startsWith('--') && a !== '--advisory');
  if (unknown.length > 0) throw new Error(`bench: unknown option ${unknown.join(', ')} (known: --advisory)`);
  return { advisory: argv.includes('--advisory'), only: argv.filter((a) => !a.startsWith('--')) };
}

/** A figure as the table prints it. */
export function formatValue(v: number): string {
  if (Number.isInteger(v)) return String(v);
  // Four decimals below 0.1 (CPU seconds per 1,000 rows): three hide a 20 % change at 0.006.
  return Math.abs(v) >= 100 ? v.toFixed(0) : Math.abs(v) < 0.1 && v !== 0 ? v.toFixed(4) : v.toFixed(3);
}
