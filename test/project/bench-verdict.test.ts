/**
 * `npm run bench`'s exit code and the pipeline bench's reading of curl: a module that throws or a
 * missed target fails the run (misses only advise under --advisory), a curl download counts
 * only when it was whole, and the pipeline and nights benches give a miss's reason in the figures
 * their run measured.
 */
import { describe, expect, it } from 'vitest';
import { parseCurlOutput } from '../../bench/support/curl-output.js';
import { endToEndMissReason, oneCompanyMissReason, type NightCpu } from '../../bench/support/miss-reasons.js';
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

describe("the pipeline and nights benches' reason for a miss", () => {
  it('words the end-to-end miss from the CPU and phases the runs measured', () => {
    const why = endToEndMissReason({
      cpu: [14, 20, 16],
      emulatorCpu: [11, 9, 10],
      staged: [13.2, 14, 13.6],
      published: [15, 16.5, 15.4],
      wall: [15.5, 17, 16],
      curl: 11.2,
      cores: 2,
    });
    expect(why).toContain('the one process used 16.0 CPU s and the emulator serving it 10.0 CPU s');
    expect(why).toContain(
      "on 2 cores the two need at least (16.0 + 10.0) / 2 = 13.0 s against curl's 11.2 s",
    );
    expect(why).toContain('every row was staged at 13.6 s and published at 15.4 s of a 16.0 s run, so 2.4 s');
    // Nothing of an earlier run's figures is left in it.
    expect(why).not.toMatch(/13\.5|12\.2|10-11/);
    // A phase the log did not show is said to be unmeasured, not a number.
    const noLog = endToEndMissReason({
      cpu: [4],
      emulatorCpu: [3],
      staged: [NaN],
      published: [NaN],
      wall: [9],
      curl: 5,
      cores: 4,
    });
    expect(noLog).toContain('(4.0 + 3.0) / 4 = 1.8 s');
    expect(noLog).toContain('staged at n/a s');
  });

  it("words the one-company miss from each night's CPU beyond its quiet neighbours", () => {
    const night = (
      parts: number,
      publish: number,
      emulator: number,
      waits: Record<string, number> = {},
    ): NightCpu => ({
      cpu: { exporter: parts + publish, exporterParts: parts, emulator },
      waits,
    });
    const why = oneCompanyMissReason({
      quiet: night(1, 1, 1),
      rounds: [
        // Quiet nights at 1, 1.2 and 1.4 CPU s of parts: the one-company nights are 0.3, 0.5, 0.7 above them.
        { one: night(1.4, 1.5, 1.2, { pace: 2 }), quiet: night(1.2, 1, 1) },
        { one: night(1.8, 1.4, 1.25), quiet: night(1.4, 1, 1) },
        { one: night(2.3, 1.6, 1.3, { pace: 1, window: 3 }), quiet: night(1.8, 1, 1) },
      ],
      download: 0.42,
      cores: 2,
    });
    expect(why).toContain('medians over 3 rounds');
    expect(why).toContain(
      "the company's fetch and staging 0.50 CPU s of the exporter, its publish 0.50 CPU s",
    );
    expect(why).toContain(
      "the emulator serving it 0.25 CPU s (what curl's 0.42 s download measures), on 2 cores",
    );
    expect(why).toContain('waited for the budget gate: pace 3, window 3');
  });
});
