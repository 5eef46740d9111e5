/**
 * Job `publish-snapshot`: the parent of a snapshot's flow. It runs once every part has finished:
 * completed parts report pointers, parts that failed for good are "ignored dependencies"
 * (ignoreDependencyOnFailure), so the parent never waits for ever. It publishes only a complete
 * snapshot: every part done, not_found or bad_request. A snapshot with failed parts, or one
 * stopped by a 401/403, ends as failed/stopped and is not published (no manifest, no _SUCCESS).
 * Companies the API did not know are recorded by name; when it knew none of them, the snapshot
 * ends failed too: its empty tables would otherwise become `latest` and empty a warehouse.
 */
import { UnrecoverableError, type Job } from 'bullmq';
import { OutputError, coerceError, errorCode, isRetryable } from '../src/errors.js';
import {
  defineJob,
  icebergAfterPublish,
  LOAD_SNAPSHOT,
  missingCompanies,
  noneFoundMessage,
  parsePartJobId,
  PUBLISH_SNAPSHOT,
  type JobHelpers,
  type PublishSnapshotPayload,
} from '../src/pipeline/index.js';
import type { Logger } from '../src/log.js';
import { isDatasetName, type PartPointer } from '../src/types.js';
import { counted } from '../src/counted.js';

export interface PublishSnapshotResult {
  snapshotId: string;
  status: 'published' | 'failed' | 'stopped';
  manifest: string | null;
  rows: Record<string, number>;
}

export type { PublishSnapshotPayload };

/** Days the per-part hash of a published snapshot is kept (the manifest has it all). */
const PARTS_TTL_AFTER_PUBLISH_S = 7 * 86_400;

/** The parent of every snapshot flow (src/pipeline/queue/flow.ts); runs in the control worker. */
export const publishSnapshotJob = defineJob({
  type: PUBLISH_SNAPSHOT,
  run: publishSnapshot,
  onFailed: recordFailedPublish,
});

/**
 * A publish job that died without its processor noticing (stalled too often, a crash mid-write)
 * must not leave the snapshot "running" for ever.
 */
function recordFailedPublish(job: Job, err: Error, helpers: JobHelpers): void {
  if (!job.finishedOn) return;
  const id =
    typeof job.data === 'object' && job.data ? (job.data as { snapshotId?: unknown }).snapshotId : undefined;
  if (typeof id !== 'string') return;
  void helpers.record
    .transition(id, ['running'], 'failed', { message: `publishing failed: ${err.message}`, finished: true })
    .catch((e: unknown) =>
      helpers.logger.error({ err: coerceError(e) }, 'could not record a failed publish'),
    );
}

/** Publishes a complete snapshot; refuses (records failed, ends for good) one that is not. */
async function publishSnapshot(
  payload: PublishSnapshotPayload,
  helpers: JobHelpers,
  job: Job,
): Promise<PublishSnapshotResult> {
  const { record } = helpers;
  const log = helpers.logger.child({ snapshot: payload.snapshotId });
  const rec = await record.get(payload.snapshotId);
  if (!rec)
    throw new UnrecoverableError(
      `snapshot ${payload.snapshotId} has no record in Redis (expired or removed)`,
    );
  const parts = await collectParts(record, job, payload);
  await refuseIncomplete(record, log, payload, rec, parts);
  await refuseNoneFound(record, log, payload, rec, parts);
  let result: PublishSnapshotResult;
  try {
    result = await publishVerified(helpers, log, payload, rec, parts);
  } catch (err: unknown) {
    const e = coerceError(err);
    const attempts = job.opts.attempts ?? 1;
    if (e instanceof UnrecoverableError || job.attemptsMade + 1 >= attempts) {
      const message = `publishing failed: ${errorCode(e)}: ${e.message}`;
      await record.transition(payload.snapshotId, ['running'], 'failed', { message, finished: true });
      log.error({ reason: e.message }, message);
      throw new UnrecoverableError(message);
    }
    log.warn({ reason: e.message }, 'publishing failed; will retry');
    throw e;
  }
  await commitTables(helpers, log, payload, job);
  return result;
}

