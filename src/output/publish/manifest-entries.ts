/**
 * The manifest of a published snapshot, from what publishing wrote: one entry per dataset, the
 * parts, the quota waits and the writer's version (docs/output.md describes its fields).
 */
import { createRequire } from 'node:module';
import { InputError } from '../../errors.js';
import { packagePath } from '../../package-root.js';
import { DATASETS, type Clock, type OutputFormat, type PartPointer, type PartStatus } from '../../types.js';
import type { DatasetSchema } from '../../datasets/index.js';
import {
  MANIFEST_VERSION,
  toPosix,
  type Manifest,
  type ManifestDataset,
  type ManifestFile,
  type ManifestPart,
  type QuotaWaitSummary,
} from '../catalog/index.js';
import type { PublishOptions, SnapshotStats } from './publish-options.js';
const WRITER_VERSION = readWriterVersion();

function readWriterVersion(): { name: string; version: string; engine: string } {
  const require = createRequire(import.meta.url);
  let version = 'unknown';
  let engine = 'duckdb';
  try {
    version = (require(packagePath('package.json')) as { version: string }).version;
  } catch {
    // an unreadable package.json: keep "unknown"
  }
  try {
    engine = `duckdb ${(require('@duckdb/node-api/package.json') as { version: string }).version}`;
  } catch {
    // resolution blocked by exports: keep the bare name
  }
  return { name: 'filings-export', version, engine };
}

function iso(value: string | number | Date | undefined, what: string): string | null {
  if (value === undefined) return null;
  const d = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(d.getTime()))
    throw new InputError(`stats.${what} ${JSON.stringify(value)} is not a timestamp`);
  return d.toISOString();
}

export function datasetEntry(
  schema: DatasetSchema,
  rel: string,
  rows: number,
  built: readonly { bytes: number; format: OutputFormat }[],
  extra: ReadonlyMap<string, number>,
  parts: readonly PartPointer[],
): ManifestDataset {
  const counts: Record<PartStatus, number> = { pending: 0, done: 0, not_found: 0, bad_request: 0, failed: 0 };
  for (const p of parts) counts[p.status]++;
  return {
    schema_version: schema.version,
    schema_inferred: schema.inferred,
    columns: schema.columns.map((c) => ({ name: c.name, type: c.type, role: c.role })),
    path: toPosix(rel),
    rows,
    files: built.length,
    bytes: built.reduce((s, f) => s + f.bytes, 0),
    extra_fields: [...extra.keys()],
    parts: counts,
  };
}

function quotaSummary(stats: SnapshotStats | undefined): QuotaWaitSummary {
  const waits = Array.isArray(stats?.waits) ? [...stats.waits] : [];
  let total: number | null = null;
  const w = stats?.waitedForQuota;
  if (typeof w === 'object' && w !== null) {
    if (typeof w.ms === 'number') total = w.ms;
    waits.push(w);
  }
  if (total === null && waits.length > 0) {
    let sum = 0;
    let known = false;
    for (const x of waits) {
      const since = Date.parse(String((x as { since?: unknown }).since ?? ''));
      const until = Date.parse(String((x as { until?: unknown }).until ?? ''));
      if (Number.isFinite(since) && Number.isFinite(until) && until >= since) {
        sum += until - since;
        known = true;
      }
    }
    if (known) total = sum;
  }
  return { waited: waits.length > 0 || w === true, total_ms: total, waits };
}

export function buildManifest(
  o: PublishOptions,
  formats: OutputFormat[],
  datasets: Manifest['datasets'],
  files: ManifestFile[],
  warnings: string[],
  schemaChanges: Manifest['schema_changes'],
  clock: Clock,
): Manifest {
  const now = new Date(clock.now()).toISOString();
  const startedAt = iso(o.stats?.startedAt, 'startedAt');
  const finishedAt = iso(o.stats?.finishedAt, 'finishedAt') ?? now;
  const parts: ManifestPart[] = [...o.parts]
    .sort((a, b) =>
      a.dataset === b.dataset
        ? a.ticker < b.ticker
          ? -1
          : 1
        : DATASETS.indexOf(a.dataset) - DATASETS.indexOf(b.dataset),
    )
    .map((p) => ({
      dataset: p.dataset,
      ticker: p.ticker,
      status: p.status,
      rows: p.status === 'done' ? p.rows : 0,
      ...(p.message === undefined ? {} : { message: p.message }),
      ...(p.fingerprint === undefined ? {} : { fingerprint: p.fingerprint }),
      ...(p.reusedFrom === undefined ? {} : { reused: true, reused_from: p.reusedFrom }),
    }));
  const reusedParts = o.parts.filter((p) => p.reusedFrom !== undefined).length;
  const rows = Object.values(datasets).reduce((s, d) => s + (d?.rows ?? 0), 0);
  return {
    manifest_version: MANIFEST_VERSION,
    snapshot_id: o.snapshotId,
    snapshot_date: o.snapshotDate,
    status: 'published',
    complete: o.parts.every((p) => p.status === 'done' || p.status === 'not_found'),
    published_at: now,
    formats,
    layout: '<dataset>/snapshot_date=<YYYY-MM-DD>/snapshot_id=<snapshot_id>/part-<NNNNN>.(parquet|ndjson.gz)',
    datasets,
    files,
    parts,
    totals: {
      rows,
      files: files.length,
      bytes: files.reduce((s, f) => s + f.bytes, 0),
      requests: o.stats?.requests ?? null,
      rate_limited_429: o.stats?.rateLimited429 ?? null,
      retries: o.stats?.retries ?? null,
      started_at: startedAt,
      finished_at: finishedAt,
      wall_time_ms: startedAt === null ? null : Math.max(0, Date.parse(finishedAt) - Date.parse(startedAt)),
    },
    quota_wait: quotaSummary(o.stats),
    warnings,
    schema_changes: schemaChanges,
    writer: WRITER_VERSION,
    incremental: {
      reused_from: reusedParts > 0 ? (o.incremental?.reusedFrom ?? null) : null,
      full_refresh_date:
        reusedParts > 0 ? (o.incremental?.fullRefreshDate ?? o.snapshotDate) : o.snapshotDate,
      reused_parts: reusedParts,
      fetched_parts: o.parts.length - reusedParts,
    },
  };
}

/** The settings every dataset of the snapshot is published with. */
