/**
 * One snapshot now: plan it against the budget, enqueue it (a no-op when the id is taken), run
 * workers here when asked (`--local`), and follow it to its end with visible progress (`--wait`).
 * Shared by `run` and `demo`.
 */
import { InputError } from '../errors.js';
import { assertNever } from '../types.js';
import type { Metrics } from '../metrics/metrics.js';
import { checkAnyOutputRoot } from '../output/staged-part/index.js';
import { s3Settings } from '../output/storage/index.js';
import { followSnapshot, incrementalPlanner, type EnqueueOutcome } from './queue/index.js';
import { isFinal, isRetryable, noWorkerStatus, outageStatus } from './record/index.js';
import { assertPlanFits, type Plan } from '../budget/index.js';
import type { Logger } from '../log.js';
import type { Exporter } from './exporter.js';
import {
  createProgressReporter,
  type SnapshotSpec,
  type SnapshotStore,
  type SnapshotView,
} from './record/index.js';
import { stopSnapshot, type RunningWorkers } from './worker-runner.js';
import { counted } from '../counted.js';

export interface RunSnapshotOptions {
  exporter: Exporter;
  spec: SnapshotSpec;
  /** Re-enqueue a failed, stopped or cancelled snapshot (parts already exported are reused). */
  retry?: boolean;
  /** Fetch every part even when an earlier snapshot could supply unchanged ones. @defaultValue false */
  fullRefresh?: boolean;
  /** Let a snapshot that exceeds the monthly quota spread over several days. */
  allowMultiDay: boolean;
  /** Run the workers in this process too. */
  local: boolean;
  /** Follow the snapshot to its end. */
  wait: boolean;
  logger: Logger;
  /** Bars (true) or log lines (false). @defaultValue stderr is a TTY */
  tty?: boolean;
  /** Stops following (and local workers); the snapshot itself goes on in other workers. */
  signal?: AbortSignal;
  /** Metrics the local workers record into (`run --local --metrics-port`). @defaultValue none */
  metrics?: Metrics;
  /** Human-readable lines (plan, outcome, no worker). @defaultValue stderr */
  say?: (line: string) => void;
  /** Clock of the no-worker line. @defaultValue Date.now */
  now?: () => number;
  /** How often following reads the record. @defaultValue followSnapshot's */
  pollMs?: number;
}

export interface RunSnapshotResult {
  outcome: EnqueueOutcome['kind'];
  plan: Plan | null;
  record: SnapshotView;
}

