/**
 * `filings-export demo` (`npm run demo`): the whole product on one machine. When REDIS_URL and
 * FILINGS_API_URL are unset it starts a private redis-server and the emulator in process (demo
 * key), exports every bundled company's default datasets with progress on two nights of the
 * emulator's as-of clock (one night, today, on an API of your own), prints where the snapshots are,
 * loads them into out/warehouse.duckdb with their history, queries its facts_full table and the
 * facts the second night restated, then closes everything it started.
 */
import { join, relative, resolve } from 'node:path';
import type { Command } from 'commander';
import type { Config, FlagOverride } from '../../config/load.js';
import { counted, plural } from '../../counted.js';
import type { DataStore, RunningEmulator } from '../../emulator/index.js';
import type { PrivateRedis } from '../../infra/redis-server.js';
import type { Company, Exporter, SnapshotView } from '../../pipeline/index.js';
import type { Logger } from '../../log.js';
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

/** The emulator's as-of clock on a night, as `POST /_emulator/clock` takes it. */
interface DemoClock {
  as_of: string;
  companies?: Record<string, string>;
}

/**
 * The nights the demo's own emulator plays, in order. Apple filed its FY2025 10-K
 * (0000320193-25-000079) on 2025-10-31, between them, restating figures it had filed before (its
 * FY2024 long-term debt among them): the second night's history shows them. No other bundled
 * company filed in between (docs/emulator.md, "Nights"), so on the second night only Apple's clock
 * moves: the others answer as they did, without being built again for the later date.
 */
export const DEMO_NIGHTS: readonly { date: string; clock: DemoClock }[] = [
  { date: '2025-10-30', clock: { as_of: '2025-10-30' } },
  { date: '2025-11-05', clock: { as_of: '2025-10-30', companies: { AAPL: '2025-11-05' } } },
];

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
    exporter = await m.openExporter({
      config,
      logger: workerLogger,
      apiKey: m.requireApiKey(config),
      definitions: await app.loadJobs(),
    });
    const demo: DemoRun = {
      m,
      out,
      config,
      logger,
      exporter,
      companies: demoCompanies(o, store, m.parseCompany),
      signal: abort.signal,
      ...(started.emulator ? { emulatorUrl: started.emulator.url } : {}),
    };
    const nights = demoNights(new Date(), started.emulator !== undefined);
    if (!(await exportNights(demo, nights))) {
      process.exitCode = 1;
      return;
    }
    if (!config.output.formats.includes('parquet')) return;
    await loadIntoDuckDb(config, out);
    const database = warehousePath(config);
    await printRevenueQuery(m, out, database, demo.companies);
    await printRestatements(m, out, database, demo.companies, nights);
    if (config.output.iceberg) await printIcebergScan(config, out);
  } finally {
    await exporter?.close();
    await started.emulator?.close();
    await started.redis?.close();
    await store.close();
    offSignals();
  }
}

/** What every night of the demo runs with. */
interface DemoRun {
  m: DemoModules;
  out: DemoOutput;
  config: Config;
  logger: Logger;
  exporter: Exporter;
  companies: Company[];
  signal: AbortSignal;
  /** The emulator the demo started, whose as-of clock it moves; absent with FILINGS_API_URL set. */
  emulatorUrl?: string;
}

/** One snapshot of the demo: its id and date, and the emulator's clock that night. */
interface DemoNight {
  id: string;
  date: string;
  /** The emulator's clock on the night; absent on an API of your own (FILINGS_API_URL). */
  clock?: DemoClock;
}

/**
 * The demo's own emulator plays DEMO_NIGHTS, snapshots named by the run (`demo-YYYYMMDD-HHMMSS`, UTC)
 * and the night (`-2025-10-30`), so a second run into the same root adds nights of its own; an API
 * of your own serves one night, today.
 */
function demoNights(now: Date, ownEmulator: boolean): DemoNight[] {
  const id = `demo-${now.toISOString().slice(0, 19).replace(/[-:]/g, '').replace('T', '-')}`;
  if (!ownEmulator) return [{ id, date: now.toISOString().slice(0, 10) }];
  return DEMO_NIGHTS.map((n) => ({ id: `${id}-${n.date}`, ...n }));
}

/** Exports each night in turn, setting the emulator's clock first; false once one was not published (it said why). */
async function exportNights(d: DemoRun, nights: readonly DemoNight[]): Promise<boolean> {
  for (const night of nights) {
    if (night.clock !== undefined && d.emulatorUrl !== undefined)
      await moveEmulatorClock(d.emulatorUrl, night.clock);
    const on =
      night.clock === undefined ? '' : `, the night of ${night.date} (${describeClock(night.clock)})`;
    d.out.say(
      `demo: exporting ${counted(d.companies.length, 'company', 'companies')} x ${d.config.datasets.join(', ')} as snapshot ${night.id}${on}`,
    );
    const startedAt = Date.now();
    const { record } = await d.m.runSnapshot({
      exporter: d.exporter,
      spec: {
        id: night.id,
        date: night.date,
        trigger: 'manual',
        companies: d.companies,
        datasets: d.config.datasets,
        formats: d.config.output.formats,
        outDir: d.config.output.dir,
      },
      allowMultiDay: d.config.budget.allow_multi_day,
      local: true,
      wait: true,
      logger: d.logger,
      signal: d.signal,
    });
    const seconds = ((Date.now() - startedAt) / 1000).toFixed(1);
    if (!printSnapshot(d.m, d.out, { config: d.config, record, id: night.id, date: night.date, seconds }))
      return false;
  }
  return true;
}

