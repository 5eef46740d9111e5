#!/usr/bin/env node
// Makes sure a Redis is reachable for the tests and the demo: either REDIS_URL is set, or a
// redis-server binary is on PATH (the test setup and the demo then start a private one on a free
// loopback port). On Debian/Ubuntu as root it installs redis-server with apt-get; elsewhere it says how.
import { execFileSync, spawnSync } from 'node:child_process';

function has(cmd) {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

if (process.env.REDIS_URL) {
  process.exit(0);
}
if (has('redis-server')) {
  process.exit(0);
}
const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
if (isRoot && has('apt-get')) {
  console.error('redis-server not found: installing it with apt-get (Debian package redis-server)...');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  try {
    execFileSync('apt-get', ['update', '-qq'], { stdio: ['ignore', 'inherit', 'inherit'], env });
    execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', 'redis-server'], {
      stdio: ['ignore', 'inherit', 'inherit'],
      env,
    });
  } catch (err) {
    console.error(
      `apt-get could not install redis-server: ${err instanceof Error ? err.message : String(err)}`,
    );
    process.exit(1);
  }
  if (has('redis-server')) process.exit(0);
}
console.error(
  [
    'filings-export needs Redis (6.2 or newer) and found neither REDIS_URL nor a redis-server binary.',
    'Either install it (Debian/Ubuntu: sudo apt-get update && sudo apt-get install redis-server;',
    'macOS: brew install redis) or point REDIS_URL at a running server, e.g. REDIS_URL=redis://127.0.0.1:6379.',
  ].join('\n'),
);
process.exit(1);
