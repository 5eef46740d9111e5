/**
 * Retention (`filings-export prune`) over any output root: which whole snapshots to remove, and
 * removing them so that a reader never sees a published snapshot with missing files.
 *
 * Rules (docs/output.md, Retention). Prune removes only what it can prove may go:
 * - A snapshot with `_SUCCESS` is published, whatever its manifest says. One whose manifest is
 *   missing or cannot be used is kept and reported with the cause, and does not count towards `keep`;
 *   so is an unpublished one whose manifest cannot be used.
 * - Published snapshots, newest first in publish order (catalog/publish-order.ts; the label date
 *   never decides): the first `keep` stay;
 *   the rest go, and with `olderThanMs` only those published longer ago than that. `keep` >= 1, so
 *   the newest published snapshot (the one `latest` names) always stays.
 * - Staging left behind by a published snapshot is garbage and goes.
 * - An unpublished snapshot goes only when the pipeline says nothing can finish it: its record is
 *   gone (expired) and nothing of it changed for `abandonedAfterMs`, or it failed/stopped and was
 *   last touched longer ago than `olderThanMs`. One the pipeline runs (or may still retry) stays,
 *   and so does every unpublished one when the pipeline state is unknown (Redis unreachable).
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { InputError, StorageError } from '../../errors.js';
import {
  inPublishOrder,
  stampOf,
  SNAPSHOTS_DIR,
  STAGING_DIR,
  SUCCESS_FILE,
  listStoredSnapshots,
  type Manifest,
  type StoredSnapshot,
} from '../catalog/index.js';
import { expireBeforePrune, type TableExpiry } from '../iceberg/index.js';
import type { ReadRetryOptions, Storage, StoredObject } from '../storage/index.js';
import { counted } from '../../counted.js';

/** What the pipeline knows of a snapshot that is not published. */
export type PipelineState =
  /** enqueuing or running: never touched. */
  | { kind: 'active' }
  /** failed or stopped: `--retry` may still resume it. */
  | { kind: 'retryable'; updatedAtMs: number }
  /** published according to the pipeline (its staging is garbage). */
  | { kind: 'published' }
  /** no record: expired, or never known to this Redis prefix. */
  | { kind: 'unknown' };

export interface PruneOptions {
  /** Published snapshots kept, newest first. At least 1. */
  keep: number;
  /** Remove only snapshots older than this (published, or last touched). @defaultValue no age limit */
  olderThanMs?: number;
  /**
   * An unpublished snapshot without a pipeline record is abandoned when none of its objects changed
   * for this long. @defaultValue 24 hours
   */
  abandonedAfterMs?: number;
  now: number;
  /** The pipeline's view of each unpublished snapshot; null when it could not be asked. */
  pipelineState: ReadonlyMap<string, PipelineState> | null;
}

export type PruneWhat = 'snapshot' | 'staging';

export interface PruneAction {
  snapshotId: string;
  /** `snapshot`: every object of it; `staging`: only `_staging/<id>/`. */
  what: PruneWhat;
  reason: string;
  objects: StoredObject[];
  bytes: number;
}

export interface PruneKept {
  snapshotId: string;
  published: boolean;
  reason: string;
}

export interface PrunePlan {
  remove: PruneAction[];
  kept: PruneKept[];
  /** The manifests of the published snapshots kept, oldest first: what the Iceberg tables keep. */
  keptManifests: Manifest[];
}

const DAY_MS = 86_400_000;
export const DEFAULT_ABANDONED_AFTER_MS = DAY_MS;

function age(ms: number): string {
  const days = ms / DAY_MS;
  return days >= 1 ? `${days.toFixed(1)} days` : `${(ms / 3_600_000).toFixed(1)} hours`;
}

function action(s: StoredSnapshot, what: PruneWhat, reason: string): PruneAction {
  const objects = what === 'staging' ? s.staging : [...s.meta, ...s.data, ...s.staging];
  return { snapshotId: s.snapshotId, what, reason, objects, bytes: objects.reduce((n, o) => n + o.bytes, 0) };
}

/** Why a snapshot's state cannot be read, so it stays whatever else holds; undefined when it can. */
function unreadableReason(s: StoredSnapshot): string | undefined {
  if (s.published && s.manifest === null)
    return `published (its _SUCCESS exists) but ${s.unreadable ?? 'it has no manifest'}: kept until that is fixed`;
  if (s.unreadable !== undefined) return `not published and ${s.unreadable}: kept until that is fixed`;
  return undefined;
}

