/**
 * The job contract between the code that enqueues (flow.ts, schedule.ts, the worker runner) and the
 * processors in jobs/: per job type its name, queue, payload schema and the options it is enqueued
 * with (attempts, backoff, retention). It lives here, below jobs/, so that the enqueuing side never
 * imports jobs/ (the arrow goes one way: jobs/ → src/); each jobs/<type>.ts definition takes its
 * contract from `JOB_TYPES`. Payloads arrive as unknown JSON from Redis and are parsed before any
 * use; `v` versions them.
 */
import { join, sep } from 'node:path';
import type { JobsOptions, KeepJobs } from 'bullmq';
import { z } from 'zod';
import { CIK_PATTERN_10, TICKER_PATTERN } from '../../contract/vocabulary.js';
import { DATASETS, OUTPUT_FORMATS } from '../../types.js';
import { BACKOFF_TYPE } from '../part/index.js';
import { SNAPSHOT_ID_PATTERN } from './ids.js';
import { parsePayload } from './payload.js';

/**
 * The two queues of a deployment: `parts` holds export-part jobs, rate-limited by the budget (one
 * job start = one request); `snapshots` holds the control jobs, not rate-limited.
 */
export const QUEUE_ROLES = ['parts', 'snapshots'] as const;
export type QueueRole = (typeof QUEUE_ROLES)[number];

/** What the options of every job type derive from (config `retry.*` and `retention.*`). */
export interface JobSettings {
  /** Attempts per part for transient failures (retry.attempts); the publish job and trigger too. */
  attempts: number;
  keepCompleted: KeepJobs;
  keepFailed: KeepJobs;
  /** First retry delay of the publish job and the nightly trigger (retry.base_delay_ms); doubles per attempt. */
  controlBackoffMs: number;
}

/** One job type's contract: what both its producers (src/) and its definition (jobs/) know. */
export interface JobType<N extends string = string, P = unknown> {
  readonly name: N;
  readonly queue: QueueRole;
  /** Checks job data (unknown JSON from Redis); throws an InputError naming the bad field. */
  parse(data: unknown): P;
  /** Attempts, backoff and retention of every job of this type (ids and priorities are per job). */
  options(s: JobSettings): JobsOptions;
}

function jobType<N extends string, P>(
  name: N,
  queue: QueueRole,
  schema: z.ZodType<P>,
  options: (s: JobSettings) => JobsOptions,
): JobType<N, P> {
  return { name, queue, parse: (data) => parsePayload(schema, data, name), options };
}

const retention = (s: JobSettings): JobsOptions => ({
  removeOnComplete: s.keepCompleted,
  removeOnFail: s.keepFailed,
});
/** Publish and trigger: the configured retries, as for parts (a disk hiccup, a Redis blip), plain exponential. */
const controlRetries = (s: JobSettings): JobsOptions => ({
  attempts: s.attempts,
  backoff: { type: 'exponential', delay: s.controlBackoffMs },
  ...retention(s),
});

const datePattern = /^\d{4}-\d{2}-\d{2}$/;

// `typed`: the company as the user typed it, for messages only (record/universe.ts).
const typed = z.string().min(1).max(100).optional();

const companySchema = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('ticker'),
    ticker: z
      .string()
      .regex(TICKER_PATTERN, 'must be a ticker')
      .refine((t) => t === t.toUpperCase(), 'must be an upper-case ticker'),
    typed,
  }),
  z.strictObject({
    kind: z.literal('cik'),
    cik: z.string().regex(CIK_PATTERN_10, 'must be a 10-digit CIK'),
    typed,
  }),
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

