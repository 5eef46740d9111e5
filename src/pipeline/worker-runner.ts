/**
 * Runs the pipeline's BullMQ workers in this process: the parts worker (rate-limited by the
 * budget; one job start = one request) and the control worker (publish-snapshot parents and the
 * nightly trigger). Any number of processes on any number of machines may run these against the
 * same Redis. `close(deadline)` lets running jobs finish, then aborts the rest.
 */
import { hostname } from 'node:os';
import { Job, Worker, type Processor } from 'bullmq';
import type { Budget } from '../budget/index.js';
import { concurrencyFor, limiterFor } from './worker-limits.js';
import { coerceError } from '../errors.js';
import type { Metrics } from '../metrics/metrics.js';
import type { Clock } from '../types.js';
import { backoffStrategy } from './backoff.js';
import { budgetConfigFrom, type PipelineContext } from './context.js';
import { publishJobId } from './ids.js';
import { incrementalPlanner } from './incremental.js';
import {
  CONVERT_SEGMENT_JOB,
  EXPORT_PART_JOB,
  LOAD_SNAPSHOT_JOB,
  NIGHTLY_TRIGGER_JOB,
  PUBLISH_SNAPSHOT_JOB,
} from './job-payloads.js';
import { loadAfterPublish, LOAD_JOB_OPTIONS } from './load-after-publish.js';
import type { JobProcessors } from './job-processors.js';
import type {
  PartFetcher,
  PartWriterFactory,
  ReusePorts,
  SegmentConverter,
  SnapshotPublisher,
} from './ports.js';
import { segmentRows } from '../output/staging/index.js';

