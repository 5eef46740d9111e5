/**
 * The configuration schema, declared once. Field names are the ones users write in YAML/JSON
 * (snake_case), so an error path such as `config.budget.share` is exactly what they must edit.
 * Every field is required here: config/defaults.yaml is the bottom layer and supplies all of them
 * but `datasets`, whose default set the dataset registry states (src/config/load.ts).
 */
import { CronExpressionParser } from 'cron-parser';
import { z } from 'zod';
import { BUDGET_SETTINGS_SCHEMA } from '../budget/settings.js';
import { DATASETS, OUTPUT_FORMATS } from '../types.js';
import { parseRedisUrl } from './redis-url.js';

const posInt = z.number().int('must be a whole number').positive('must be greater than 0');
const fraction = (what: string) =>
  z.number().min(0, `must be between 0 and 1 (${what})`).max(1, `must be between 0 and 1 (${what})`);

/** Queue names, key prefixes and scheduler ids end up in Redis keys and BullMQ job ids: no ':'. */
const redisName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'must be 1-64 letters, digits, ".", "_" or "-" (no ":")');

const httpUrl = z
  .string()
  .refine((s) => /^https?:\/\/[^\s]+$/.test(s) && URL.canParse(s), 'must be an http(s) URL');

const redisUrl = z.string().superRefine((s, ctx) => {
  const target = parseRedisUrl(s);
  if (typeof target === 'string') ctx.addIssue({ code: 'custom', message: target });
});

/** A key prefix may carry a Redis Cluster hash tag (`{fx}`): braces too, still no ':'. */
const redisPrefix = z
  .string()
  .regex(
    /^[A-Za-z0-9{}][A-Za-z0-9._{}-]{0,63}$/,
    'must be 1-64 letters, digits, ".", "_", "-" or a {hash tag} (no ":")',
  );

/** IANA time zone, checked against the runtime's tz database. */
const timeZone = z.string().refine((tz) => {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}, 'must be an IANA time zone such as UTC or America/New_York');

/**
 * Five (minute-based) or six (with seconds) cron fields, checked by the parser BullMQ's job
 * scheduler uses (cron-parser), so a pattern that `schedule` would reject fails here, at start.
 */
const cron = z.string().superRefine((s, ctx) => {
  if (![5, 6].includes(s.trim().split(/\s+/).length)) {
    ctx.addIssue({ code: 'custom', message: 'must be a cron pattern with 5 or 6 fields' });
    return;
  }
  try {
    CronExpressionParser.parse(s, { tz: 'UTC' });
  } catch (err: unknown) {
    ctx.addIssue({ code: 'custom', message: `is not a valid cron pattern: ${(err as Error).message}` });
  }
});

export { CIK_PATTERN, CIK_PATTERN_10, TICKER_PATTERN } from '../contract/vocabulary.js';

const keepJobs = z.strictObject({
  /** Seconds a finished job stays in Redis. */
  age_seconds: posInt,
  /** Finished jobs kept at most, newest first. */
  count: posInt,
});

/** pino's levels: the one rule for log.level and for LOG_LEVEL (envLogLevel in load.ts). */
export const LOG_LEVEL = z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
  error: 'must be one of fatal, error, warn, info, debug, trace, silent',
});

