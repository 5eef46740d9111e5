#!/usr/bin/env node
// Makes sure Debian's Chromium is there for the dashboard's browser test (playwright-core drives
// it; no browser is ever downloaded). CHROMIUM_PATH points at another build.
import { ensureBinary } from './lib/ensure-binary.mjs';

const path = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ok = ensureBinary({
  binary: 'chromium',
  path,
  pkg: 'chromium',
  howto: [
    `The dashboard's browser test needs Chromium at ${path} and did not find it.`,
    'Install it (Debian/Ubuntu: sudo apt-get update && sudo apt-get install chromium) or set CHROMIUM_PATH.',
  ],
});
process.exit(ok ? 0 : 1);
