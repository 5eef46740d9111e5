/**
 * `filings-export demo` (`npm run demo`): the whole product on one machine. When REDIS_URL and
 * FILINGS_API_URL are unset it starts a private redis-server and the emulator in process (demo
 * key), exports every bundled company's default datasets with progress, prints where the
 * snapshot is, loads it into out/warehouse.duckdb and queries its facts_full table, then closes everything it started.
 */
import { join, relative, resolve } from 'node:path';
import type { Command } from 'commander';
import type { Config, FlagOverride } from '../../config/load.js';
import { counted, plural } from '../../counted.js';
import type { DataStore, RunningEmulator } from '../../emulator/index.js';
import type { PrivateRedis } from '../../infra/redis-server.js';
import type { Company, Exporter, SnapshotView } from '../../pipeline/index.js';
import type { CliApp } from '../app.js';
import type { CommonCliOptions } from '../command-support.js';
import { commaList, configOption } from '../option-parsers.js';

export interface DemoCliOptions extends CommonCliOptions {
  out?: string;
  tickers?: string[];
}

export function register(program: Command, app: CliApp): void {
  const cmd = program
    .command('demo')
    .description('Export every bundled company with a private Redis and emulator, then query it with DuckDB');
  configOption(cmd)
    .option('--out <dir>', 'output root (default: ./out)')
    .option('--tickers <list>', 'only these bundled companies', commaList)
    .action(async (o: DemoCliOptions) => run(o, app));
}

export async function run(o: DemoCliOptions, app: CliApp): Promise<void> {
  const m = await importDemoModules();
  const out: DemoOutput = {
    say: (line) => void process.stderr.write(`${line}\n`),
    print: (line) => void process.stdout.write(`${line}\n`),
  };
  const started: StartedServices = {};
  let exporter: Exporter | undefined;
  const store = await m.loadStore({ validate: false });
  const abort = new AbortController();
  // Bound before the config is read: the default worker.shutdown_timeout_ms (30 s) plus the margin.
  const offSignals = m.onShutdownSignal((signal) => abort.abort(new Error(`interrupted by ${signal}`)), {
    forceExitMs: 30_000 + m.CLOSE_MARGIN_MS,
    closing: () => 'closing the demo: its workers, Redis and the emulator',
  });
  try {
    const { env, flags } = await startMissingServices(o, m, store, started, out);
    const config = m.loadConfig({ ...(o.config !== undefined ? { configPath: o.config } : {}), env, flags });
    // The demo is for people: readable lines on a terminal, a pipe or a file alike (not JSON for a
    // log collector, as a worker writes), unless log.pretty is set to false.
    const logger = m.createLogger({ level: config.log.level, pretty: config.log.pretty !== false });
    // The workers' routine info lines would drown the progress display: warnings and errors only.
    const workerLogger = config.log.level === 'info' ? logger.child({}, { level: 'warn' }) : logger;
    const companies = demoCompanies(o, store, m.parseCompany);
    const { id, date } = demoSnapshotName(new Date());
    out.say(
      `demo: exporting ${counted(companies.length, 'company', 'companies')} x ${config.datasets.join(', ')} as snapshot ${id}`,
    );

    exporter = await m.openExporter({
      config,
      logger: workerLogger,
      apiKey: m.requireApiKey(config),
      definitions: await app.loadJobs(),
    });
    const startedAt = Date.now();
    const { record } = await m.runSnapshot({
      exporter,
      spec: {
        id,
        date,
        trigger: 'manual',
        companies,
        datasets: config.datasets,
        formats: config.output.formats,
        outDir: config.output.dir,
      },
      allowMultiDay: config.budget.allow_multi_day,
      local: true,
      wait: true,
      logger,
      signal: abort.signal,
    });
    const seconds = ((Date.now() - startedAt) / 1000).toFixed(1);
    if (!printSnapshot(m, out, { config, record, id, date, seconds })) {
      process.exitCode = 1;
      return;
    }
    if (!config.output.formats.includes('parquet')) return;
    const database = await loadIntoDuckDb(config, id, out);
    await printRevenueQuery(m, out, database, companies);
    if (config.output.iceberg) await printIcebergScan(config, out);
  } finally {
    await exporter?.close();
    await started.emulator?.close();
    await started.redis?.close();
    await store.close();
    offSignals();
  }
}