export const configSchema = z.strictObject({
  api: z.strictObject({
    url: httpUrl,
    /** File holding the API key (a mounted secret). The key itself never appears in config. */
    key_file: z.string().min(1).nullable(),
    /** Time from sending a request to its complete response headers. */
    headers_timeout_ms: posInt,
    /** Longest silence between two chunks of a response body. */
    body_timeout_ms: posInt,
  }),
  redis: z.strictObject({
    url: redisUrl,
    /**
     * BullMQ key prefix: separate deployments sharing one Redis use different prefixes. On a
     * cluster it carries a hash tag (`{fx}`; a prefix without one is wrapped, src/config/redis-url.ts).
     */
    prefix: redisPrefix,
  }),
  queue: z.strictObject({
    /** Base name; the pipeline uses `<name>-parts` and `<name>-snapshots`. */
    name: redisName,
    /**
     * How long a running snapshot may go with no worker connected to its parts queue and no part
     * ending before `run --wait` and `status` say so (0: at once).
     */
    no_worker_after_ms: z.number().int('must be a whole number').min(0, 'must be 0 or more'),
  }),
  universe: z.strictObject({
    tickers: z.array(z.string()),
    ciks: z.array(z.string()),
    /** File of tickers/CIKs: one per line, or CSV with a `ticker` or `cik` column. */
    file: z.string().min(1).nullable(),
  }),
  datasets: z
    .array(z.enum(DATASETS, { error: `must be one of ${DATASETS.join(', ')}` }))
    .min(1, 'must name at least one dataset'),
  output: z.strictObject({
    dir: z.string().min(1, 'must not be empty'),
    formats: z
      .array(z.enum(OUTPUT_FORMATS, { error: `must be one of ${OUTPUT_FORMATS.join(', ')}` }))
      .min(1, 'must name at least one format'),
    /** DuckDB memory limit while publishing; null = the output module's default. */
    publish_memory_mb: posInt.min(64, 'must be at least 64').nullable(),
    /** DuckDB threads while publishing; null = the output module's default. */
    publish_threads: posInt.max(64, 'must be at most 64').nullable(),
    /** Concurrent conversions of one big output file (row ranges, concatenated); each adds memory. */
    publish_conversions: posInt.max(64, 'must be at most 64'),
    /** Convert big parts in pieces of whole row groups while they are staged (control workers). */
    convert_while_staging: z.boolean({ error: 'must be true or false' }),
    /** Parquet row-group size in rows (publishing memory follows it); null = the output module's default. */
    row_group_rows: posInt
      .min(1024, 'must be at least 1024')
      .max(1_048_576, 'must be at most 1048576')
      .nullable(),
    /**
     * Load each published snapshot into this warehouse (`duckdb:PATH` or `postgres://…`), as a
     * `load-snapshot` job after publish; null = no load. Prefer PGPASSWORD or .pgpass over a
     * password in the URL; a URL's password is redacted whenever the config is printed.
     */
    load_into: z
      .string()
      .regex(/^(duckdb:.+|postgres(ql)?:\/\/.*)$/, 'must be duckdb:PATH or postgres://user@host:port/db')
      .nullable(),
    /** With load_into: also keep `<dataset>_history` (point-in-time versions), as `load --history` does. */
    load_history: z.boolean({ error: 'must be true or false' }),
    /**
     * Commit each published snapshot to its datasets' Apache Iceberg tables (docs/iceberg.md), by
     * the publisher, after `_SUCCESS`; a failed commit is retried and never unpublishes the snapshot.
     */
    iceberg: z.boolean({ error: 'must be true or false' }),
    /** Settings of an `s3://bucket/prefix` root; credentials come only from the AWS default chain. */
    s3: z.strictObject({
      /** Endpoint of a non-AWS server (MinIO, R2, GCS interoperability); null = AWS. */
      endpoint: z.url({ error: 'must be a URL such as http://127.0.0.1:9000' }).nullable(),
      /** Region; null = AWS_REGION / the profile's, else us-east-1. */
      region: z.string().min(1, 'must not be empty').nullable(),
      /** Path-style addressing (endpoint/bucket/key), needed by most self-hosted servers. */
      force_path_style: z.boolean({ error: 'must be true or false' }),
      /** SDK request checksums: when_supported (SDK default) or when_required (servers that reject them). */
      checksums: z.enum(['when_supported', 'when_required'], {
        error: 'must be when_supported or when_required',
      }),
    }),
  }),
  schedule: z.strictObject({
    cron,
    tz: timeZone,
    scheduler_id: redisName,
  }),
  worker: z.strictObject({
    /** Part jobs in flight per worker process. High enough that the rate limit, not this, sets the pace. */
    concurrency: posInt.max(1000, 'must be at most 1000'),
    /** Publish and trigger jobs in flight per worker process. */
    control_concurrency: posInt.max(16, 'must be at most 16'),
    lock_duration_ms: posInt.min(5000, 'must be at least 5000'),
    /** Serve Prometheus metrics, /healthz and /readyz on this port; null = off. */
    metrics_port: z.number().int().min(0).max(65535, 'must be a TCP port (0 to 65535)').nullable(),
    /** Address of the metrics endpoint. Loopback unless you mean to expose it. */
    metrics_host: z.string().min(1),
    shutdown_timeout_ms: posInt,
    /**
     * Local scratch directory for an `s3://` root: a part is staged here before its upload, and the
     * publisher builds the snapshot here (about the snapshot's size). null = the OS temp dir.
     */
    tmp_dir: z.string().min(1, 'must not be empty').nullable(),
  }),
  retry: z.strictObject({
    /** Attempts per part for transient failures (5xx, timeouts, resets, truncated bodies). */
    attempts: posInt.max(100, 'must be at most 100'),
    base_delay_ms: posInt,
    max_delay_ms: posInt,
    jitter: fraction('share of the delay randomised'),
    /** Consecutive connection/timeout/5xx failures, across parts, that mean the API is away. */
    outage_after_failures: posInt.max(1000, 'must be at most 1000'),
    /** First probe of an outage after this long; doubles per failed probe up to outage_probe_max_ms. */
    outage_probe_base_ms: posInt,
    outage_probe_max_ms: posInt,
    /** How long the queue holds for an API outage before the parts that meet it fail. */
    outage_max_ms: posInt,
  }),
  incremental: z.strictObject({
    /** Carry unchanged companies' parts over from the previous published snapshot (docs/pipeline.md). */
    enabled: z.boolean({ error: 'must be true or false' }),
    /** Fetch everything again when the last full snapshot of the chain is this many days old. */
    full_refresh_every_days: posInt.max(366, 'must be at most 366'),
  }),
  retention: z.strictObject({
    completed_jobs: keepJobs,
    failed_jobs: keepJobs,
    /** Approximate cap of the BullMQ events stream per queue. */
    events_max_len: posInt,
    /** Days a snapshot's record (status, counts, manifest path) stays in Redis; also how long its id stays taken. */
    snapshot_record_days: posInt,
  }),
  /** The budget's settings: their rules live with the budget (src/budget/settings.ts). */
  budget: BUDGET_SETTINGS_SCHEMA,
  dashboard: z.strictObject({
    /** `filings-export dashboard` port. */
    port: z.number().int().min(0).max(65535, 'must be a TCP port (0 to 65535)'),
    /** Listening address: loopback unless you mean to expose it (then a token is required). */
    host: z.string().min(1),
  }),
  log: z.strictObject({
    level: LOG_LEVEL,
    /** Human-readable lines; `auto` = when stderr is a terminal. */
    pretty: z.union([z.boolean(), z.literal('auto')], { error: 'must be true, false or auto' }),
  }),
});

/** The validated file/env/flag configuration (without the secret). */
export type FileConfig = z.infer<typeof configSchema>;