export async function runSnapshot(o: RunSnapshotOptions): Promise<RunSnapshotResult> {
  const { exporter } = o;
  const say = o.say ?? ((line: string) => process.stderr.write(`${line}\n`));
  const { store } = exporter.ctx;
  let spec = o.fullRefresh === true ? await fullRefreshSpec(store, o.spec) : o.spec;
  const requests = spec.companies.length * spec.datasets.length;

  const existing = await store.get(spec.id);
  const willEnqueue = !existing || (o.retry === true && isRetryable(existing.state));
  let plan: Plan | null = null;
  if (willEnqueue) {
    // A root no worker can write to is one clear line now, not a failure per part later.
    await checkAnyOutputRoot(spec.outDir, s3Settings(exporter.ctx.config.output));
    // A retry keeps the original decision: its finished parts came from the same source.
    const decided =
      existing !== undefined
        ? { spec: { ...spec, ...(existing.spec.reuse ? { reuse: existing.spec.reuse } : {}) }, note: '' }
        : await incrementalPlanner(exporter.ctx.config)(spec, { fullRefresh: o.fullRefresh === true });
    spec = decided.spec;
    if (decided.note !== '') say(`incremental: ${decided.note}`);
    // The budget is planned for every request: a night on which every company changed still fits.
    plan = await exporter.budget.plan(requests, { allowMultiDay: o.allowMultiDay });
    say(
      `plan: ${spec.reuse ? 'up to ' : ''}${counted(requests, 'request')} (${counted(spec.companies.length, 'company', 'companies')} x ${counted(spec.datasets.length, 'dataset')}: ${spec.datasets.join(', ')}); ${plan.message}`,
    );
    if (!o.allowMultiDay) assertPlanFits(plan);
  }

  const outcome = await exporter.ctx.enqueue(spec, { retry: o.retry === true });
  switch (outcome.kind) {
    case 'created':
      say(`snapshot ${spec.id}: enqueued ${counted(requests, 'part')} -> ${spec.outDir}`);
      break;
    case 'retried':
      say(`snapshot ${spec.id}: re-enqueued (parts already exported are reused)`);
      break;
    case 'exists':
      say(
        `snapshot ${spec.id} already exists (${outcome.record.state}); nothing enqueued${existsAdvice(outcome.record.state)}`,
      );
      break;
  }

  let workers: RunningWorkers | undefined;
  if (o.local && !isFinal(outcome.record.state))
    workers = await exporter.startWorkers(undefined, o.metrics ? { metrics: o.metrics } : {});
  try {
    if (!o.wait || isFinal(outcome.record.state))
      return { outcome: outcome.kind, plan, record: outcome.record };
    return { outcome: outcome.kind, plan, record: await follow(o, spec.id, workers, say) };
  } catch (err: unknown) {
    if (o.local && o.signal?.aborted === true)
      await stopIfNeverAnswered(exporter, spec.id, o.signal.reason, say);
    throw err;
  } finally {
    await workers?.close();
  }
}

/** Whether any part of the snapshot got an answer from the API (a reused part sent no request). */
function apiAnswered(rec: SnapshotView): boolean {
  return Object.values(rec.progress).some((p) => p.done - p.reused + p.not_found + p.bad_request > 0);
}

/**
 * Says once, as soon as the queue holds for an outage, when no request of the snapshot was ever
 * answered. The hold is right for a night whose API worked before; a person whose URL was wrong
 * from the first request must hear so at once, and how to stop, not wait out retry.outage_max_ms.
 */
function neverAnsweredTeller(
  exporter: Exporter,
  say: (line: string) => void,
): (rec: SnapshotView) => Promise<void> {
  let told = false;
  const { config } = exporter.ctx;
  return async (rec) => {
    if (told || apiAnswered(rec)) return;
    const outage = await exporter.ctx.outage.describe();
    if (outage === null) return;
    told = true;
    const minutes = Math.round(config.retry.outage_max_ms / 60_000);
    say(
      `the API at ${config.api.url} has not answered any request of snapshot ${rec.spec.id} (${outage.lastError}). ` +
        `If that URL is wrong, stop with Ctrl-C (or one SIGTERM), fix FILINGS_API_URL (api.url) and run again with --retry; ` +
        `otherwise the queue waits up to ${minutes} min (retry.outage_max_ms) for the API to come back`,
    );
  };
}

/**
 * `run --local` stopped by a signal while the API never answered: no worker of ours holds the
 * snapshot any more, so it is recorded stopped (its unstarted parts removed) rather than left
 * RUNNING behind a probe time that passes; `run --retry` starts it again.
 */
async function stopIfNeverAnswered(
  exporter: Exporter,
  id: string,
  reason: unknown,
  say: (line: string) => void,
): Promise<void> {
  const { ctx } = exporter;
  const rec = await ctx.store.get(id);
  const outage = await ctx.outage.describe();
  if (!rec || isFinal(rec.state) || outage === null || apiAnswered(rec)) return;
  const why = reason instanceof Error ? reason.message : 'interrupted';
  const message = `${why}: the API at ${ctx.config.api.url} never answered (${outage.lastError}); run again with --retry once it answers`;
  if (await stopSnapshot(ctx, id, message)) say(`snapshot ${id} stopped: ${message}`);
}