/** The modules the demo runs on, loaded together on first use so `--help` stays quick. */
async function importDemoModules() {
  const [config, emulator, redis, log, support, types, pipeline, query] = await Promise.all([
    import('../../config/load.js'),
    import('../../emulator/index.js'),
    import('../../infra/redis-server.js'),
    import('../../log.js'),
    import('../command-support.js'),
    import('../../types.js'),
    import('../../pipeline/index.js'),
    import('../demo-query.js'),
  ]);
  return {
    loadConfig: config.loadConfig,
    requireApiKey: config.requireApiKey,
    DEMO_API_KEY: emulator.DEMO_API_KEY,
    loadStore: emulator.loadStore,
    startEmulator: emulator.startEmulator,
    startPrivateRedis: redis.startPrivateRedis,
    createLogger: log.createLogger,
    onShutdownSignal: support.onShutdownSignal,
    CLOSE_MARGIN_MS: support.CLOSE_MARGIN_MS,
    DEFAULT_DATASETS: types.DEFAULT_DATASETS,
    DEMO_METRIC: query.DEMO_METRIC,
    annualRevenueTableSql: query.annualRevenueTableSql,
    groupDigits: query.groupDigits,
    queryAnnualRevenueTable: query.queryAnnualRevenueTable,
    openExporter: pipeline.openExporter,
    runSnapshot: pipeline.runSnapshot,
    parseCompany: pipeline.parseCompany,
  };
}

type DemoModules = Awaited<ReturnType<typeof importDemoModules>>;

/** `say` goes to stderr (what the demo is doing), `print` to stdout (what it produced). */
interface DemoOutput {
  say(line: string): void;
  print(line: string): void;
}

/** What the demo started itself, so it closes exactly those. */
interface StartedServices {
  redis?: PrivateRedis;
  emulator?: RunningEmulator;
}

/**
 * Starts a private redis-server unless REDIS_URL is set and the emulator (with the demo key)
 * unless FILINGS_API_URL is set, recording each in `started` as soon as it runs; returns the
 * environment and flag layers that point the config at them.
 */
async function startMissingServices(
  o: DemoCliOptions,
  m: DemoModules,
  store: DataStore,
  started: StartedServices,
  out: DemoOutput,
): Promise<{ env: NodeJS.ProcessEnv; flags: FlagOverride[] }> {
  const env = { ...process.env };
  const flags: FlagOverride[] = [
    {
      path: 'output.dir',
      value: o.out,
      flag: '--out',
    },
    { path: 'datasets', value: [...m.DEFAULT_DATASETS], flag: 'demo' },
  ];
  // An empty variable is refused by the config (not read as unset), so only an absent one starts ours.
  if (env.REDIS_URL === undefined) {
    started.redis = await m.startPrivateRedis();
    flags.push({ path: 'redis.url', value: started.redis.url, flag: 'demo (private redis-server)' });
    out.say(`demo: started a private redis-server at ${started.redis.url} (set REDIS_URL to use yours)`);
  }
  if (env.FILINGS_API_URL === undefined) {
    started.emulator = await m.startEmulator({ port: 0, store });
    env.FILINGS_API_KEY = m.DEMO_API_KEY;
    delete env.FILINGS_API_KEY_FILE;
    flags.push({ path: 'api.url', value: started.emulator.url, flag: 'demo (emulator)' });
    out.say(
      `demo: started the emulator at ${started.emulator.url} with the public demo key (set FILINGS_API_URL to use a real API)`,
    );
  }
  return { env, flags };
}

/** `--tickers`, else every bundled (not synthetic) company of the store. */
function demoCompanies(
  o: DemoCliOptions,
  store: DataStore,
  parseCompany: DemoModules['parseCompany'],
): Company[] {
  const bundled = store.companies().filter((c) => !c.synthetic);
  return (o.tickers ?? bundled.map((c) => c.ticker ?? c.cik)).map((t, i) =>
    parseCompany(t, o.tickers ? `--tickers[${i}]` : 'bundled company'),
  );
}

/** `demo-YYYYMMDD-HHMMSS` (UTC) and its date. */
function demoSnapshotName(now: Date): { id: string; date: string } {
  const id = `demo-${now.toISOString().slice(0, 19).replace(/[-:]/g, '').replace('T', '-')}`;
  return { id, date: now.toISOString().slice(0, 10) };
}

