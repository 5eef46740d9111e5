/**
 * Runs the pipeline's BullMQ workers in this process: one worker per queue role, each running the
 * job types of its queue from the injected definitions (jobs/index.ts): the parts worker
 * (rate-limited by the budget; one job start = one request) and the control worker (publish-snapshot
 * parents, the nightly trigger, pieces converted while staging, loads). Each worker builds its jobs' helpers once
 * (job-helpers.ts) and hands them to every job it runs. Any number of processes on any number of machines
 * may run these against the same Redis. `close(deadline)` lets running jobs finish, then aborts the rest.
 */
import { hostname } from 'node:os';
import { Job, Worker, type Queue, type WorkerOptions } from 'bullmq';
import type { Budget } from '../budget/index.js';
import { ConfigError, coerceError } from '../errors.js';
import type { Metrics } from '../metrics/metrics.js';
import { assertNever, type Clock } from '../types.js';
import { budgetConfigFrom } from '../budget/index.js';
import type { PipelineContext } from './context.js';
import { watchFetching, type FetchWatchdog } from './fetch-watchdog.js';
import type { DefinedJob, JobDefinitions, JobProcessor } from './job-definitions.js';
import type { JobHelpers, OutputHelpers } from './job-helpers.js';
import { backoffStrategy, concurrencyFor, limiterFor, partHurrier, type PartFetcher } from './part/index.js';
import {
  CONVERT_PIECE,
  earlyConversionOf,
  JOB_TYPES,
  QUEUE_ROLES,
  publishJobId,
  type QueueRole,
} from './queue/index.js';

export interface WorkerRunnerDeps {
  ctx: PipelineContext;
  /** Every job type's definition (jobs/index.ts), injected by the composition root. */
  definitions: JobDefinitions;
  fetcher: PartFetcher;
  /** The output module's part of the helpers (output-adapter.ts), closed once the workers stopped. */
  output: OutputHelpers;
  budget: Budget;
  clock: Clock;
  /** Prometheus metrics the jobs record into. @defaultValue none */
  metrics?: Metrics;
  /** Which workers to run. @defaultValue both */
  roles?: { parts?: boolean; control?: boolean };
  /** Name stored on processed jobs (visible in dashboards). @defaultValue `<host>:<pid>` */
  workerName?: string;
}

export interface RunningWorkers {
  readonly workers: readonly Worker[];
  /** Stops taking jobs, waits up to `deadlineMs` for running ones, then aborts them. */
  close(deadlineMs?: number): Promise<void>;
}

/** The BullMQ queue of a role. */
const queueOf = (ctx: PipelineContext, role: QueueRole): Queue =>
  role === 'parts' ? ctx.partsQueue : ctx.snapshotsQueue;

/** The `worker` label of each queue's worker in logs (and the `roles` option that turns it on). */
const WORKER_OF: Record<QueueRole, 'parts' | 'control'> = { parts: 'parts', snapshots: 'control' };

export async function startWorkers(deps: WorkerRunnerDeps): Promise<RunningWorkers> {
  checkJobDefinitions(deps.definitions);
  // Aborted when close() starts: parts still waiting for a rate-limit slot go back to the queue.
  const closing = new AbortController();
  const roles = { parts: deps.roles?.parts ?? true, control: deps.roles?.control ?? true };
  const active = QUEUE_ROLES.filter((role) => roles[WORKER_OF[role]]);
  const workers: Worker[] = [];
  const watchdogs: FetchWatchdog[] = [];
  // A worker found stuck is replaced in its slot: `workers` always lists the live ones.
  const start = (slot: number, role: QueueRole): Worker => {
    const helpers = jobHelpers(deps, role, closing.signal);
    const jobs = deps.definitions.filter((d) => d.type.queue === role);
    const worker = new Worker(
      deps.ctx.names[role],
      dispatch(deps.ctx, role, jobs, helpers),
      workerOptions(deps, role),
    );
    watchFailures(worker, jobs, deps.ctx, helpers);
    watchdogs[slot] = watchFetching({
      worker,
      queue: queueOf(deps.ctx, role),
      clock: deps.clock,
      onStuck: (idleMs, reading) => {
        if (closing.signal.aborted) return;
        deps.ctx.logger.warn(
          { worker: WORKER_OF[role], idleMs, waiting: reading.waiting },
          'worker fetched nothing while jobs waited (its Redis connection is stuck after a failover?); starting a new one',
        );
        workers[slot] = start(slot, role);
        void letGo(worker);
      },
    });
    return worker;
  };
  active.forEach((role, slot) => workers.push(start(slot, role)));
  await Promise.all(workers.map((w) => w.waitUntilReady()));
  return {
    workers,
    close: (deadlineMs) => {
      for (const w of watchdogs) w.close();
      return closeWorkers(deps, workers, closing, deadlineMs);
    },
  };
}

