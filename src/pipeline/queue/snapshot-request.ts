/** Turns a run request (config + flags) into the SnapshotSpec that names and defines a snapshot. */
import type { DatasetName, OutputFormat } from '../../types.js';
import { adhocSnapshotId, checkSnapshotId, localDate } from './ids.js';
import { companyKey, type Company, type SnapshotSpec } from '../record/index.js';

export interface RunRequest {
  companies: Company[];
  datasets: DatasetName[];
  formats: OutputFormat[];
  /** Absolute output root. */
  outDir: string;
  /** A user-given id (`--snapshot-id`); otherwise `adhoc-<date>-<hash of the request>`. */
  snapshotId?: string;
  /** Epoch ms of the request. */
  now: number;
  /** Time zone of the snapshot date (the schedule's). */
  timeZone: string;
}

export function buildSnapshotSpec(r: RunRequest): SnapshotSpec {
  const date = localDate(r.now, r.timeZone);
  const datasets = [...new Set(r.datasets)];
  const formats = [...new Set(r.formats)];
  const id =
    r.snapshotId !== undefined
      ? checkSnapshotId(r.snapshotId, '--snapshot-id')
      : adhocSnapshotId(date, {
          companies: r.companies.map(companyKey),
          datasets,
          formats,
          outDir: r.outDir,
        });
  return {
    id,
    date,
    trigger: r.snapshotId !== undefined ? 'manual' : 'adhoc',
    companies: r.companies,
    datasets,
    formats,
    outDir: r.outDir,
  };
}
