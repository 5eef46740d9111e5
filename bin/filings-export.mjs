#!/usr/bin/env node
// Entry point of the `filings-export` CLI. The sources are TypeScript run through tsx,
// so a checkout works right after `npm install` with no build step.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