/**
 * The snapshots prune plans over. A storage read that keeps failing (after `retry`) stops prune
 * before anything is removed, with one line naming what could not be read and why.
 */
export async function listForPrune(storage: Storage, retry?: ReadRetryOptions): Promise<StoredSnapshot[]> {
  try {
    return await listStoredSnapshots(storage, retry);
  } catch (err: unknown) {
    if (!(err instanceof StorageError)) throw err;
    const code = err.code === 'STORAGE_NOT_FOUND' ? 'STORAGE_NOT_FOUND' : 'STORAGE_UNAVAILABLE';
    throw new StorageError(code, `prune stopped, nothing removed: ${err.message}`, err.retryable, {
      cause: err,
    });
  }
}

/** Decides what to remove; reads nothing. */
export function planPrune(snapshots: readonly StoredSnapshot[], opts: PruneOptions): PrunePlan {
  if (!Number.isInteger(opts.keep) || opts.keep < 1)
    throw new InputError(
      `--keep must be a whole number of at least 1 (the newest published snapshot always stays), got ${opts.keep}`,
    );
  const plan: PrunePlan = { remove: [], kept: [], keptManifests: [] };
  for (const s of snapshots) {
    const reason = unreadableReason(s);
    if (reason !== undefined) plan.kept.push({ snapshotId: s.snapshotId, published: s.published, reason });
  }
  const published = inPublishOrder(
    snapshots.filter((s) => s.published && s.manifest !== null),
    stampOf,
  ).reverse();
  published.forEach((s, i) => planPublished(plan, s, i, opts));
  const going = new Set(plan.remove.filter((a) => a.what === 'snapshot').map((a) => a.snapshotId));
  plan.keptManifests = published.flatMap((s) => (going.has(s.snapshotId) ? [] : [s.manifest!])).reverse();
  for (const s of snapshots) {
    if (s.published || s.unreadable !== undefined) continue;
    planUnpublished(plan, s, opts);
  }
  return plan;
}

/** A published snapshot, `i`-th newest: kept among the newest or younger than the limit, else removed. */
function planPublished(plan: PrunePlan, s: StoredSnapshot, i: number, opts: PruneOptions): void {
  const publishedMs = Date.parse(s.manifest?.published_at ?? '');
  const ageMs = opts.now - publishedMs;
  if (i < opts.keep) {
    plan.kept.push({
      snapshotId: s.snapshotId,
      published: true,
      reason: i === 0 ? 'newest published' : `among the newest ${opts.keep}`,
    });
    if (s.staging.length > 0) plan.remove.push(action(s, 'staging', 'staging left by a published snapshot'));
  } else if (opts.olderThanMs !== undefined && !(ageMs > opts.olderThanMs)) {
    plan.kept.push({
      snapshotId: s.snapshotId,
      published: true,
      reason: `published ${age(Math.max(0, ageMs))} ago, not older than the limit`,
    });
    if (s.staging.length > 0) plan.remove.push(action(s, 'staging', 'staging left by a published snapshot'));
  } else {
    plan.remove.push(
      action(
        s,
        'snapshot',
        `published, beyond the newest ${opts.keep}${Number.isNaN(ageMs) ? '' : ` (published ${age(ageMs)} ago)`}`,
      ),
    );
  }
}

/** A readable snapshot never published: what the pipeline says of it decides, else how long it sat idle. */
function planUnpublished(plan: PrunePlan, s: StoredSnapshot, opts: PruneOptions): void {
  const abandonedAfter = opts.abandonedAfterMs ?? DEFAULT_ABANDONED_AFTER_MS;
  const keep = (reason: string): void =>
    void plan.kept.push({ snapshotId: s.snapshotId, published: false, reason });
  if (opts.pipelineState === null) {
    keep('not published, and the pipeline could not be asked whether it is in progress');
    return;
  }
  const state = opts.pipelineState.get(s.snapshotId) ?? { kind: 'unknown' };
  const objects = [...s.meta, ...s.data, ...s.staging];
  const idleMs = opts.now - Math.max(0, ...objects.map((o) => o.modifiedMs ?? opts.now));
  switch (state.kind) {
    case 'active':
      keep('in progress');
      break;
    case 'published':
      // The record says published but the root has no _SUCCESS: a reader must not lose it unseen.
      keep('published according to the pipeline, but its _SUCCESS is not under this root');
      break;
    case 'retryable': {
      const since = opts.now - state.updatedAtMs;
      if (opts.olderThanMs !== undefined && since > opts.olderThanMs)
        plan.remove.push(action(s, 'snapshot', `failed or stopped ${age(since)} ago, never published`));
      else keep(`failed or stopped ${age(Math.max(0, since))} ago: --retry can still resume it`);
      break;
    }
    case 'unknown':
      if (idleMs > abandonedAfter && (opts.olderThanMs === undefined || idleMs > opts.olderThanMs))
        plan.remove.push(
          action(s, 'snapshot', `abandoned: no pipeline record, untouched for ${age(idleMs)}`),
        );
      else keep(`not published, no pipeline record, touched ${age(Math.max(0, idleMs))} ago`);
      break;
    default: {
      const never: never = state;
      throw new Error(`unknown pipeline state ${JSON.stringify(never)}`);
    }
  }
}

