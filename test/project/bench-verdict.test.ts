/**
 * `npm run bench`'s exit code and the pipeline bench's reading of curl: a module that throws or a
 * missed target fails the run (misses only advise under --advisory), and a curl download counts
 * only when it was whole.
 */
import { describe, expect, it } from 'vitest';
import { parseCurlOutput } from '../../bench/support/curl-output.js';
import type { BenchResult } from '../../bench/support/types.js';
import { bracketedDifferences, median } from '../../bench/support/stats.js';
import { benchVerdict, parseBenchArgs } from '../../bench/support/verdict.js';

const met: BenchResult = { group: 'g', name: 'fast', value: 10, unit: 'ms', target: '< 20 ms', ok: true };
const untargeted: BenchResult = { group: 'g', name: 'info', value: 3, unit: 'count' };
const missed: BenchResult = { group: 'g', name: 'slow', value: 30, unit: 'ms', target: '< 20 ms', ok: false };
const unmeasured: BenchResult = { group: 'g', name: 'gone', value: NaN, unit: 'ms', target: '< 20 ms' };

describe('bench verdict', () => {
  it('exits 0 when every target is met and no module threw', () => {
    expect(benchVerdict([met, untargeted], [], { advisory: false })).toEqual({ exitCode: 0, problems: [] });
  });

  it('exits 1 on a missed target, or a target with nothing measured; --advisory only reports them', () => {
    const strict = benchVerdict([met, missed, unmeasured], [], { advisory: false });
    expect(strict.exitCode).toBe(1);
    expect(strict.problems).toEqual([
      'bench: MISSED: g / slow: 30 ms, target < 20 ms',
      'bench: MISSED: g / gone: n/a ms, target < 20 ms',
    ]);
    const advisory = benchVerdict([met, missed], [], { advisory: true });
    expect(advisory).toEqual({
      exitCode: 0,
      problems: ['bench: missed (advisory): g / slow: 30 ms, target < 20 ms'],
    });
  });

  it('prints the known reason of a miss after it, and only after a miss', () => {
    const why = 'two cores shared with the emulator (docs/decisions.md)';
    const v = benchVerdict(
      [
        { ...met, whenMissed: why },
        { ...missed, whenMissed: why },
      ],
      [],
      { advisory: true },
    );
    expect(v.problems).toEqual([`bench: missed (advisory): g / slow: 30 ms, target < 20 ms. Why: ${why}`]);
  });

  it('exits 1 when a module threw, even under --advisory', () => {
    const v = benchVerdict([met], [{ file: 'x.bench.ts', error: 'Error: boom' }], { advisory: true });
    expect(v).toEqual({ exitCode: 1, problems: ['bench: x.bench.ts failed: Error: boom'] });
  });

  it('reads --advisory and module names, and refuses an unknown option', () => {
    expect(parseBenchArgs(['search', '--advisory'])).toEqual({ advisory: true, only: ['search'] });
    expect(parseBenchArgs([])).toEqual({ advisory: false, only: [] });
    expect(() => parseBenchArgs(['--advisry'])).toThrow(
      'bench: unknown option --advisry (known: --advisory)',
    );
  });
});

describe("the pipeline bench's curl line", () => {
  it('takes a whole 200 download, with or without Content-Length', () => {
    expect(parseCurlOutput('1.250 1048576 200 1048576')).toEqual({ seconds: 1.25, bytes: 1_048_576 });
    expect(parseCurlOutput('1.250 1048576 200 \n')).toEqual({ seconds: 1.25, bytes: 1_048_576 });
  });

  it('refuses another status, an empty body, or fewer bytes than announced', () => {
    expect(() => parseCurlOutput('0.010 57 500 57')).toThrow('curl: HTTP status 500, not 200');
    expect(() => parseCurlOutput('0.010 0 000 ')).toThrow('curl: HTTP status 000, not 200');
    expect(() => parseCurlOutput('0.010 0 200 0')).toThrow('curl: no body downloaded');
    expect(() => parseCurlOutput('0.500 524288 200 1048576')).toThrow(
      'curl: 524288 bytes downloaded, Content-Length 1048576',
    );
  });
});

describe("the nights bench's one-company estimate", () => {
  it('compares each trial with the baselines either side of it, so a drifting baseline cancels out', () => {
    // Baselines fall by 1 s per step (a process warming up); each trial costs 0.5 s above its time.
    const baselines = [10, 9, 8, 7];
    const trials = [9.5 + 0.5, 8.5 + 0.5, 7.5 + 0.5];
    expect(bracketedDifferences(baselines, trials)).toEqual([0.5, 0.5, 0.5]);
    // Against the median of every baseline (8.5) the same trials would read 1.5, 0.5 and -0.5.
    expect(median(trials) - median(baselines)).toBe(0.5);
    expect(trials.map((t) => t - median(baselines))).toEqual([1.5, 0.5, -0.5]);
  });

  it('needs one baseline more than trials', () => {
    expect(() => bracketedDifferences([1, 2], [1, 2])).toThrow('2 trials need 3 baselines, got 2');
  });
});
