/**
 * The job contract between the code that enqueues (flow.ts, schedule.ts, enqueue.ts) and the
 * processors in jobs/: job names and payload schemas. It lives here, below jobs/, so that the
 * enqueuing side never imports jobs/ (the arrow goes one way: jobs/ → src/). Payloads arrive as
 * unknown JSON from Redis and are parsed before any use; `v` versions them.
 */
import { join, sep } from 'node:path';
import { z } from 'zod';
import { CIK_PATTERN_10, TICKER_PATTERN } from '../contract/vocabulary.js';
import { DATASETS, OUTPUT_FORMATS } from '../types.js';
import { SNAPSHOT_ID_PATTERN } from './ids.js';
import { parsePayload } from './payload.js';

/** One part of a snapshot: one (company, dataset), one API request per attempt. Parts queue. */
export const EXPORT_PART_JOB = 'export-part';
/** The parent of a snapshot's flow: publishes once every part has finished. Snapshots queue. */
export const PUBLISH_SNAPSHOT_JOB = 'publish-snapshot';
/** What the nightly job scheduler produces: enqueues `nightly-YYYY-MM-DD`. Snapshots queue. */
export const NIGHTLY_TRIGGER_JOB = 'nightly-trigger';

/** Rows of a big part converted while the part is still staged (early-segments.ts). Snapshots queue. */
export const CONVERT_SEGMENT_JOB = 'convert-segment';

/** Loads the published snapshots into the warehouse of `output.load_into`. Snapshots queue. */
export const LOAD_SNAPSHOT_JOB = 'load-snapshot';

export const JOB_NAMES = [
  EXPORT_PART_JOB,
  PUBLISH_SNAPSHOT_JOB,
  NIGHTLY_TRIGGER_JOB,
  CONVERT_SEGMENT_JOB,
  LOAD_SNAPSHOT_JOB,
] as const;
export type JobName = (typeof JOB_NAMES)[number];

const datePattern = /^\d{4}-\d{2}-\d{2}$/;

const companySchema = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('ticker'),
    ticker: z
      .string()
      .regex(TICKER_PATTERN, 'must be a ticker')
      .refine((t) => t === t.toUpperCase(), 'must be an upper-case ticker'),
  }),
  z.strictObject({ kind: z.literal('cik'), cik: z.string().regex(CIK_PATTERN_10, 'must be a 10-digit CIK') }),
]);

const datasets = z.enum(DATASETS, `must be one of ${DATASETS.join(', ')}`);
const formats = z.enum(OUTPUT_FORMATS, `must be one of ${OUTPUT_FORMATS.join(', ')}`);

const reuseSchema = z.strictObject({
  from: z.string().regex(SNAPSHOT_ID_PATTERN, 'must be a snapshot id'),
  fullRefreshDate: z.string().regex(datePattern, 'must be a date YYYY-MM-DD'),
});

const exportPartSchema = z.strictObject({
  v: z.literal(1, 'must be 1 (payload version)'),
  snapshotId: z.string().regex(SNAPSHOT_ID_PATTERN, 'must be a snapshot id'),
  snapshotDate: z.string().regex(datePattern, 'must be a date YYYY-MM-DD'),
  dataset: datasets,
  company: companySchema,
  outDir: z.string().min(1, 'must be the output root'),
  reuse: reuseSchema.optional(),
});

const publishSnapshotSchema = z.strictObject({
  v: z.literal(1, 'must be 1 (payload version)'),
  snapshotId: z.string().regex(SNAPSHOT_ID_PATTERN, 'must be a snapshot id'),
  snapshotDate: z.string().regex(datePattern, 'must be a date YYYY-MM-DD'),
  outDir: z.string().min(1, 'must be the output root'),
  reuse: reuseSchema.optional(),
  changesAgainst: z.string().regex(SNAPSHOT_ID_PATTERN, 'must be a snapshot id').optional(),
  formats: z.array(formats).min(1),
  datasets: z.array(datasets).min(1),
  /** Parts in the flow (companies x datasets). */
  total: z.number().int().nonnegative(),
});