/** A path relative to the working directory when it lies below it; s3:// roots as they are. */
function shownPath(p: string): string {
  if (/^s3:\/\//i.test(p)) return p;
  const r = relative(process.cwd(), p);
  return r === '' ? '.' : r.startsWith('..') ? p : r;
}

/** Prints the snapshot's result, rows per dataset and where its files are; false unless it was published. */
function printSnapshot(
  m: DemoModules,
  { print }: DemoOutput,
  s: { config: Config; record: SnapshotView; id: string; date: string; seconds: string },
): boolean {
  print('');
  if (s.record.state !== 'published') {
    print(`snapshot ${s.id} ${s.record.state}: ${s.record.message ?? ''}`);
    return false;
  }
  print(`snapshot ${s.id} published in ${s.seconds} s`);
  for (const [ds, p] of Object.entries(s.record.progress))
    print(
      `  ${ds.padEnd(15)} ${m.groupDigits(String(p.rows)).padStart(10)} ${plural(p.rows, 'row')} from ${counted(p.done, 'company', 'companies')}${p.not_found ? ` (${p.not_found} not found)` : ''}`,
    );
  print(
    `  files:    ${shownPath(s.config.output.dir)}/<dataset>/snapshot_date=${s.date}/snapshot_id=${s.id}/`,
  );
  print(`  manifest: ${s.record.manifest ? shownPath(s.record.manifest) : '-'}`);
  return true;
}

/**
 * Loads the snapshot into a DuckDB database beside the output (./out for an s3:// root), as a
 * warehouse user would, prints the load report and returns the database's path.
 */
async function loadIntoDuckDb(config: Config, id: string, { print }: DemoOutput): Promise<string> {
  const database = /^s3:\/\//i.test(config.output.dir)
    ? resolve('out', 'warehouse.duckdb')
    : join(config.output.dir, 'warehouse.duckdb');
  const [{ openStorage, s3Settings }, { openWarehouse, loadSnapshots, formatLoadReport }] = await Promise.all(
    [import('../../output/index.js'), import('../../warehouse/index.js')],
  );
  const storage = openStorage(config.output.dir, { settings: s3Settings(config.output) });
  try {
    const tmp = config.worker.tmp_dir !== null ? { tmpDir: config.worker.tmp_dir } : {};
    const warehouse = await openWarehouse(`duckdb:${database}`, tmp);
    try {
      print('');
      print(formatLoadReport(await loadSnapshots({ storage, warehouse, snapshot: id, ...tmp })).trimEnd());
    } finally {
      await warehouse.close();
    }
  } finally {
    await storage.close();
  }
  return database;
}

/** The statement that reads facts_full's Iceberg table (every night, with time travel) from DuckDB. */
async function printIcebergScan(config: Config, { print }: DemoOutput): Promise<void> {
  const { duckdbIcebergScan } = await import('../../output/index.js');
  const root = config.output.dir.replace(/\/+$/, '');
  const table = /^s3:\/\//i.test(root) ? `${root}/facts_full` : shownPath(join(root, 'facts_full'));
  print('');
  print('the Iceberg table facts_full, every night with time travel, from DuckDB (its iceberg extension):');
  print(`INSTALL iceberg; LOAD iceberg; ${duckdbIcebergScan(table)};`);
  print('(filings-export ddl --iceberg --dialect spark|snowflake|bigquery: the other warehouses)');
}

/** Queries facts_full for the first exported ticker (AAPL first) that reports annual revenue, and prints rows and query. */
async function printRevenueQuery(
  m: DemoModules,
  { print }: DemoOutput,
  database: string,
  companies: readonly Company[],
): Promise<void> {
  const exported = companies.flatMap((c) => (c.kind === 'ticker' ? [c.ticker] : []));
  const order = exported.includes('AAPL') ? ['AAPL', ...exported.filter((t) => t !== 'AAPL')] : exported;
  let ticker: string | undefined;
  let rows: Awaited<ReturnType<DemoModules['queryAnnualRevenueTable']>> = [];
  for (const t of order) {
    rows = await m.queryAnnualRevenueTable(database, t);
    ticker = t;
    if (rows.length > 0) break;
  }
  if (ticker === undefined || rows.length === 0) {
    print('');
    print(`(none of the exported companies reports ${m.DEMO_METRIC} in a 10-K: no revenue query to show)`);
    return;
  }
  print('');
  print(
    `DuckDB, table facts_full in ${shownPath(database)}: ${ticker}'s annual revenue (${m.DEMO_METRIC}, 10-K)`,
  );
  print(`  ${'fiscal year'.padEnd(12)} ${'period'.padEnd(24)} ${'revenue (USD)'.padStart(19)}  accession`);
  for (const r of rows)
    print(
      `  ${String(r.fiscal_year).padEnd(12)} ${r.period.padEnd(24)} ${m.groupDigits(r.revenue_usd).padStart(19)}  ${r.source_accession}`,
    );
  print('');
  print(`the query (duckdb ${shownPath(database)}):`);
  print(m.annualRevenueTableSql('facts_full', ticker));
}
