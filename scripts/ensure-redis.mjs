#!/usr/bin/env node
// Makes sure a Redis is reachable for the tests and the demo: either REDIS_URL is set, or a
// redis-server binary is on PATH (the test setup and the demo then start a private one on a free
// loopback port). On Debian/Ubuntu as root it installs redis-server with apt-get; elsewhere it says how.
import { ensureBinary } from './lib/ensure-binary.mjs';

if (process.env.REDIS_URL) process.exit(0);
const ok = ensureBinary({
  binary: 'redis-server',
  pkg: 'redis-server',
  howto: [
    'filings-export needs Redis (6.2 or newer) and found neither REDIS_URL nor a redis-server binary.',
    'Either install it (Debian/Ubuntu: sudo apt-get update && sudo apt-get install redis-server;',
    'macOS: brew install redis) or point REDIS_URL at a running server, e.g. REDIS_URL=redis://127.0.0.1:6379.',
  ],
});
process.exit(ok ? 0 : 1);