/** Closes a replaced worker without waiting on it: its fetch loop may never come back. */
async function letGo(worker: Worker): Promise<void> {
  await Promise.race([
    worker.close(true).catch(() => undefined),
    new Promise((r) => setTimeout(r, 10_000).unref()),
  ]);
}

/**
 * Refuses a list of definitions that is not `JOB_TYPES` one for one: a job type without a
 * definition would sit in its queue for ever, one defined twice or not in the contract is a mistake.
 */
export function checkJobDefinitions(defs: JobDefinitions): void {
  const names = defs.map((d) => d.type.name);
  const problems = [
    ...JOB_TYPES.filter((t) => !defs.some((d) => d.type === t)).map((t) => `${t.name} has no definition`),
    ...names.filter((n, i) => names.indexOf(n) !== i).map((n) => `${n} is defined twice`),
    ...defs
      .filter((d) => !(JOB_TYPES as readonly unknown[]).includes(d.type))
      .map((d) => `${d.type.name} is not in JOB_TYPES (src/pipeline/queue/job-payloads.ts)`),
  ];
  if (problems.length > 0) throw new ConfigError(`job definitions (jobs/index.ts): ${problems.join('; ')}`);
}

/** The helpers of one queue's worker, built once and handed to every job it runs. */
function jobHelpers(deps: WorkerRunnerDeps, role: QueueRole, closing: AbortSignal): JobHelpers {
  const { ctx, output } = deps;
  const add: JobHelpers['add'] = async (type, payload, opts) => {
    const queue = queueOf(ctx, type.queue);
    await queue.add(type.name, payload, { ...type.options(ctx.flowSettings), ...opts });
  };
  const early = earlyConversionOf(ctx.config, (payload) => add(CONVERT_PIECE, payload));
  return {
    config: ctx.config,
    fetcher: deps.fetcher,
    budget: deps.budget,
    staged: output.staged,
    ...(early ? { earlyConversion: early } : {}),
    ...(output.reuse ? { reuse: output.reuse } : {}),
    publish: output.publish,
    record: ctx.store,
    logger: ctx.logger.child({ worker: WORKER_OF[role] }),
    clock: deps.clock,
    ...(deps.metrics ? { metrics: deps.metrics } : {}),
    closing,
    add,
    enqueue: (spec) => ctx.enqueue(spec),
    stopSnapshot: async (snapshotId, message, job) =>
      void (await stopSnapshot(ctx, snapshotId, message, job)),
    rateLimiter: ctx.partsQueue,
    outage: ctx.outage,
    hurry: partHurrier(ctx.partsQueue),
  };
}

/**
 * Marks a running snapshot stopped with `message` and removes its parts not started yet; `job` is
 * the part that stopped it, when one did. Returns whether this call stopped it.
 */
export async function stopSnapshot(
  ctx: PipelineContext,
  snapshotId: string,
  message: string,
  job?: Job,
): Promise<boolean> {
  const stopped = await ctx.store.stop(snapshotId, message);
  if (stopped) ctx.logger.error({ snapshot: snapshotId, reason: message }, 'snapshot stopped');
  // Parts not started yet are removed, so the parent runs now instead of after every sibling
  // burned a request (or a rate-limit slot) only to learn the key is refused.
  const parentId = job?.parent?.id ?? publishJobId(snapshotId);
  const parent = await Job.fromId(ctx.snapshotsQueue, parentId);
  if (parent) await parent.removeUnprocessedChildren();
  return stopped;
}

