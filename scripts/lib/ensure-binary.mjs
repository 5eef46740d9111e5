// Makes sure a binary the tests need is on this machine: found on PATH (or at `path`), or, on
// Debian/Ubuntu as root, installed with apt-get (one `apt-get update` first, as the machine's lists
// may be stale); elsewhere it says how. Used by ensure-redis.mjs and ensure-chromium.mjs.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export function has(cmd) {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

/**
 * @param {{ binary: string, path?: string, pkg: string, howto: string[] }} opts
 * @returns {boolean} whether the binary is there now
 */
export function ensureBinary(opts) {
  const present = () => (opts.path ? existsSync(opts.path) : has(opts.binary));
  if (present()) return true;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (isRoot && has('apt-get')) {
    console.error(`${opts.binary} not found: installing it with apt-get (Debian package ${opts.pkg})...`);
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    try {
      execFileSync('apt-get', ['update', '-qq'], { stdio: ['ignore', 'inherit', 'inherit'], env });
      execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', opts.pkg], {
        stdio: ['ignore', 'inherit', 'inherit'],
        env,
      });
    } catch (err) {
      console.error(
        `apt-get could not install ${opts.pkg}: ${err instanceof Error ? err.message : String(err)}`,
      );
      return false;
    }
    if (present()) return true;
  }
  console.error(opts.howto.join('\n'));
  return false;
}