/** `the emulator as of 2025-10-30, AAPL as of 2025-11-05`. */
function describeClock(clock: DemoClock): string {
  const own = Object.entries(clock.companies ?? {}).map(([c, d]) => `, ${c} as of ${d}`);
  return `the emulator as of ${clock.as_of}${own.join('')}`;
}

/**
 * Sets the as-of clock of the emulator the demo started (its control plane). That emulator runs in
 * this process: a refusal is a bug of the demo, an internal error naming the answer.
 */
async function moveEmulatorClock(url: string, clock: DemoClock): Promise<void> {
  const at = `${url}/_emulator/clock`;
  const res = await fetch(at, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(clock),
  });
  if (res.status !== 200)
    throw new Error(
      `the demo's emulator did not set its clock to ${JSON.stringify(clock)}: POST ${at} answered ${res.status} ${await res.text()}`,
    );
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
    queryRestatements: query.queryRestatements,
    restatementsSql: query.restatementsSql,
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

/** The DuckDB database the demo loads: beside the output (./out for an s3:// root). */
function warehousePath(config: Config): string {
  return /^s3:\/\//i.test(config.output.dir)
    ? resolve('out', 'warehouse.duckdb')
    : join(config.output.dir, 'warehouse.duckdb');
}

/**
 * Loads the nights into the demo's DuckDB database with their history (`load --history`), as a
 * warehouse user would: one catch-up load applying each night not yet loaded in turn. Prints the
 * load report.
 */
async function loadIntoDuckDb(config: Config, { print }: DemoOutput): Promise<void> {
  const [{ openStorage, s3Settings }, { openWarehouse, loadSnapshots, formatLoadReport }] = await Promise.all(
    [import('../../output/index.js'), import('../../warehouse/index.js')],
  );
  const storage = openStorage(config.output.dir, { settings: s3Settings(config.output) });
  try {
    const tmp = config.worker.tmp_dir !== null ? { tmpDir: config.worker.tmp_dir } : {};
    const warehouse = await openWarehouse(`duckdb:${warehousePath(config)}`, tmp);
    try {
      const report = await loadSnapshots({ storage, warehouse, history: true, ...tmp });
      print('');
      print(formatLoadReport(report).trimEnd());
    } finally {
      await warehouse.close();
    }
  } finally {
    await storage.close();
  }
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

/** The exported tickers, AAPL first when it is one of them: the company the demo's queries show first. */
function tickersAppleFirst(companies: readonly Company[]): string[] {
  const exported = companies.flatMap((c) => (c.kind === 'ticker' ? [c.ticker] : []));
  return exported.includes('AAPL') ? ['AAPL', ...exported.filter((t) => t !== 'AAPL')] : exported;
}

/** Queries facts_full for the first exported ticker (AAPL first) that reports annual revenue, and prints rows and query. */
async function printRevenueQuery(
  m: DemoModules,
  { print }: DemoOutput,
  database: string,
  companies: readonly Company[],
): Promise<void> {
  let ticker: string | undefined;
  let rows: Awaited<ReturnType<DemoModules['queryAnnualRevenueTable']>> = [];
  for (const t of tickersAppleFirst(companies)) {
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

/**
 * After the nights, the first exported ticker (AAPL first) with facts the last night restated: its
 * rows of the facts_full_restatements view and the query; one line when there are none, or when the
 * demo ran one night only (an API of your own has no as-of clock to move).
 */
async function printRestatements(
  m: DemoModules,
  { print }: DemoOutput,
  database: string,
  companies: readonly Company[],
  nights: readonly DemoNight[],
): Promise<void> {
  const first = nights[0];
  const last = nights[nights.length - 1];
  const order = tickersAppleFirst(companies);
  print('');
  if (first === undefined || last === undefined || first === last) {
    print('(one night only, on the API of FILINGS_API_URL: restatements show from the second night loaded)');
    return;
  }
  const between = `between the nights of ${first.date} and ${last.date}`;
  for (const ticker of order) {
    const rows = await m.queryRestatements(database, ticker, last.id);
    if (rows.length === 0) continue;
    print(
      `DuckDB, view facts_full_restatements in ${shownPath(database)}: ${ticker}'s facts restated ${between} (${counted(rows.length, 'fact')})`,
    );
    printRestatementRows(m, print, rows);
    print('');
    print(`the query (duckdb ${shownPath(database)}):`);
    print(m.restatementsSql(ticker, last.id));
    return;
  }
  print(`(no fact of ${order.join(', ') || 'the exported companies'} was restated ${between})`);
}

function printRestatementRows(
  m: DemoModules,
  print: DemoOutput['print'],
  rows: Awaited<ReturnType<DemoModules['queryRestatements']>>,
): void {
  const metric = Math.max(6, ...rows.map((r) => r.metric_id.length));
  const period = Math.max(6, ...rows.map((r) => r.period_key.length));
  const old = Math.max(9, ...rows.map((r) => m.groupDigits(r.old_value).length));
  const now = Math.max(9, ...rows.map((r) => m.groupDigits(r.new_value).length));
  print(
    `  ${'metric'.padEnd(metric)}  ${'period'.padEnd(period)}  ${'old value'.padStart(old)}  ${'new value'.padStart(now)}  ${'old accession'.padEnd(20)}  ${'new accession'.padEnd(20)}  seen`,
  );
  for (const r of rows)
    print(
      `  ${r.metric_id.padEnd(metric)}  ${r.period_key.padEnd(period)}  ${m.groupDigits(r.old_value).padStart(old)}  ${m.groupDigits(r.new_value).padStart(now)}  ${r.old_accession.padEnd(20)}  ${r.new_accession.padEnd(20)}  ${r.seen_night}`,
    );
}
