/** The load report as the CLI prints it: one line per snapshot, one per dataset with its mode and why. */
import type { DatasetLoad, LoadReport } from './load.js';
import type { HistoryLoad } from './history.js';
import { describeShrink } from './shrink.js';
import { counted } from '../counted.js';

export function formatLoadReport(r: LoadReport): string {
  if (r.snapshots.length === 0) return `${r.target}: up to date, nothing to load\n`;
  const lines: string[] = [];
  for (const s of r.snapshots) {
    const acted = s.datasets.filter((d) => d.mode !== 'skip').length;
    lines.push(
      `${r.dryRun ? 'would load' : acted === 0 ? 'already loaded' : 'loaded'} ${s.snapshotId} (${s.snapshotDate}) into ${r.target}`,
    );
    for (const d of s.datasets)
      lines.push(
        `  ${d.dataset.padEnd(16)} ${d.mode.padEnd(7)} ${r.dryRun || d.mode === 'skip' ? '' : `${counted(d.rows, 'row')}; `}${d.reason}${shrinkNote(d, r.dryRun)}${historyNote(d)}`,
      );
  }
  return `${lines.join('\n')}\n`;
}

function historyNote(d: DatasetLoad): string {
  return d.history === undefined ? '' : `; ${describeHistory(d.history)}`;
}

/** What a load did to a dataset's history, and the nights it found missing, in words. */
export function describeHistory(h: HistoryLoad): string {
  if (h.builtFrom === 'skip') return `history left as it was: ${h.reason ?? ''}`;
  const gaps = h.gaps.map((g) => `; history gap: ${g.snapshotId} (${g.why}), versions joined here`);
  return `history: ${counted(h.opened, 'version')} opened, ${h.closed} closed${gaps.join('')}`;
}

/** The companies a dataset's load removes, and in a dry run whether `load` would refuse it. */
function shrinkNote(d: DatasetLoad, dryRun: boolean): string {
  if (d.shrink === undefined) return '';
  const refused = dryRun && d.shrink.refused ? ' (refused without --allow-shrink)' : '';
  return `; ${describeShrink(d.shrink)}${refused}`;
}
