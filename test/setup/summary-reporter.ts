import { writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

/** Where the run's test-file times go when set: what .ci/run's second Node leg is chosen from. */
const TIMES_ENV = 'FILINGS_EXPORT_TEST_TIMES';

// Prints one plain closing line, `vitest: N passed, N failed, N skipped`, that any CI log reader can count.
export default class SummaryReporter implements Reporter {
  #startedAt = Date.now();

  onTestRunStart(): void {
    this.#startedAt = Date.now();
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const mod of testModules) {
      for (const test of mod.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else skipped++;
      }
    }
    process.stdout.write(`\nvitest: ${passed} passed, ${failed} failed, ${skipped} skipped\n`);
    const timesFile = process.env[TIMES_ENV];
    if (timesFile !== undefined && timesFile !== '')
      writeTimes(timesFile, Date.now() - this.#startedAt, testModules);
  }
}

/** The run's wall time and each file's own time (setup, import and tests), in ms, by path from the root. */
function writeTimes(file: string, wallMs: number, testModules: ReadonlyArray<TestModule>): void {
  const files: Record<string, number> = {};
  for (const mod of testModules) {
    const d = mod.diagnostic();
    const ms =
      d.environmentSetupDuration + d.prepareDuration + d.collectDuration + d.setupDuration + d.duration;
    files[relative(process.cwd(), mod.moduleId)] = Math.round(ms);
  }
  writeFileSync(file, `${JSON.stringify({ wallMs, files }, null, 2)}\n`);
}