const nightlyTriggerSchema = z.strictObject({
  v: z.literal(1, 'must be 1 (payload version)'),
  /** Time zone that dates the snapshot (the scheduler's tz). */
  tz: z.string().min(1),
  companies: z.array(companySchema).min(1, 'must name at least one company'),
  datasets: z.array(datasets).min(1),
  formats: z.array(formats).min(1),
  outDir: z.string().min(1),
});

const count = z.number().int().nonnegative();

// The target is not in the payload: it may hold a password, and Redis is no place for one.
const loadSnapshotSchema = z.strictObject({
  v: z.literal(1, 'must be 1 (payload version)'),
  snapshotId: z.string().regex(SNAPSHOT_ID_PATTERN, 'must be a snapshot id'),
  outDir: z.string().min(1, 'must be the output root'),
});

const convertSegmentSchema = z
  .strictObject({
    v: z.literal(1, 'must be 1 (payload version)'),
    snapshotId: z.string().regex(SNAPSHOT_ID_PATTERN, 'must be a snapshot id'),
    outDir: z.string().min(1, 'must be the output root'),
    dataset: datasets,
    /** Absolute paths: the staged file being written and its final name. */
    file: z.string().min(1),
    finalFile: z.string().min(1),
    stagingId: z.string().regex(/^[0-9a-f]{8,64}$/, 'must be a staging id (hex)'),
    skip: count,
    take: count.min(1, 'must be at least 1'),
    cut: z.strictObject({ offset: count, end: count, row: count, rows: count }),
    fields: z.strictObject({ names: z.array(z.string()), kinds: z.array(count) }),
    maxLineChars: count,
  })
  .refine((p) => p.fields.names.length === p.fields.kinds.length, 'fields: names and kinds differ in length')
  .refine(
    (p) =>
      p.finalFile.startsWith(join(p.outDir, '_staging', p.snapshotId, p.dataset) + sep) &&
      p.finalFile.endsWith('.ndjson.gz') &&
      p.file.startsWith(`${p.finalFile}.tmp-`),
    'file: must be a staged part of the snapshot under outDir (and its temporary name)',
  )
  .refine(
    (p) => p.cut.end > p.cut.offset && p.cut.row <= p.skip && p.skip + p.take <= p.cut.row + p.cut.rows,
    'cut: must hold rows [skip, skip + take) in bytes [offset, end)',
  );

export type ExportPartPayload = z.infer<typeof exportPartSchema>;
export type ConvertSegmentPayload = z.infer<typeof convertSegmentSchema>;
export type PublishSnapshotPayload = z.infer<typeof publishSnapshotSchema>;
export type NightlyTriggerPayload = z.infer<typeof nightlyTriggerSchema>;
export type LoadSnapshotPayload = z.infer<typeof loadSnapshotSchema>;

/** Checks the job data of a load-snapshot job; throws an InputError naming the bad field. */
export function parseLoadSnapshotPayload(data: unknown): LoadSnapshotPayload {
  return parsePayload(loadSnapshotSchema, data, LOAD_SNAPSHOT_JOB);
}

/** Checks the job data of an export-part job; throws an InputError naming the bad field. */
export function parseExportPartPayload(data: unknown): ExportPartPayload {
  return parsePayload(exportPartSchema, data, EXPORT_PART_JOB);
}

/** Checks the job data of a publish-snapshot job; throws an InputError naming the bad field. */
export function parsePublishSnapshotPayload(data: unknown): PublishSnapshotPayload {
  return parsePayload(publishSnapshotSchema, data, PUBLISH_SNAPSHOT_JOB);
}

/** Checks the job data of a convert-segment job; throws an InputError naming the bad field. */
export function parseConvertSegmentPayload(data: unknown): ConvertSegmentPayload {
  return parsePayload(convertSegmentSchema, data, CONVERT_SEGMENT_JOB);
}

/** Checks the job data of a nightly-trigger job; throws an InputError naming the bad field. */
export function parseNightlyTriggerPayload(data: unknown): NightlyTriggerPayload {
  return parsePayload(nightlyTriggerSchema, data, NIGHTLY_TRIGGER_JOB);
}
