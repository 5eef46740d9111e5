/**
 * Writes the failure policy table (src/pipeline/part/failure-policy.ts) into docs/architecture.md
 * between its markers: `npm run docs:failures`. A test fails when the two differ.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderFailurePolicy } from '../src/pipeline/part/failure-policy.js';

export const FAILURE_DOC = fileURLToPath(new URL('../docs/architecture.md', import.meta.url));
export const START = '<!-- failure-policy:start (generated: npm run docs:failures) -->';
export const END = '<!-- failure-policy:end -->';

/** The document with the block between the markers replaced by the rendered table. */
export function withPolicyTable(doc: string): string {
  const a = doc.indexOf(START);
  const b = doc.indexOf(END);
  if (a < 0 || b < a) throw new Error(`docs/architecture.md has no ${START} … ${END} block`);
  return `${doc.slice(0, a + START.length)}\n${renderFailurePolicy()}\n${doc.slice(b)}`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  const doc = await readFile(FAILURE_DOC, 'utf8');
  await writeFile(FAILURE_DOC, withPolicyTable(doc));
  process.stdout.write('docs/architecture.md: failure policy table written\n');
}
