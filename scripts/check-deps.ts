/**
 * The dependency check of `npm run lint`: dependency-cruiser's rules (.dependency-cruiser.cjs) over
 * the given roots, plus folder-level cycles, which dependency-cruiser does not see (two folders
 * importing each other through different files form no file cycle). Prints every violation and
 * exits 1 when there is one. `node bin/run-ts.mjs scripts/check-deps.ts [ROOT…]` (default: src jobs).
 */
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cruise, type ICruiseResult, type IConfiguration } from 'dependency-cruiser';

export interface DepViolation {
  rule: string;
  from: string;
  to: string;
}

/** Folder of a module for the cycle check: `src/<folder>`, `jobs`, or the file itself (`src/types.ts`). */
export function folderOf(path: string): string {
  const parts = path.split('/');
  if (parts[0] === 'src' && parts.length > 2) return `src/${parts[1]}`;
  if (parts.length > 1 && parts[0] !== 'src') return parts[0] as string;
  return path;
}

/** Cycles between folders (each as `a → b → a`), from the cruise result's module graph. */
export function folderCycles(result: ICruiseResult): string[] {
  const edges = new Map<string, Set<string>>();
  for (const m of result.modules) {
    const a = folderOf(m.source);
    for (const d of m.dependencies) {
      if (d.coreModule || d.resolved.includes('node_modules')) continue;
      const b = folderOf(d.resolved);
      if (a === b) continue;
      if (!edges.has(a)) edges.set(a, new Set());
      edges.get(a)?.add(b);
    }
  }
  const cycles = new Set<string>();
  // Every edge a → b that can get back to a closes a cycle; folders are few, a DFS per edge is cheap.
  const reaches = (from: string, target: string, seen = new Set<string>()): string[] | null => {
    if (from === target) return [from];
    if (seen.has(from)) return null;
    seen.add(from);
    for (const next of edges.get(from) ?? []) {
      const path = reaches(next, target, seen);
      if (path) return [from, ...path];
    }
    return null;
  };
  for (const [a, targets] of edges) {
    for (const b of targets) {
      const back = reaches(b, a);
      if (back) {
        const cycle = [a, ...back];
        // One name per cycle whatever folder it starts from: rotate to the smallest.
        const body = cycle.slice(0, -1);
        const start = body.indexOf([...body].sort()[0] as string);
        const rotated = [...body.slice(start), ...body.slice(0, start)];
        cycles.add([...rotated, rotated[0]].join(' → '));
      }
    }
  }
  return [...cycles].sort();
}

/** Runs the rules and the folder check over `roots` (relative to `cwd`). */
export async function checkDependencies(
  roots: string[],
  opts: { cwd?: string; configFile?: string } = {},
): Promise<{ violations: DepViolation[]; cycles: string[] }> {
  const cwd = opts.cwd ?? process.cwd();
  const require = createRequire(import.meta.url);
  const config = require(opts.configFile ?? resolve(cwd, '.dependency-cruiser.cjs')) as IConfiguration;
  const before = process.cwd();
  process.chdir(cwd); // dependency-cruiser reports paths relative to the working directory
  try {
    const out = await cruise(roots, {
      ...config.options,
      ruleSet: { forbidden: config.forbidden ?? [] },
      validate: true,
      outputType: 'json',
    });
    const result = (typeof out.output === 'string' ? JSON.parse(out.output) : out.output) as ICruiseResult;
    const violations = result.summary.violations.map((v) => ({ rule: v.rule.name, from: v.from, to: v.to }));
    return { violations, cycles: folderCycles(result) };
  } finally {
    process.chdir(before);
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  const roots = process.argv.slice(2);
  const { violations, cycles } = await checkDependencies(roots.length > 0 ? roots : ['src', 'jobs']);
  for (const v of violations) process.stderr.write(`dependency rule ${v.rule}: ${v.from} → ${v.to}\n`);
  for (const c of cycles) process.stderr.write(`folder cycle: ${c}\n`);
  if (violations.length + cycles.length > 0) {
    process.stderr.write(
      `check-deps: ${violations.length} rule violations, ${cycles.length} folder cycles\n`,
    );
    process.exitCode = 1;
  } else process.stdout.write('check-deps: no dependency violations, no folder cycles\n');
}
