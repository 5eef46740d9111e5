/**
 * Deterministic ids. A snapshot id names the snapshot everywhere (BullMQ job ids, Redis records,
 * output folders), so enqueueing the same snapshot twice is a no-op. BullMQ forbids ':' in custom
 * job ids and ids that are all digits; the pattern below excludes both.
 */
import { createHash } from 'node:crypto';
import { InputError } from '../../errors.js';
import type { DatasetName } from '../../types.js';

export const SNAPSHOT_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

/** Checks a user-given snapshot id; `where` names its origin (e.g. `--snapshot-id`). */
export function checkSnapshotId(id: string, where: string): string {
  if (!SNAPSHOT_ID_PATTERN.test(id) || /^\d+$/.test(id))
    throw new InputError(
      `${where}: ${JSON.stringify(id)} is not a valid snapshot id: 1-100 letters, digits, ".", "_" or "-", starting with a letter or digit, not all digits (no ":")`,
    );
  return id;
}

/** The calendar date (YYYY-MM-DD) of an instant in a time zone. */
export function localDate(epochMs: number, timeZone: string): string {
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  }).formatToParts(new Date(epochMs));
  const get = (t: string): string => parts.find((p) => p.type === t)?.value ?? '';
  return `${get('year')}-${get('month')}-${get('day')}`;
}

/** `nightly-2026-11-21`: one nightly snapshot per local calendar date. */
export function nightlySnapshotId(date: string): string {
  return `nightly-${date}`;
}

/** What identifies an ad hoc request: the same request on the same date is the same snapshot. */
export interface AdhocRequest {
  companies: readonly string[];
  datasets: readonly DatasetName[];
  formats: readonly string[];
  outDir: string;
}

/** `adhoc-2026-11-21-3f2a9c01be`: date plus a hash of the (order-insensitive) request. */
export function adhocSnapshotId(date: string, req: AdhocRequest): string {
  const canonical = JSON.stringify({
    companies: [...req.companies].sort(),
    datasets: [...req.datasets].sort(),
    formats: [...req.formats].sort(),
    outDir: req.outDir,
  });
  const hash = createHash('sha256').update(canonical).digest('hex').slice(0, 10);
  return `adhoc-${date}-${hash}`;
}

/** Job id of the snapshot's parent (publish) job. */
export function publishJobId(snapshotId: string): string {
  return snapshotId;
}

/** Job id of one part: `<snapshot>.<dataset>.<company key>`. */
export function partJobId(snapshotId: string, dataset: DatasetName, companyKey: string): string {
  return `${snapshotId}.${dataset}.${companyKey}`;
}

/** The (dataset, company) of a part from its job id or full job key (`prefix:queue:id`). */
export function parsePartJobId(
  snapshotId: string,
  jobIdOrKey: string,
): { dataset: string; companyKey: string } | undefined {
  const id = jobIdOrKey.includes(':') ? jobIdOrKey.slice(jobIdOrKey.lastIndexOf(':') + 1) : jobIdOrKey;
  if (!id.startsWith(`${snapshotId}.`)) return undefined;
  const rest = id.slice(snapshotId.length + 1);
  const dot = rest.indexOf('.');
  if (dot <= 0) return undefined;
  return { dataset: rest.slice(0, dot), companyKey: rest.slice(dot + 1) };
}
