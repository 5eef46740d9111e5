/**
 * The nightly job scheduler. Upserted from one place only (`filings-export schedule`), never by
 * workers at start-up: concurrent upserts from many processes are where BullMQ's scheduler bugs
 * live (#2988, #2876, #3085). The template carries the universe and datasets as they are when
 * `schedule` runs; run it again after changing them (an upsert replaces the template).
 */
import { NIGHTLY_TRIGGER, type NightlyTriggerPayload } from './queue/index.js';
import type { PipelineContext } from './context.js';

export interface ScheduleInfo {
  id: string;
  pattern: string;
  tz: string;
  /** Next run (ISO), when BullMQ knows it. */
  next: string | null;
  /** Schedulers in the queue after the upsert (1 unless someone added others). */
  schedulers: number;
  replaced: boolean;
}

export async function upsertNightlySchedule(
  ctx: PipelineContext,
  payload: NightlyTriggerPayload,
): Promise<ScheduleInfo> {
  const { config, snapshotsQueue, flowSettings } = ctx;
  const id = config.schedule.scheduler_id;
  const before = await snapshotsQueue.getJobScheduler(id);
  await snapshotsQueue.upsertJobScheduler(
    id,
    { pattern: config.schedule.cron, tz: config.schedule.tz },
    {
      name: NIGHTLY_TRIGGER.name,
      data: payload,
      opts: NIGHTLY_TRIGGER.options(flowSettings),
    },
  );
  const after = await snapshotsQueue.getJobScheduler(id);
  return {
    id,
    pattern: config.schedule.cron,
    tz: config.schedule.tz,
    next: after?.next ? new Date(after.next).toISOString() : null,
    schedulers: await snapshotsQueue.getJobSchedulersCount(),
    replaced: before !== undefined,
  };
}

export async function removeNightlySchedule(ctx: PipelineContext): Promise<boolean> {
  return ctx.snapshotsQueue.removeJobScheduler(ctx.config.schedule.scheduler_id);
}