/**
 * The snapshot a full refresh runs. It fetches everything, so it never stops at a request already
 * finished (today's ad hoc id, taken): an ad hoc id takes the next free suffix (`<id>-2`, `-3`…),
 * while a name the user gave (`--snapshot-id`) is refused with the way out.
 */
async function fullRefreshSpec(store: SnapshotStore, spec: SnapshotSpec): Promise<SnapshotSpec> {
  for (let n = 1; ; n++) {
    const id = n === 1 ? spec.id : `${spec.id}-${n}`;
    const existing = await store.get(id);
    if (!existing || !isFinal(existing.state)) return { ...spec, id };
    if (spec.trigger === 'manual')
      throw new InputError(
        `--full-refresh: snapshot ${id} already exists (${existing.state}); a full refresh is a new snapshot: give it another --snapshot-id`,
      );
  }
}

/** What to do about a snapshot that already exists, after "nothing enqueued". */
function existsAdvice(state: SnapshotView['state']): string {
  switch (state) {
    case 'published':
      return ' (its data is kept; run again with --full-refresh to fetch fresh data)';
    case 'failed':
    case 'stopped':
    case 'cancelled':
      return ' (use --retry to run its unfinished parts again)';
    case 'enqueuing':
    case 'running':
      return '';
    default:
      return assertNever(state, 'snapshot state');
  }
}

/**
 * Follows the snapshot with progress; what it waits for (an outage, a quota reset, no worker on
 * the parts queue) shows beside it, and the no-worker line is also said once when it appears and
 * when a worker turns up, so a person at a terminal or reading a log sees it in words.
 */
async function follow(
  o: RunSnapshotOptions,
  id: string,
  workers: RunningWorkers | undefined,
  say: (line: string) => void,
): Promise<SnapshotView> {
  const { ctx } = o.exporter;
  const now = o.now ?? Date.now;
  const progress = createProgressReporter({
    logger: o.logger,
    ...(o.tty !== undefined ? { tty: o.tty } : {}),
  });
  let said: string | null = null;
  const tellNeverAnswered = neverAnsweredTeller(o.exporter, say);
  try {
    return await followSnapshot(ctx.store, id, {
      ...(o.signal ? { signal: o.signal } : {}),
      ...(workers ? { wakeOn: (wake: () => void) => onJobsSettled(workers, wake) } : {}),
      ...(o.pollMs !== undefined ? { pollMs: o.pollMs } : {}),
      onUpdate: async (rec) => {
        const wait = await ctx.store.currentQuotaWait(id).catch(() => null);
        const outage = await outageStatus(ctx).catch(() => null);
        if (outage !== null) await tellNeverAnswered(rec);
        const noWorker = await noWorkerStatus(ctx, rec, now()).catch(() => null);
        if (noWorker !== null && said === null) say(`snapshot ${id}: ${noWorker}`);
        if (noWorker === null && said !== null)
          say(`snapshot ${id}: a worker is consuming the parts queue now`);
        said = noWorker;
        progress.update(rec, outage ?? noWorker ?? (wait ? wait.message : null));
      },
    });
  } finally {
    progress.stop();
  }
}

/** Calls `wake` whenever a worker of this process completes or fails a job; returns the unsubscribe. */
function onJobsSettled(running: RunningWorkers, wake: () => void): () => void {
  for (const w of running.workers) {
    w.on('completed', wake);
    w.on('failed', wake);
  }
  return () => {
    for (const w of running.workers) {
      w.off('completed', wake);
      w.off('failed', wake);
    }
  };
}

/** The one JSON line `run --wait` ends with; `not_found`: the companies the API did not know. */
export function resultLine(rec: SnapshotView): string {
  const rows: Record<string, number> = {};
  for (const [ds, p] of Object.entries(rec.progress)) rows[ds] = p.rows;
  return JSON.stringify({
    snapshot_id: rec.spec.id,
    status: rec.state,
    manifest: rec.manifest,
    rows,
    not_found: rec.missing,
  });
}
