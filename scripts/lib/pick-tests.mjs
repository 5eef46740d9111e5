/**
 * Which test files the second CI leg (the machine's Node) runs when the whole suite does not fit
 * in what is left of CI's budget: the whole suite has run on Node 24 first, so this leg is a
 * second Node's check, sized by the first leg's measured times. Files that test the installed
 * package come first (the Node-specific ones); the rest rotate with the commit, so successive
 * commits cover every file on the machine's Node.
 */
import { createHash } from 'node:crypto';

/** Test files run on the machine's Node whatever the budget. */
export const ALWAYS = ['test/package/'];

/**
 * @param {{ wallMs: number, files: Record<string, number> }} times the Node 24 leg's run
 * @param {{ seconds: number, slower: number, seed: string }} opts seconds left for this leg's
 *   tests, how much slower this Node ran the suite than Node 24, and the rotation's seed (the commit)
 * @returns {{ all: boolean, picked: string[], left: string[] }} picked in run order; `all` when every file fits
 */
export function pickTests(times, opts) {
  const files = Object.keys(times.files).sort();
  const total = files.reduce((s, f) => s + (times.files[f] ?? 0), 0);
  // One file's share of the wall time: vitest runs files side by side, so the wall is not the sum.
  const wallOf = (ms) => (total === 0 ? 0 : (ms / total) * times.wallMs * opts.slower);
  if (wallOf(total) <= opts.seconds * 1000) return { all: true, picked: files, left: [] };
  const first = files.filter((f) => ALWAYS.some((p) => f.startsWith(p)));
  const rest = files.filter((f) => !first.includes(f));
  const start =
    rest.length === 0
      ? 0
      : parseInt(createHash('sha256').update(opts.seed).digest('hex').slice(0, 8), 16) % rest.length;
  const rotated = [...rest.slice(start), ...rest.slice(0, start)];
  const picked = [];
  let used = 0;
  for (const f of [...first, ...rotated]) {
    const ms = wallOf(times.files[f] ?? 0);
    if (!first.includes(f) && used + ms > opts.seconds * 1000) continue;
    picked.push(f);
    used += ms;
  }
  return { all: false, picked, left: files.filter((f) => !picked.includes(f)) };
}