export interface WorkerRunnerDeps {
  ctx: PipelineContext;
  /** The processor factories of jobs/, injected by the composition root. */
  processors: JobProcessors;
  fetcher: PartFetcher;
  createWriter: PartWriterFactory;
  /** See ExportPartDeps.stagedBytes. */
  stagedBytes?: (root: string, file: string) => Promise<number | null>;
  /** See ExportPartDeps.reuse. */
  previousManifest?: ReusePorts['previousManifest'];
  carryOver?: ReusePorts['carryOver'];
  checkSourceFiles?: ReusePorts['checkSourceFiles'];
  publish: SnapshotPublisher;
  /** Converts segments of parts being staged (convert-segment jobs). @defaultValue none: such jobs are skipped */
  convertSegment?: SegmentConverter;
  /** Releases the output ports' storages (bucket connections) once the workers stopped. */
  closeOutput?: () => Promise<void>;
  budget: Budget;
  clock: Clock;
  /** Prometheus metrics the processors record into. @defaultValue none */
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

/** Days the per-part hash of a published snapshot is kept (the manifest has it all). */
const PARTS_TTL_AFTER_PUBLISH_S = 7 * 86_400;

export async function startWorkers(deps: WorkerRunnerDeps): Promise<RunningWorkers> {
  const { ctx } = deps;
  const { config, logger, store } = ctx;
  const roles = { parts: deps.roles?.parts ?? true, control: deps.roles?.control ?? true };
  const workers: Worker[] = [];
  const base = {
    connection: ctx.redis,
    prefix: config.redis.prefix,
    lockDuration: config.worker.lock_duration_ms,
    name: deps.workerName ?? `${hostname()}:${process.pid}`,
  };

  const stopSnapshot = async (snapshotId: string, message: string, job: Job): Promise<void> => {
    if (await store.stop(snapshotId, message))
      logger.error({ snapshot: snapshotId, reason: message }, 'snapshot stopped');
    // Parts not started yet are removed, so the parent runs now instead of after every sibling
    // burned a request (or a rate-limit slot) only to learn the key is refused.
    const parentId = job.parent?.id ?? publishJobId(snapshotId);
    const parent = await Job.fromId(ctx.snapshotsQueue, parentId);
    if (parent) await parent.removeUnprocessedChildren();
  };

  // Aborted when close() starts: parts still waiting for a rate-limit slot go back to the queue.
  const closing = new AbortController();

  if (roles.parts) {
    const budgetConfig = budgetConfigFrom(config);
    const processor = deps.processors.exportPart({
      closing: closing.signal,
      fetcher: deps.fetcher,
      createWriter: deps.createWriter,
      ...(deps.stagedBytes ? { stagedBytes: deps.stagedBytes } : {}),
      ...(deps.previousManifest && deps.carryOver && deps.checkSourceFiles
        ? {
            reuse: {
              previousManifest: deps.previousManifest,
              carryOver: deps.carryOver,
              checkSourceFiles: deps.checkSourceFiles,
            },
          }
        : {}),
      store,
      budget: deps.budget,
      rateLimiter: ctx.partsQueue,
      outage: ctx.outage,
      maxOutageMs: config.retry.outage_max_ms,
      stopSnapshot,
      clock: deps.clock,
      logger: logger.child({ worker: 'parts' }),
      ...(deps.metrics ? { metrics: deps.metrics } : {}),
      ...(config.output.convert_while_staging
        ? {
            earlyConversion: {
              segmentRows: segmentRows(config.output.row_group_rows ?? undefined),
              enqueue: async (payload) => {
                // One try: a segment that fails is converted at publish instead. Kept in Redis
                // as long as every other job (retention.*_jobs).
                await ctx.snapshotsQueue.add(CONVERT_SEGMENT_JOB, payload, {
                  attempts: 1,
                  removeOnComplete: ctx.flowSettings.keepCompleted,
                  removeOnFail: ctx.flowSettings.keepFailed,
                });
              },
            },
          }
        : {}),
    });
    // Enough jobs in flight that the rate limit, not the worker, sets the pace (Little's law over a
    // typical 2 s part); more workers share this need.
    const needed = concurrencyFor({ config: budgetConfig, jobDurationMs: 2000 });
    if (config.worker.concurrency < needed)
      logger.info(
        { concurrency: config.worker.concurrency, needed },
        'worker.concurrency may be too low to use the whole rate limit with one worker process',
      );
    const worker = new Worker(ctx.names.parts, processor as Processor, {
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
    });
    workers.push(worker);
  }

  if (roles.control) {
    const publish = deps.processors.publishSnapshot({
      store,
      publish: deps.publish,
      clock: deps.clock,
      logger: logger.child({ worker: 'control' }),
      partsTtlSeconds: PARTS_TTL_AFTER_PUBLISH_S,
      ...(deps.metrics ? { metrics: deps.metrics } : {}),
      ...(config.output.load_into !== null
        ? {
            enqueueLoad: async (snapshotId: string, outDir: string) => {
              await ctx.snapshotsQueue.add(
                LOAD_SNAPSHOT_JOB,
                { v: 1, snapshotId, outDir },
                {
                  ...LOAD_JOB_OPTIONS,
                  jobId: `load-${snapshotId}`,
                },
              );
            },
          }
        : {}),
    });
    const load = deps.processors.loadSnapshot({
      load: loadAfterPublish(config),
      store,
      clock: deps.clock,
      logger: logger.child({ worker: 'control' }),
      ...(deps.metrics ? { metrics: deps.metrics } : {}),
    });
    const trigger = deps.processors.nightlyTrigger({
      enqueue: (spec) => ctx.enqueue(spec),
      planIncremental: incrementalPlanner(config),
      clock: deps.clock,
      logger: logger.child({ worker: 'control' }),
    });
    const convertSegment = deps.processors.convertSegment({
      convert:
        deps.convertSegment ?? (() => Promise.resolve({ status: 'skipped', reason: 'no segment converter' })),
      store,
      logger: logger.child({ worker: 'control' }),
    });
    const worker = new Worker(
      ctx.names.snapshots,
      async (job: Job, token?: string) => {
        switch (job.name) {
          case PUBLISH_SNAPSHOT_JOB:
            return publish(job);
          case NIGHTLY_TRIGGER_JOB:
            return trigger(job);
          case CONVERT_SEGMENT_JOB:
            return convertSegment(job);
          case LOAD_SNAPSHOT_JOB:
            return load(job);
          default:
            throw new Error(
              `unknown job ${job.name} in ${ctx.names.snapshots}; token ${token ? 'held' : 'none'}`,
            );
        }
      },
      { ...base, concurrency: config.worker.control_concurrency },
    );
    workers.push(worker);
  }

  for (const w of workers) {
    w.on('error', (err) => logger.error({ err: coerceError(err), queue: w.name }, 'worker error'));
    w.on('failed', (job, err) => {
      if (!job) return;
      if (job.name === EXPORT_PART_JOB) {
        logger.debug({ job: job.id, reason: err.message, attempts: job.attemptsMade }, 'part attempt failed');
        return;
      }
      // A publish job that died without its processor noticing (stalled too often, a crash
      // mid-write) must not leave the snapshot "running" for ever.
      if (job.name === PUBLISH_SNAPSHOT_JOB && job.finishedOn) {
        const id =
          typeof job.data === 'object' && job.data
            ? (job.data as { snapshotId?: unknown }).snapshotId
            : undefined;
        if (typeof id === 'string')
          void store
            .transition(id, ['running'], 'failed', {
              message: `publishing failed: ${err.message}`,
              finished: true,
            })
            .catch((e: unknown) =>
              logger.error({ err: coerceError(e) }, 'could not record a failed publish'),
            );
      }
    });
  }
  await Promise.all(workers.map((w) => w.waitUntilReady()));

  return {
    workers,
    async close(deadlineMs = config.worker.shutdown_timeout_ms) {
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
      await deps.closeOutput?.();
    },
  };
}
