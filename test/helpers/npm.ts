import { spawnSync } from 'node:child_process';

/**
 * The environment for an npm child process, without npm's lifecycle variables (`npm test` sets
 * npm_* for the checkout, which must not steer an install elsewhere), NODE_OPTIONS or vitest's own.
 */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k.startsWith('npm_') && k !== 'npm_config_cache' && k !== 'npm_config_registry') continue;
    if (k === 'NODE_OPTIONS' || k.startsWith('VITEST')) continue;
    env[k] = v;
  }
  return { ...env, ...extra };
}

/** Runs `npm ARGS` in `cwd`; its stdout, or an error with its stderr. */
export function npm(args: string[], cwd: string): string {
  const r = spawnSync('npm', args, { cwd, env: cleanEnv(), encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`npm ${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return r.stdout;
}

export interface PackInfo {
  filename: string;
  files: { path: string; size: number }[];
  entryCount: number;
  unpackedSize: number;
}

/**
 * `npm pack --json` of the checkout at `root`, without lifecycle scripts: it packs the current build/
 * as it is (prepack would rebuild it under CLI processes of other test files). `dest` writes the
 * tarball there; without it, a dry run lists the files.
 */
export function pack(root: string, dest?: string): PackInfo {
  const where = dest === undefined ? ['--dry-run'] : ['--pack-destination', dest];
  const [info] = JSON.parse(npm(['pack', '--ignore-scripts', '--json', ...where], root)) as PackInfo[];
  if (!info) throw new Error('npm pack printed no package');
  return info;
}
