/**
 * The nightly trigger: the job scheduler upserted twice is still one scheduler with one pending
 * job; its job creates `nightly-<date in tz>` and running it again enqueues nothing. Plus the
 * payload checks of every job type.
 */
import type { Job } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nightlyTriggerJob, scheduledAtMs } from '../../jobs/nightly-trigger.js';
import {
  parseExportPartPayload,
  parseNightlyTriggerPayload,
  parsePublishSnapshotPayload,
} from '../../src/pipeline/queue/job-payloads.js';
import { InputError } from '../../src/errors.js';
import { localDate } from '../../src/pipeline/queue/ids.js';
import { upsertNightlySchedule } from '../../src/pipeline/schedule.js';
import { DATASETS, systemClock } from '../../src/types.js';
import { startPipelineHarness, testJobHelpers, type PipelineHarness } from '../helpers/pipeline.js';

describe('the nightly scheduler', () => {
  let h: PipelineHarness;
  beforeAll(async () => {
    h = await startPipelineHarness({
      config: { 'schedule.cron': '30 1 * * *', 'schedule.tz': 'America/New_York' },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  const payload = () => ({
    v: 1 as const,
    tz: h.config.schedule.tz,
    companies: [{ kind: 'ticker' as const, ticker: 'WMT' }],
    datasets: ['series_catalog' as const],
    formats: h.config.output.formats,
    outDir: h.outDir,
  });

  it('is one scheduler with one pending job however often it is upserted', async () => {
    const first = await upsertNightlySchedule(h.ctx, payload());
    const second = await upsertNightlySchedule(h.ctx, payload());
    expect(first.replaced).toBe(false);
    expect(second.replaced).toBe(true);
    expect(second.schedulers).toBe(1);
    expect(await h.ctx.snapshotsQueue.getJobSchedulersCount()).toBe(1);
    const delayed = await h.ctx.snapshotsQueue.getDelayed();
    expect(delayed).toHaveLength(1);
    // 01:30 in New York
    const next = new Date(second.next ?? '');
    expect(
      new Intl.DateTimeFormat('en-US', {
        timeZone: 'America/New_York',
        hour: '2-digit',
        minute: '2-digit',
        hour12: false,
      }).format(next),
    ).toBe('01:30');
  });

  it('its job creates nightly-<scheduled local date> once', async () => {
    const [job] = await h.ctx.snapshotsQueue.getDelayed();
    expect(job).toBeDefined();
    const j = job as Job;
    expect(parseNightlyTriggerPayload(j.data).companies).toEqual([{ kind: 'ticker', ticker: 'WMT' }]);
    const when = scheduledAtMs(j, systemClock);
    expect(j.id).toMatch(new RegExp(`:${when}$`));
    const helpers = testJobHelpers({
      config: h.config,
      enqueue: (s) => h.ctx.enqueue(s),
      clock: systemClock,
    });
    const process = (job: Job) => nightlyTriggerJob.run(parseNightlyTriggerPayload(job.data), helpers, job);
    const first = await process(j);
    expect(first).toEqual({
      snapshotId: `nightly-${localDate(when, 'America/New_York')}`,
      outcome: 'created',
    });
    expect(await process(j)).toEqual({ snapshotId: first.snapshotId, outcome: 'exists' });
    const rec = await h.ctx.store.get(first.snapshotId);
    expect(rec?.spec.trigger).toBe('nightly');
    expect(rec?.total).toBe(1);
  });
});

describe('job payload checks', () => {
  const part = {
    v: 1,
    snapshotId: 'nightly-2026-11-21',
    snapshotDate: '2026-11-21',
    dataset: 'facts_full',
    company: { kind: 'ticker', ticker: 'AAPL' },
    outDir: '/out',
  };

  it('accept well-formed payloads', () => {
    expect(parseExportPartPayload(part).dataset).toBe('facts_full');
    expect(
      parsePublishSnapshotPayload({
        v: 1,
        snapshotId: 'x1',
        snapshotDate: '2026-11-21',
        outDir: '/o',
        formats: ['parquet'],
        datasets: ['evidence'],
        total: 3,
      }).total,
    ).toBe(3);
  });

  it('name the job, the field and the value', () => {
    expect(() => parseExportPartPayload({ ...part, dataset: 'factz' })).toThrow(
      `export-part job: invalid payload: payload.dataset: must be one of ${DATASETS.join(', ')} (got "factz")`,
    );
    expect(() => parseExportPartPayload({ ...part, company: { kind: 'cik', cik: '320193' } })).toThrow(
      'payload.company.cik: must be a 10-digit CIK (got "320193")',
    );
    expect(() => parseExportPartPayload({ ...part, snapshotId: 'a:b' })).toThrow(
      /payload\.snapshotId: must be a snapshot id/,
    );
    expect(() => parsePublishSnapshotPayload(null)).toThrow(InputError);
    expect(() => parseNightlyTriggerPayload({ v: 1 })).toThrow(
      /nightly-trigger job: invalid payload: payload\.tz: .*\(missing\)/,
    );
  });
});
