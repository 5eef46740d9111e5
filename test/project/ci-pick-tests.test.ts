import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script without types
import { ALWAYS, pickTests } from '../../scripts/lib/pick-tests.mjs';

type Pick = (
  times: { wallMs: number; files: Record<string, number> },
  opts: { seconds: number; slower: number; seed: string },
) => { all: boolean; picked: string[]; left: string[] };
const pick = pickTests as Pick;

// Ten files of 10 s each ran side by side in 50 s of wall time: each is worth 5 s of wall.
const files = Object.fromEntries(
  ['test/package/package.test.ts', ...Array.from({ length: 9 }, (_, i) => `test/area/t${i}.test.ts`)].map(
    (f) => [f, 10_000],
  ),
);
const times = { wallMs: 50_000, files };

describe('the second CI leg picks the test files that fit', () => {
  it('runs the whole suite when it fits at this Node pace', () => {
    expect(pick(times, { seconds: 100, slower: 2, seed: 'a' })).toEqual({
      all: true,
      picked: Object.keys(files).sort(),
      left: [],
    });
    expect(pick(times, { seconds: 99, slower: 2, seed: 'a' }).all).toBe(false);
  });

  it('puts the installed package first and stops at the budget', () => {
    const r = pick(times, { seconds: 30, slower: 2, seed: 'a' }); // 10 s of wall per file here
    expect(r.picked[0]).toBe('test/package/package.test.ts');
    expect(r.picked).toHaveLength(3);
    expect([...r.picked, ...r.left].sort()).toEqual(Object.keys(files).sort());
  });

  it('keeps the package tests with no time left', () => {
    const r = pick(times, { seconds: 0, slower: 1, seed: 'a' });
    expect(r.picked.every((f) => (ALWAYS as string[]).some((p) => f.startsWith(p)))).toBe(true);
    expect(r.picked).toHaveLength(1);
  });

  it('rotates with the commit, so every file runs on some commit', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 40; i++)
      for (const f of pick(times, { seconds: 20, slower: 1, seed: `c${i}` }).picked) seen.add(f);
    expect([...seen].sort()).toEqual(Object.keys(files).sort());
  });
});
