/**
 * `filings-export run`: enqueue a snapshot now; `--wait` follows it to its end and prints one
 * JSON line on stdout; `--local` also runs the workers in this process (implies --wait).
 * Exit code: 0 published (or enqueued without --wait), 1 failed, stopped or cancelled.
 */
import type { Command } from 'commander';
import type { Config, FlagOverride } from '../../config/load.js';
import type * as Pipeline from '../../pipeline/index.js';
import type { SnapshotSpec, SnapshotView } from '../../pipeline/index.js';
import type { CliApp } from '../app.js';
import type { CommonCliOptions } from '../command-support.js';
import { commaList, configOption, integer } from '../option-parsers.js';

export interface RunCliOptions extends CommonCliOptions {
  tickers?: string[];
  universeFile?: string;
  datasets?: string[];
  formats?: string[];
  out?: string;
  snapshotId?: string;
  wait?: boolean;
  local?: boolean;
  allowMultiDay?: boolean;
  retry?: boolean;
  fullRefresh?: boolean;
  metricsPort?: number;
}

export function register(program: Command, app: CliApp): void {
  const cmd = program
    .command('run')
    .description('Export a snapshot now (prints the plan; --wait follows it and ends with one JSON line)');
  configOption(cmd)
    .option(
      '--tickers <list>',
      'companies, comma-separated: tickers (any case) and/or CIKs (320193, 0000320193, CIK0000320193) (default: config universe)',
      commaList,
    )
    .option(
      '--universe-file <file>',
      'companies from a file: one per line, or CSV with a ticker or cik column',
    )
    .option('--datasets <list>', 'datasets, comma-separated (default: config datasets)', commaList)
    .option('--formats <list>', 'parquet and/or ndjson (default: config output.formats)', commaList)
    .option('--out <dir>', 'output root (default: config output.dir, $FILINGS_EXPORT_OUT)')
    .option('--snapshot-id <id>', 'name the snapshot (default: adhoc-<date>-<hash of the request>)')
    .option('--wait', 'follow the snapshot to its end with progress; print one JSON line')
    .option('--local', 'also run the workers in this process (implies --wait)')
    .option('--allow-multi-day', 'start even when the snapshot exceeds the remaining monthly quota')
    .option('--retry', 'run a failed, stopped or cancelled snapshot again (finished parts are reused)')
    .option('--full-refresh', 'fetch every part, even those an earlier snapshot could carry over')
    .option(
      '--metrics-port <n>',
      'with --local: serve Prometheus /metrics, /healthz and /readyz on this port',
      integer('--metrics-port', 0, 65535),
    )
    .action(async (o: RunCliOptions) => run(o, app));
}

