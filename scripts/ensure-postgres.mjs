#!/usr/bin/env node
// Makes sure PostgreSQL's server binaries are on this machine for the load tests and the bench
// (the test setup starts a private cluster with them). On Debian/Ubuntu as root it installs the
// `postgresql` package with apt-get; elsewhere it says how.
import { existsSync, readdirSync } from 'node:fs';
import { ensureBinary } from './lib/ensure-binary.mjs';

const base = '/usr/lib/postgresql';
const initdb = () => existsSync(base) && readdirSync(base).some((v) => existsSync(`${base}/${v}/bin/initdb`));
const ok =
  initdb() ||
  ensureBinary({
    binary: 'initdb',
    path: `${base}/15/bin/initdb`,
    pkg: 'postgresql',
    howto: [
      'The load tests need PostgreSQL (15 or newer: MERGE) and found no initdb under /usr/lib/postgresql.',
      'Install it (Debian/Ubuntu: sudo apt-get update && sudo apt-get install postgresql).',
    ],
  });
process.exit(ok || initdb() ? 0 : 1);
