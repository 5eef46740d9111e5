#!/usr/bin/env node
// Makes sure Debian's Prometheus is there for the alert-rule tests (promtool) and the test that
// scrapes a worker with a real server (prometheus). PROMETHEUS_BIN_DIR points at another build.
import { join } from 'node:path';
import { ensureBinary } from './lib/ensure-binary.mjs';

const dir = process.env.PROMETHEUS_BIN_DIR ?? '/usr/bin';
const ok = ensureBinary({
  binary: 'promtool',
  path: join(dir, 'promtool'),
  pkg: 'prometheus',
  howto: [
    `The alert-rule tests need promtool and prometheus in ${dir} and did not find them.`,
    'Install them (Debian/Ubuntu: sudo apt-get update && sudo apt-get install prometheus) or set PROMETHEUS_BIN_DIR.',
  ],
});
process.exit(ok ? 0 : 1);