/** One processor for the queue: each job goes to its type's processor by name. */
function dispatch(
  ctx: PipelineContext,
  role: QueueRole,
  jobs: readonly DefinedJob[],
  helpers: JobHelpers,
): JobProcessor {
  const byName = new Map(jobs.map((d) => [d.type.name, d.start(helpers)]));
  return async (job, token, signal) => {
    const processor = byName.get(job.name);
    if (!processor)
      throw new Error(`unknown job ${job.name} in ${ctx.names[role]}; token ${token ? 'held' : 'none'}`);
    return processor(job, token, signal);
  };
}

function workerOptions(deps: WorkerRunnerDeps, role: QueueRole): WorkerOptions {
  const { ctx } = deps;
  const { config } = ctx;
  const base = {
    connection: ctx.redis,
    prefix: config.redis.prefix,
    lockDuration: config.worker.lock_duration_ms,
    name: deps.workerName ?? `${hostname()}:${process.pid}`,
  };
  switch (role) {
    case 'parts': {
      const budgetConfig = budgetConfigFrom(config);
      // Enough jobs in flight that the rate limit, not the worker, sets the pace (Little's law over a
      // typical 2 s part); more workers share this need.
      const needed = concurrencyFor({ config: budgetConfig, jobDurationMs: 2000 });
      if (config.worker.concurrency < needed)
        ctx.logger.info(
          { concurrency: config.worker.concurrency, needed },
          'worker.concurrency may be too low to use the whole rate limit with one worker process',
        );
      return {
        ...base,
        concurrency: config.worker.concurrency,
        limiter: limiterFor(budgetConfig),
        settings: {
          backoffStrategy: backoffStrategy({
            baseDelayMs: config.retry.base_delay_ms,
            maxDelayMs: config.retry.max_delay_ms,
            jitter: config.retry.jitter,
          }),
        },
      };
    }
    case 'snapshots':
      return { ...base, concurrency: config.worker.control_concurrency };
    default:
      return assertNever(role, 'queue role');
  }
}

/** Worker errors are logged; a failed job goes to its type's `onFailed`. */
function watchFailures(
  worker: Worker,
  jobs: readonly DefinedJob[],
  ctx: PipelineContext,
  helpers: JobHelpers,
): void {
  const byName = new Map(jobs.map((d) => [d.type.name, d]));
  worker.on('error', (err) =>
    ctx.logger.error({ err: coerceError(err), queue: worker.name }, 'worker error'),
  );
  worker.on('failed', (job, err) => {
    if (job) byName.get(job.name)?.onFailed?.(job, err, helpers);
  });
}

async function closeWorkers(
  deps: WorkerRunnerDeps,
  workers: readonly Worker[],
  closing: AbortController,
  deadlineMs = deps.ctx.config.worker.shutdown_timeout_ms,
): Promise<void> {
  const { logger } = deps.ctx;
  closing.abort();
  const closed = Promise.all(workers.map((w) => w.close()));
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'deadline'>((resolve) => {
    timer = setTimeout(() => resolve('deadline'), deadlineMs);
    timer.unref();
  });
  if ((await Promise.race([closed.then(() => 'closed' as const), deadline])) === 'deadline') {
    // Running jobs get an abort signal: their requests end and the jobs go back to the queue
    // without spending an attempt (or become stalled and are picked up after lockDuration).
    logger.warn({ deadlineMs }, 'shutdown deadline reached; aborting running jobs');
    for (const w of workers) w.cancelAllJobs('worker shutting down');
    await Promise.race([closed, new Promise((r) => setTimeout(r, 5000).unref())]);
    await Promise.all(workers.map((w) => w.close(true)));
  }
  if (timer) clearTimeout(timer);
  await deps.output.closeOutput?.();
}
