/**
 * Job `export-part`: one part of a snapshot = one (company, dataset) = exactly one API request per
 * attempt. Streams the rows from the client into the part writer (staging) and returns a pointer
 * (file, rows, bytes, sha256), never the rows. What a failure does is the failure policy's row for
 * its error code (src/pipeline/part/failure-policy.ts, rendered in docs/architecture.md "Failures").
 *
 * An attempt runs three named steps (jobs/export-part/): prepare or reuse (prepare.ts), fetch and
 * stage (fetch-and-stage.ts), and on a throw, act on the failure (on-failure.ts). A changed
 * company's catalog part then moves the company's other parts forward (hurry.ts).
 */
import type { Job } from 'bullmq';
import {
  CONVERT_PIECE,
  defineJob,
  earlyConversionOf,
  EXPORT_PART,
  partHurrier,
  type ExportPartPayload,
  type JobEnv,
} from '../src/pipeline/index.js';
import type { PartPointer } from '../src/types.js';
import { recordPart, startAttempt } from './export-part/attempt.js';
import { fetchAndStage } from './export-part/fetch-and-stage.js';
import { hurryIfChanged } from './export-part/hurry.js';
import { actOnFailure } from './export-part/on-failure.js';
import { passOutageGate, prepareOrReuse } from './export-part/prepare.js';
import type { ExportPartDeps, ExportPartProcessor } from './export-part/deps.js';

export type { ExportPartPayload, ExportPartDeps };

/** One part of a snapshot, in the parts worker (rate-limited by the budget). */
export const exportPartJob = defineJob({
  type: EXPORT_PART,
  deps: exportPartDeps,
  create: createExportPartProcessor,
  onFailed: (job, err, env) =>
    env.ctx.logger.debug(
      { job: job.id, reason: err.message, attempts: job.attemptsMade },
      'part attempt failed',
    ),
});

function exportPartDeps(env: JobEnv): ExportPartDeps {
  const { ctx } = env;
  const early = earlyConversionOf(ctx.config, (payload) => env.add(CONVERT_PIECE, payload));
  return {
    closing: env.closing,
    fetcher: env.ports.fetcher,
    staged: env.ports.staged,
    ...(env.ports.reuse ? { reuse: env.ports.reuse, hurry: partHurrier(ctx.partsQueue) } : {}),
    store: ctx.store,
    budget: env.budget,
    rateLimiter: ctx.partsQueue,
    outage: ctx.outage,
    maxOutageMs: ctx.config.retry.outage_max_ms,
    stopSnapshot: env.stopSnapshot,
    clock: env.clock,
    logger: env.logger,
    ...(env.metrics ? { metrics: env.metrics } : {}),
    ...(early ? { earlyConversion: early } : {}),
  };
}

/** The part processor: `new Worker(partsQueue, createExportPartProcessor(deps), …)`. */
export function createExportPartProcessor(deps: ExportPartDeps): ExportPartProcessor {
  return async function processExportPart(
    job: Job,
    token?: string,
    signal?: AbortSignal,
  ): Promise<PartPointer> {
    const a = startAttempt(deps, job, token, signal);
    const prepared = await prepareOrReuse(a);
    if (prepared.kind === 'settled') return prepared.pointer;
    await passOutageGate(a);
    const startedAt = performance.now();
    const timed = (): void =>
      deps.metrics?.partDuration.observe({ dataset: a.p.dataset }, (performance.now() - startedAt) / 1000);
    try {
      const pointer = await fetchAndStage(a, prepared.spec.operation, prepared.note);
      timed();
      await recordPart(a, pointer);
      a.log.debug({ rows: pointer.rows, bytes: pointer.bytes }, 'part exported');
      await hurryIfChanged(a, pointer);
      return pointer;
    } catch (err: unknown) {
      return actOnFailure(a, err, timed);
    }
  };
}
