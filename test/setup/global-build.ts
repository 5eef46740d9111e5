import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
// @ts-expect-error: a plain ES module of bin/ (no types).
import { staleReason } from '../../bin/entry-point.mjs';

// Tests that start the CLI run what `bin/filings-export.mjs` runs: build/ when it is current. An
// edited source makes it stale, so it is rebuilt once here, before any test file starts (a rebuild
// while CLI processes run would pull files from under them).
export function setup(): void {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  const stale = (staleReason as (root: string) => string | undefined)(root);
  if (stale === undefined) return;
  process.stderr.write(`rebuilding build/: ${stale}\n`);
  execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: root, stdio: 'inherit' });
}