/**
 * After `_SUCCESS`: the snapshot's Iceberg commit (output.iceberg), older nights a failed or cut
 * short commit left behind first. A failure never unpublishes the snapshot: its record says
 * pending, and the job is retried while attempts remain (publishing again finds the snapshot
 * published and only commits); after the last, the next snapshot's commit takes it first.
 */
async function commitTables(
  helpers: JobHelpers,
  log: Logger,
  p: PublishSnapshotPayload,
  job: Job,
): Promise<void> {
  // The tables reference Parquet files: a snapshot published as NDJSON alone has none to commit.
  if (!helpers.config.output.iceberg || !p.formats.includes('parquet')) return;
  const { record, clock } = helpers;
  // Said before the commit starts: a crash in it leaves the snapshot pending, not silent.
  await record.recordIceberg(p.snapshotId, { state: 'pending', atMs: clock.now(), message: COMMITTING });
  try {
    for (const o of await icebergAfterPublish(helpers.config)(p.outDir, p.snapshotId)) {
      await record.recordIceberg(o.snapshotId, { state: o.state, atMs: clock.now(), message: o.message });
      log.info({ snapshot: o.snapshotId, tables: o.message }, `iceberg: ${o.state}`);
    }
  } catch (err: unknown) {
    const e = coerceError(err);
    const last = !isRetryable(e) || job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
    const next = last ? "the next snapshot's commit retries it first" : 'will retry';
    const message = `${errorCode(e)}: ${e.message} (the snapshot stays published; ${next})`;
    await record.recordIceberg(p.snapshotId, { state: 'pending', atMs: clock.now(), message });
    log.error({ reason: e.message }, `iceberg commit failed: ${message}`);
    if (!last) throw e;
  }
}

/** What a snapshot's record says while its commit runs, and after a crash cut it short. */
const COMMITTING =
  'committing to the Iceberg tables after publish; if this stays, the publish job was cut short and its retry (or the next snapshot) commits it';

type Store = JobHelpers['record'];
type SnapshotRecord = NonNullable<Awaited<ReturnType<Store['get']>>>;

/**
 * The snapshot's parts of its datasets: those recorded by their processors, plus those that failed
 * for good without recording it themselves (stalled too often, a crash), which BullMQ kept as
 * ignored dependencies; these are recorded as failed.
 */
async function collectParts(store: Store, job: Job, p: PublishSnapshotPayload): Promise<PartPointer[]> {
  const ignored = await job.getIgnoredChildrenFailures();
  const recorded = new Map((await store.parts(p.snapshotId)).map((x) => [`${x.dataset}/${x.ticker}`, x]));
  for (const [jobKey, reason] of Object.entries(ignored)) {
    const id = parsePartJobId(p.snapshotId, jobKey);
    if (!id || !isDatasetName(id.dataset)) continue;
    const k = `${id.dataset}/${id.companyKey}`;
    // The processor's own record wins: it knows more (and a retried part may have succeeded).
    if (recorded.has(k)) continue;
    const pointer: PartPointer = {
      dataset: id.dataset,
      ticker: id.companyKey,
      status: 'failed',
      rows: 0,
      bytes: 0,
      message: reason,
    };
    await store.recordPart(p.snapshotId, pointer);
    recorded.set(k, pointer);
  }
  return [...recorded.values()].filter((x) => p.datasets.includes(x.dataset));
}

/** Only a complete snapshot is published: a stopped or cancelled one, or one with failed or missing parts, ends here. */
async function refuseIncomplete(
  store: Store,
  log: Logger,
  p: PublishSnapshotPayload,
  rec: SnapshotRecord,
  parts: readonly PartPointer[],
): Promise<void> {
  if (rec.state === 'stopped' || rec.state === 'cancelled') {
    log.error({ reason: rec.message }, `snapshot ${rec.state}; not published`);
    throw new UnrecoverableError(`snapshot ${p.snapshotId} ${rec.state}: ${rec.message ?? rec.state}`);
  }
  const failed = parts.filter((x) => x.status === 'failed');
  const missing = p.total - parts.length;
  if (failed.length > 0 || missing > 0) {
    const first = failed[0];
    const message =
      `${failed.length + Math.max(0, missing)} of ${counted(p.total, 'part')} failed` +
      (first ? ` (first: ${first.dataset} ${first.ticker}: ${first.message ?? 'failed'})` : '') +
      `; not published. Retry the failed parts with: filings-export run --snapshot-id ${p.snapshotId} --retry`;
    await endFailed(store, log, p.snapshotId, message, { failed: failed.length, missing });
  }
}