const convertPieceSchema = z
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
    /** Size of the piece's uncompressed file (src/output/staged-part/layout.ts), when the part writer wrote one. */
    plainBytes: count.optional(),
    /** The rows are in that file only (staged outside the gzip): `cut` names no bytes. */
    plainOnly: z.literal(true).optional(),
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
    (p) =>
      (p.plainOnly === true || p.cut.end > p.cut.offset) &&
      p.cut.row <= p.skip &&
      p.skip + p.take <= p.cut.row + p.cut.rows,
    'cut: must hold rows [skip, skip + take) in bytes [offset, end)',
  )
  .refine((p) => p.plainOnly !== true || p.plainBytes !== undefined, 'plainOnly: needs plainBytes');

export type ExportPartPayload = z.infer<typeof exportPartSchema>;
export type ConvertPiecePayload = z.infer<typeof convertPieceSchema>;
export type PublishSnapshotPayload = z.infer<typeof publishSnapshotSchema>;
export type NightlyTriggerPayload = z.infer<typeof nightlyTriggerSchema>;
export type LoadSnapshotPayload = z.infer<typeof loadSnapshotSchema>;

/** One part of a snapshot: one (company, dataset), one API request per attempt. */
export const EXPORT_PART = jobType('export-part', 'parts', exportPartSchema, (s) => ({
  attempts: s.attempts,
  backoff: { type: BACKOFF_TYPE },
  // A part that fails for good must not keep its parent waiting: the parent records it as failed.
  ignoreDependencyOnFailure: true,
  ...retention(s),
}));
/** The parent of a snapshot's flow: publishes once every part has finished. */
export const PUBLISH_SNAPSHOT = jobType(
  'publish-snapshot',
  'snapshots',
  publishSnapshotSchema,
  controlRetries,
);
/** What the nightly job scheduler produces: enqueues `nightly-YYYY-MM-DD`. */
export const NIGHTLY_TRIGGER = jobType('nightly-trigger', 'snapshots', nightlyTriggerSchema, controlRetries);
/** A piece of a big part (rows of whole row groups) converted while the part is still staged
 * (src/output/staged-part/parquet/convert-piece.ts). One try: a piece that fails is converted at
 * publish instead. Its wire name is the older version's, so its queued jobs still run. */
export const CONVERT_PIECE = jobType('convert-segment', 'snapshots', convertPieceSchema, (s) => ({
  attempts: 1,
  ...retention(s),
}));
/** Loads the published snapshots into the warehouse of `output.load_into`: 6 attempts, 30 s
 * doubling (about 30 minutes in all), its own retention. */
export const LOAD_SNAPSHOT = jobType('load-snapshot', 'snapshots', loadSnapshotSchema, () => ({
  attempts: 6,
  backoff: { type: 'exponential', delay: 30_000 },
  removeOnComplete: { count: 100 },
  removeOnFail: { count: 100 },
}));

/** Every job type, once: jobs/index.ts defines each, the worker runner refuses a list that differs. */
export const JOB_TYPES = [
  EXPORT_PART,
  PUBLISH_SNAPSHOT,
  NIGHTLY_TRIGGER,
  CONVERT_PIECE,
  LOAD_SNAPSHOT,
] as const;
export type JobName = (typeof JOB_TYPES)[number]['name'];
export const JOB_NAMES: readonly JobName[] = JOB_TYPES.map((t) => t.name);

export const EXPORT_PART_JOB = EXPORT_PART.name;
export const PUBLISH_SNAPSHOT_JOB = PUBLISH_SNAPSHOT.name;
export const NIGHTLY_TRIGGER_JOB = NIGHTLY_TRIGGER.name;
export const CONVERT_PIECE_JOB = CONVERT_PIECE.name;
export const LOAD_SNAPSHOT_JOB = LOAD_SNAPSHOT.name;

export const parseExportPartPayload = EXPORT_PART.parse;
export const parsePublishSnapshotPayload = PUBLISH_SNAPSHOT.parse;
export const parseNightlyTriggerPayload = NIGHTLY_TRIGGER.parse;
export const parseConvertPiecePayload = CONVERT_PIECE.parse;
export const parseLoadSnapshotPayload = LOAD_SNAPSHOT.parse;
