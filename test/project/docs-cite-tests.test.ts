/**
 * The docs point readers at the tests and benches that prove what they claim
 * (docs/budget.md's "Tests", the recipes' checks, the decisions' figures). A cited file that was
 * renamed or deleted leaves a claim nobody checks any more: every `test/…` and `bench/…` path
 * cited in README.md, CONTRIBUTING.md and docs/*.md must name a file that exists (a `*` pattern
 * at least one).
 */
import { readdir, readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';

const root = new URL('../../', import.meta.url);

/** The Markdown files users read: README.md, CONTRIBUTING.md and docs/*.md. */
async function docFiles(): Promise<string[]> {
  const docs = (await readdir(new URL('docs/', root)))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`);
  return ['README.md', 'CONTRIBUTING.md', ...docs];
}

/** `test/…` and `bench/…` paths of a .ts file cited in `text`, `*` patterns included. */
function citedPaths(text: string): string[] {
  const found = text.match(/(?<![\w/.-])(?:test|bench)\/[\w./*-]*\.ts\b/g) ?? [];
  return [...new Set(found)];
}

/** Files of the repository matching `cited` (a path, or a pattern with `*` in its last part). */
async function matches(cited: string): Promise<string[]> {
  const slash = cited.lastIndexOf('/');
  const dir = cited.slice(0, slash);
  const name = cited.slice(slash + 1);
  const pattern = new RegExp(`^${name.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')}$`);
  const entries = await readdir(new URL(`${dir}/`, root)).catch(() => [] as string[]);
  return entries.filter((e) => pattern.test(e));
}

describe('docs cite only tests and benches that exist', () => {
  it('finds the citations it checks, patterns too', () => {
    expect(
      citedPaths('see `test/budget/budget-gate.test.ts` and test/contract*.test.ts, bench/budget.bench.ts.'),
    ).toEqual(['test/budget/budget-gate.test.ts', 'test/contract*.test.ts', 'bench/budget.bench.ts']);
    expect(citedPaths('src/test/x.ts and latest/x.ts are not citations of test/')).toEqual([]);
  });

  it('every cited test/ and bench/ file exists', async () => {
    const missing: string[] = [];
    let cited = 0;
    for (const doc of await docFiles()) {
      const text = await readFile(new URL(doc, root), 'utf8');
      for (const path of citedPaths(text)) {
        cited++;
        if ((await matches(path)).length === 0) missing.push(`${doc}: ${path}`);
      }
    }
    expect(cited).toBeGreaterThan(20); // the docs do cite their tests: a scan that finds none is broken
    expect(missing).toEqual([]);
  });
});
