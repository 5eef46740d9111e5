/**
 * One job type, one place: the contract's `JOB_TYPES` (src/pipeline/queue/job-payloads.ts) and the
 * definitions of jobs/index.ts agree one for one, the worker runner refuses a list that does not,
 * and running workers hand a job of every type to that type's processor, with helpers built once
 * per worker (real Redis, real workers).
 */
import { readdir } from 'node:fs/promises';
import { Job, type Queue } from 'bullmq';
import { afterAll, describe, expect, it } from 'vitest';
import { jobDefinitions } from '../../jobs/index.js';
import { defineJob, type DefinedJob } from '../../src/pipeline/job-definitions.js';
import {
  EXPORT_PART,
  JOB_NAMES,
  JOB_TYPES,
  type JobSettings,
} from '../../src/pipeline/queue/job-payloads.js';
import { checkJobDefinitions, startWorkers } from '../../src/pipeline/worker-runner.js';
import type { JobHelpers } from '../../src/pipeline/job-helpers.js';
import { outputPorts } from '../../src/pipeline/output-adapter.js';
import { clientFetcher } from '../../src/pipeline/part/client-fetcher.js';
import { systemClock } from '../../src/types.js';
import { startPipelineHarness, type PipelineHarness } from '../helpers/pipeline.js';

const isDefinition = (v: unknown): v is DefinedJob =>
  typeof v === 'object' && v !== null && 'type' in v && typeof (v as DefinedJob).start === 'function';

describe('job definitions', () => {
  it('jobs/index.ts lists one definition per type of JOB_TYPES, each with its contract', () => {
    expect(jobDefinitions.map((d) => d.type.name).sort()).toEqual([...JOB_NAMES].sort());
    for (const t of JOB_TYPES)
      expect(
        jobDefinitions.filter((d) => d.type === t),
        t.name,
      ).toHaveLength(1);
    expect(() => checkJobDefinitions(jobDefinitions)).not.toThrow();
  });

  it('every definition written in jobs/ is in the list jobs/index.ts hands the runner', async () => {
    const files = (await readdir(new URL('../../jobs/', import.meta.url))).filter(
      (f) => f.endsWith('.ts') && f !== 'index.ts',
    );
    const written: DefinedJob[] = [];
    for (const f of files) {
      const mod = (await import(`../../jobs/${f}`)) as Record<string, unknown>;
      written.push(...Object.values(mod).filter(isDefinition));
    }
    expect(written.map((d) => d.type.name).sort()).toEqual([...JOB_NAMES].sort());
    for (const d of written) expect(jobDefinitions, d.type.name).toContain(d);
  });

  it('the runner refuses a list with a type missing, defined twice, or outside JOB_TYPES, naming it', () => {
    const [first, ...rest] = jobDefinitions;
    if (!first) throw new Error('no job definitions');
    expect(() => checkJobDefinitions(rest)).toThrow(`${first.type.name} has no definition`);
    expect(() => checkJobDefinitions([...jobDefinitions, first])).toThrow(
      `${first.type.name} is defined twice`,
    );
    const stray = defineJob({
      type: { ...EXPORT_PART, name: 'stray-job' },
      run: () => Promise.resolve(null),
    });
    expect(() => checkJobDefinitions([...jobDefinitions, stray])).toThrow('stray-job is not in JOB_TYPES');
  });

  it('every job type is enqueued with at least one attempt and a retention', () => {
    const s: JobSettings = {
      attempts: 3,
      keepCompleted: { count: 5 },
      keepFailed: { count: 7 },
      controlBackoffMs: 10,
    };
    for (const t of JOB_TYPES) {
      const o = t.options(s);
      expect(o.attempts, t.name).toBeGreaterThanOrEqual(1);
      expect(o.removeOnComplete, t.name).toBeDefined();
      expect(o.removeOnFail, t.name).toBeDefined();
    }
  });

  describe('running workers', () => {
    let h: PipelineHarness | undefined;
    afterAll(async () => h?.close());

    /** Polls the job until it failed; the reason it failed with. */
    async function failedReason(queue: Queue, id: string): Promise<string> {
      for (let i = 0; i < 600; i++) {
        // The state first, then the job: read the other way round, a job failing in between has no reason yet.
        if ((await queue.getJobState(id)) === 'failed')
          return (await Job.fromId(queue, id))?.failedReason ?? '';
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`job ${id} never failed`);
    }

    it("hand a job of every type to that type's processor, and refuse a name no definition has", async () => {
      h = await startPipelineHarness();
      await h.startWorkers();
      const queueOf = (role: 'parts' | 'snapshots'): Queue =>
        role === 'parts' ? h!.ctx.partsQueue : h!.ctx.snapshotsQueue;
      for (const t of JOB_TYPES) {
        // A payload no type accepts: only the type's own processor names the type in its refusal.
        const job = await queueOf(t.queue).add(t.name, { v: 0 }, { attempts: 1 });
        expect(await failedReason(queueOf(t.queue), job.id!), t.name).toContain(
          `${t.name} job: invalid payload`,
        );
      }
      const stray = await h.ctx.snapshotsQueue.add('no-such-job', {}, { attempts: 1 });
      expect(await failedReason(h.ctx.snapshotsQueue, stray.id!)).toContain('unknown job no-such-job');
    });

    it('build the helpers once per worker, not per job, over the pipeline they were given', async () => {
      const own = await startPipelineHarness();
      const built: JobHelpers[] = [];
      // The real definitions, each noting the helpers its worker starts it with.
      const definitions: DefinedJob[] = jobDefinitions.map((d) => ({
        ...d,
        start: (helpers: JobHelpers) => {
          built.push(helpers);
          return d.start(helpers);
        },
      }));
      const output = await outputPorts();
      const workers = await startWorkers({
        ctx: own.ctx,
        definitions,
        fetcher: clientFetcher(own.client),
        output,
        budget: own.budget,
        clock: systemClock,
      });
      try {
        // Every definition is started once by the worker of its queue, with that worker's helpers.
        expect(built).toHaveLength(jobDefinitions.length);
        const byQueue = new Set(built);
        expect(byQueue.size).toBe(2);
        for (const helpers of byQueue) expect(helpers.record).toBe(own.ctx.store);
        for (const role of ['parts', 'snapshots'] as const) {
          const queue = role === 'parts' ? own.ctx.partsQueue : own.ctx.snapshotsQueue;
          const type = JOB_TYPES.find((t) => t.queue === role)!;
          for (let i = 0; i < 3; i++) {
            const job = await queue.add(type.name, { v: 0 }, { attempts: 1 });
            expect(await failedReason(queue, job.id!)).toContain(`${type.name} job: invalid payload`);
          }
        }
        expect(built).toHaveLength(jobDefinitions.length);
      } finally {
        await workers.close(2000);
        await own.close();
      }
    });
  });
});
