/** The median of a sample (the mean of the two middle values when it has an even count). */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] ?? NaN) : ((s[mid - 1] ?? NaN) + (s[mid] ?? NaN)) / 2;
}

/**
 * Each trial minus the mean of the baselines either side of it: trial i ran between baselines i and
 * i + 1, so `baselines` has one more value than `trials`. Against a drifting baseline (a process
 * warming up, load coming and going) a trial is compared with its neighbours, not with the whole run.
 */
export function bracketedDifferences(baselines: readonly number[], trials: readonly number[]): number[] {
  if (baselines.length !== trials.length + 1)
    throw new Error(`${trials.length} trials need ${trials.length + 1} baselines, got ${baselines.length}`);
  return trials.map((t, i) => t - ((baselines[i] ?? NaN) + (baselines[i + 1] ?? NaN)) / 2);
}