/** Ends a snapshot that cannot be published: the record says failed with `message`, and the job ends for good. */
async function endFailed(
  store: Store,
  log: Logger,
  id: string,
  message: string,
  fields: Record<string, unknown>,
): Promise<never> {
  await store.transition(id, ['running'], 'failed', { message, finished: true });
  log.error(fields, message);
  throw new UnrecoverableError(message);
}

/**
 * Records the companies the API did not know; when that is every company asked for, nothing was
 * found and the snapshot ends failed: publishing it would make empty tables `latest`.
 */
async function refuseNoneFound(
  store: Store,
  log: Logger,
  p: PublishSnapshotPayload,
  rec: SnapshotRecord,
  parts: readonly PartPointer[],
): Promise<void> {
  const missing = missingCompanies(rec.spec.companies, parts);
  if (missing.length === 0) return;
  await store.recordMissing(p.snapshotId, missing);
  if (missing.length < rec.spec.companies.length) {
    log.warn({ missing: missing.map((m) => m.company) }, 'companies not found; publishing the rest');
    return;
  }
  await endFailed(store, log, p.snapshotId, noneFoundMessage(missing), {
    missing: missing.map((m) => m.company),
  });
}

/** Publishes, checks the published rows against the parts', marks it published and queues its load. */
async function publishVerified(
  helpers: JobHelpers,
  log: Logger,
  p: PublishSnapshotPayload,
  rec: SnapshotRecord,
  parts: PartPointer[],
): Promise<PublishSnapshotResult> {
  const store = helpers.record;
  const rows = rowsByDataset(parts, p.datasets);
  const waits = await store.quotaWaits(p.snapshotId);
  const stopTimer = helpers.metrics?.publishDuration.startTimer();
  const result = await helpers.publish({
    root: p.outDir,
    snapshotId: p.snapshotId,
    snapshotDate: p.snapshotDate,
    formats: p.formats,
    datasets: p.datasets,
    parts,
    waits,
    startedAt: new Date(rec.createdAtMs).toISOString(),
    requests: rec.requests,
    retries: rec.partRetries,
    rateLimited429: rec.rateLimited429,
    ...(p.reuse !== undefined
      ? { incremental: { reusedFrom: p.reuse.from, fullRefreshDate: p.reuse.fullRefreshDate } }
      : {}),
    ...(p.changesAgainst !== undefined ? { changesAgainst: p.changesAgainst } : {}),
  });
  stopTimer?.();
  // Nothing silently dropped: the published files hold exactly the rows the parts fetched.
  for (const ds of p.datasets) {
    if ((result.rows[ds] ?? 0) !== (rows[ds] ?? 0))
      throw new OutputError(
        'VERIFY_FAILED',
        `${ds}: the published files hold ${result.rows[ds] ?? 0} rows but the parts fetched ${rows[ds] ?? 0}`,
      );
  }
  await store.published(p.snapshotId, result.manifestPath, result.changesMissing);
  if (result.changesMissing !== undefined)
    log.warn({ reason: result.changesMissing }, 'published without its changes dataset');
  await store.expireParts(p.snapshotId, PARTS_TTL_AFTER_PUBLISH_S);
  log.info({ manifest: result.manifestPath, rows: result.rows }, 'snapshot published');
  // A job of its own: a failed load is retried by itself and never unpublishes the snapshot.
  if (helpers.config.output.load_into !== null)
    await helpers.add(
      LOAD_SNAPSHOT,
      { v: 1, snapshotId: p.snapshotId, outDir: p.outDir },
      { jobId: `load-${p.snapshotId}` },
    );
  return { snapshotId: p.snapshotId, status: 'published', manifest: result.manifestPath, rows: result.rows };
}

function rowsByDataset(parts: readonly PartPointer[], datasets: readonly string[]): Record<string, number> {
  const rows: Record<string, number> = {};
  for (const d of datasets) rows[d] = 0;
  for (const x of parts) if (x.status === 'done') rows[x.dataset] = (rows[x.dataset] ?? 0) + x.rows;
  return rows;
}