export async function run(o: RunCliOptions, app: CliApp): Promise<void> {
  const [{ requireApiKey }, { onShutdownSignal, setup, shutdownBoundMs }, p] = await Promise.all([
    import('../../config/load.js'),
    import('../command-support.js'),
    import('../../pipeline/index.js'),
  ]);
  const { openExporter, redactUrl, resultLine, runSnapshot } = p;
  const flags: FlagOverride[] = [
    { path: 'datasets', value: o.datasets, flag: '--datasets' },
    { path: 'output.formats', value: o.formats, flag: '--formats' },
    { path: 'output.dir', value: o.out, flag: '--out' },
    { path: 'budget.allow_multi_day', value: o.allowMultiDay ? true : undefined, flag: '--allow-multi-day' },
  ];
  const { config, logger } = setup(o, flags);
  const apiKey = requireApiKey(config);
  const spec = await snapshotSpec(o, config, p);

  // With --local on a terminal, the workers' routine info lines would break the progress bars.
  const quiet = o.local === true && process.stderr.isTTY === true && config.log.level === 'info';
  const exporter = await openExporter({
    config,
    logger: quiet ? logger.child({}, { level: 'warn' }) : logger,
    apiKey,
    definitions: await app.loadJobs(),
  });
  const served = await serveLocalMetrics(o, config, exporter, p);
  if (served) logger.info({ url: `${served.server.url}/metrics` }, 'metrics served');
  const abort = new AbortController();
  const redis = `Redis at ${redactUrl(config.redis.url)}`;
  // What a forced exit leaves undone, named in its line: it moves on as closing moves on.
  let closing = `waiting for ${redis} to answer: snapshot ${spec.id}'s record may not say it stopped`;
  const offSignals = onShutdownSignal(
    (signal) => {
      logger.warn(
        `${signal}: stopping (the snapshot itself goes on in other workers; run it again to follow it)`,
      );
      abort.abort(new Error(`interrupted by ${signal}`));
    },
    { forceExitMs: shutdownBoundMs(config), closing: () => closing },
  );
  try {
    const wait = o.wait === true || o.local === true;
    let record;
    try {
      ({ record } = await runSnapshot({
        exporter,
        spec,
        retry: o.retry === true,
        fullRefresh: o.fullRefresh === true,
        allowMultiDay: config.budget.allow_multi_day,
        local: o.local === true,
        wait,
        logger,
        signal: abort.signal,
        ...(served ? { metrics: served.metrics } : {}),
      }));
    } catch (err: unknown) {
      if (!abort.signal.aborted) throw err;
      process.stderr.write(
        `stopped following snapshot ${spec.id}; see it with: filings-export status ${spec.id}\n`,
      );
      process.exitCode = 130;
      return;
    }
    process.stdout.write(`${resultLine(record)}\n`);
    reportEnd(record, p.missingDetailLines);
  } finally {
    closing = `closing the workers and ${redis}: parts they held go back to the queue when their locks expire (worker.lock_duration_ms)`;
    await exporter.close();
    await served?.close();
    offSignals();
  }
}

/** `run --local`'s metrics endpoint, when a port is set; a port that cannot be had closes the exporter and ends the command. */
async function serveLocalMetrics(
  o: RunCliOptions,
  config: Config,
  exporter: Pipeline.Exporter,
  p: typeof Pipeline,
): Promise<Awaited<ReturnType<typeof Pipeline.serveMetrics>> | undefined> {
  const metricsPort = o.metricsPort ?? config.worker.metrics_port;
  if (o.local !== true || metricsPort === null) return undefined;
  return p
    .serveMetrics(exporter, { port: metricsPort, host: config.worker.metrics_host })
    .catch(async (err: unknown) => {
      await exporter.close();
      throw err;
    });
}

/** The snapshot asked for: --tickers and --universe-file, else the config's universe. */
async function snapshotSpec(o: RunCliOptions, config: Config, p: typeof Pipeline): Promise<SnapshotSpec> {
  const { buildSnapshotSpec, loadUniverse, readUniverseFile, dedupe } = p;
  const companies =
    o.tickers || o.universeFile
      ? dedupe([
          ...(o.tickers ? await loadUniverse({ tickers: o.tickers, tickersLabel: '--tickers' }) : []),
          ...(o.universeFile ? await readUniverseFile(o.universeFile) : []),
        ])
      : await loadUniverse(config.universe);
  return buildSnapshotSpec({
    companies,
    datasets: config.datasets,
    formats: config.output.formats,
    outDir: config.output.dir,
    ...(o.snapshotId !== undefined ? { snapshotId: o.snapshotId } : {}),
    now: Date.now(),
    timeZone: config.schedule.tz,
  });
}

/**
 * How the snapshot ended, on stderr, with a line per company the API did not know, and the exit
 * code: 1 when it failed, was stopped or cancelled (also when no company was found).
 */
function reportEnd(record: SnapshotView, missingDetailLines: typeof Pipeline.missingDetailLines): void {
  if (record.state === 'failed' || record.state === 'stopped' || record.state === 'cancelled') {
    process.stderr.write(`snapshot ${record.spec.id} ${record.state}: ${record.message ?? ''}\n`);
    process.exitCode = 1;
  } else if (record.state === 'published') {
    process.stderr.write(`snapshot ${record.spec.id} published: ${record.manifest ?? ''}\n`);
  }
  for (const line of missingDetailLines(record.missing, record.missingCount))
    process.stderr.write(`${line}\n`);
}