/**
 * Removes what the plan says. First the Iceberg tables (when the root has any) get a version without
 * the snapshots to go, and lose every older version, so no metadata a reader can open names a file
 * about to be deleted (docs/iceberg.md, Prune). Then one snapshot at a time: `_SUCCESS` first (a
 * half-removed snapshot is then unpublished, never published with files missing), then data and
 * staging, the manifest last (so an interrupted prune can be run again). A local root also loses
 * the snapshot's own folders. Returns what the tables expired.
 */
export async function applyPrune(storage: Storage, plan: PrunePlan): Promise<TableExpiry[]> {
  const going = plan.remove.filter((a) => a.what === 'snapshot').map((a) => a.snapshotId);
  const expired = await expireBeforePrune(storage, going, plan.keptManifests);
  for (const a of plan.remove) {
    const keys = a.objects.map((o) => o.key);
    const success = `${SNAPSHOTS_DIR}/${a.snapshotId}/${SUCCESS_FILE}`;
    const metaPrefix = `${SNAPSHOTS_DIR}/${a.snapshotId}/`;
    if (keys.includes(success)) await storage.delete([success]);
    await storage.delete(keys.filter((k) => !k.startsWith(metaPrefix)));
    await storage.delete(keys.filter((k) => k.startsWith(metaPrefix) && k !== success));
    if (storage.kind === 'local') {
      const dirs = new Set<string>([`${STAGING_DIR}/${a.snapshotId}`]);
      if (a.what === 'snapshot') {
        dirs.add(`${SNAPSHOTS_DIR}/${a.snapshotId}`);
        for (const k of keys) {
          const m = /^([^/]+\/snapshot_date=[^/]+\/snapshot_id=[^/]+)\//.exec(k);
          if (m?.[1] !== undefined) dirs.add(m[1]);
        }
      }
      // These folders hold only this snapshot's files (and perhaps a writer's leftover temp file).
      for (const d of dirs) await rm(join(storage.root, ...d.split('/')), { recursive: true, force: true });
    }
  }
  return expired;
}

/** One line per removal and per kept snapshot, for people. */
export function formatPrunePlan(
  plan: PrunePlan,
  root: string,
  dryRun: boolean,
  expired: readonly TableExpiry[] = [],
): string {
  const verb = dryRun ? 'would remove' : 'removed';
  const lines = [`${root}:`];
  for (const e of expired)
    lines.push(
      `  expired ${e.expired.join(', ')} from the ${e.dataset} Iceberg table (now v${e.version}.metadata.json)`,
    );
  for (const a of plan.remove)
    lines.push(
      `  ${verb} ${a.what === 'staging' ? 'staging of ' : ''}${a.snapshotId}: ${counted(a.objects.length, 'object')}, ${counted(a.bytes, 'byte', 'bytes', a.bytes.toLocaleString('en-US'))} (${a.reason})`,
    );
  for (const k of plan.kept) lines.push(`  kept ${k.snapshotId}: ${k.reason}`);
  if (plan.remove.length === 0) lines.push('  nothing to remove');
  const bytes = plan.remove.reduce((n, a) => n + a.bytes, 0);
  lines.push(
    `${plan.remove.length} ${dryRun ? 'would be removed' : 'removed'}, ${counted(bytes, 'byte', 'bytes', bytes.toLocaleString('en-US'))}; ${plan.kept.length} kept`,
  );
  return lines.join('\n');
}
