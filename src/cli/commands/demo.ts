/**
 * `filings-export demo` (`npm run demo`): the whole product on one machine. When REDIS_URL and
 * FILINGS_API_URL are unset it starts a private redis-server and the emulator in process (demo
 * key), exports every bundled company's default datasets with progress, prints where the
 * snapshot is, loads it into out/warehouse.duckdb and queries its facts_full table, then closes everything it started.
 */
import { join, relative, resolve } from 'node:path';
import type { Command } from 'commander';
import type { FlagOverride } from '../../config/load.js';
import type { RunningEmulator } from '../../emulator/index.js';
import type { PrivateRedis } from '../../infra/redis-server.js';
import type { Company, Exporter } from '../../pipeline/index.js';
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
  const [
    { loadConfig, requireApiKey },
    { DEMO_API_KEY, loadStore, startEmulator },
    { startPrivateRedis },
    { createLogger },
    { onShutdownSignal },
    { DEFAULT_DATASETS },
    {
      DEMO_METRIC,
      annualRevenueTableSql,
      groupDigits,
      queryAnnualRevenueTable,
      openExporter,
      resultLine,
      runSnapshot,
      parseCompany,
    },
  ] = await Promise.all([
    import('../../config/load.js'),
    import('../../emulator/index.js'),
    import('../../infra/redis-server.js'),
    import('../../log.js'),
    import('../command-support.js'),
    import('../../types.js'),
    import('../../pipeline/index.js'),
  ]);
  const say = (line: string): void => void process.stderr.write(`${line}\n`);
  const print = (line: string): void => void process.stdout.write(`${line}\n`);
  let redis: PrivateRedis | undefined;
  let emulator: RunningEmulator | undefined;
  let exporter: Exporter | undefined;
  const store = await loadStore({ validate: false });
  const abort = new AbortController();
  const offSignals = onShutdownSignal((signal) => abort.abort(new Error(`interrupted by ${signal}`)));
  try {
    const env = { ...process.env };
    const flags: FlagOverride[] = [
      {
        path: 'output.dir',
        value: o.out,
        flag: '--out',
      },
      { path: 'datasets', value: [...DEFAULT_DATASETS], flag: 'demo' },
    ];
    if (!env.REDIS_URL) {
      redis = await startPrivateRedis();
      flags.push({ path: 'redis.url', value: redis.url, flag: 'demo (private redis-server)' });
      say(`demo: started a private redis-server at ${redis.url} (set REDIS_URL to use yours)`);
    }
    if (!env.FILINGS_API_URL) {
      emulator = await startEmulator({ port: 0, store });
      env.FILINGS_API_KEY = DEMO_API_KEY;
      delete env.FILINGS_API_KEY_FILE;
      flags.push({ path: 'api.url', value: emulator.url, flag: 'demo (emulator)' });
      say(
        `demo: started the emulator at ${emulator.url} with the public demo key (set FILINGS_API_URL to use a real API)`,
      );
    }
    const config = loadConfig({ ...(o.config !== undefined ? { configPath: o.config } : {}), env, flags });
    const logger = createLogger({
      level: config.log.level,
      ...(config.log.pretty === 'auto' ? {} : { pretty: config.log.pretty }),
    });
    // The workers' routine info lines would drown the progress display: warnings and errors only.
    const workerLogger = config.log.level === 'info' ? logger.child({}, { level: 'warn' }) : logger;

    const bundled = store.companies().filter((c) => !c.synthetic);
    const companies: Company[] = (o.tickers ?? bundled.map((c) => c.ticker ?? c.cik)).map((t, i) =>
      parseCompany(t, o.tickers ? `--tickers[${i}]` : 'bundled company'),
    );
    const now = new Date();
    const id = `demo-${now.toISOString().slice(0, 19).replace(/[-:]/g, '').replace('T', '-')}`;
    const date = now.toISOString().slice(0, 10);
    say(`demo: exporting ${companies.length} companies x ${config.datasets.join(', ')} as snapshot ${id}`);

    exporter = await openExporter({
      config,
      logger: workerLogger,
      apiKey: requireApiKey(config),
      processors: await app.loadJobs(),
    });
    const started = Date.now();
    const { record } = await runSnapshot({
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
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    print('');
    print(resultLine(record));
    if (record.state !== 'published') {
      print(`snapshot ${id} ${record.state}: ${record.message ?? ''}`);
      process.exitCode = 1;
      return;
    }
    const rel = (p: string): string => {
      if (/^s3:\/\//i.test(p)) return p;
      const r = relative(process.cwd(), p);
      return r === '' ? '.' : r.startsWith('..') ? p : r;
    };
    print(`snapshot ${id} published in ${seconds} s`);
    for (const [ds, p] of Object.entries(record.progress))
      print(
        `  ${ds.padEnd(15)} ${groupDigits(String(p.rows)).padStart(10)} rows from ${p.done} companies${p.not_found ? ` (${p.not_found} not found)` : ''}`,
      );
    print(`  files:    ${rel(config.output.dir)}/<dataset>/snapshot_date=${date}/snapshot_id=${id}/`);
    print(`  manifest: ${record.manifest ? rel(record.manifest) : '-'}`);
    if (!config.output.formats.includes('parquet')) return;

    // Load the snapshot into a DuckDB database, as a warehouse user would, and query its table.
    const exported = companies.flatMap((c) => (c.kind === 'ticker' ? [c.ticker] : []));
    const order = exported.includes('AAPL') ? ['AAPL', ...exported.filter((t) => t !== 'AAPL')] : exported;
    const database = /^s3:\/\//i.test(config.output.dir)
      ? resolve('out', 'warehouse.duckdb')
      : join(config.output.dir, 'warehouse.duckdb');
    const [{ openStorage, s3Settings }, { openWarehouse, loadSnapshots, formatLoadReport }] =
      await Promise.all([import('../../output/index.js'), import('../../warehouse/index.js')]);
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
    let ticker: string | undefined;
    let rows: Awaited<ReturnType<typeof queryAnnualRevenueTable>> = [];
    for (const t of order) {
      rows = await queryAnnualRevenueTable(database, t);
      ticker = t;
      if (rows.length > 0) break;
    }
    if (ticker === undefined || rows.length === 0) {
      print('');
      print(`(none of the exported companies reports ${DEMO_METRIC} in a 10-K: no revenue query to show)`);
      return;
    }
    print('');
    print(`DuckDB, table facts_full in ${rel(database)}: ${ticker}'s annual revenue (${DEMO_METRIC}, 10-K)`);
    print(`  ${'fiscal year'.padEnd(12)} ${'period'.padEnd(24)} ${'revenue (USD)'.padStart(19)}  accession`);
    for (const r of rows)
      print(
        `  ${String(r.fiscal_year).padEnd(12)} ${r.period.padEnd(24)} ${groupDigits(r.revenue_usd).padStart(19)}  ${r.source_accession}`,
      );
    print('');
    print(`the query (duckdb ${rel(database)}):`);
    print(annualRevenueTableSql('facts_full', ticker));
  } finally {
    offSignals();
    await exporter?.close();
    await emulator?.close();
    await redis?.close();
    await store.close();
  }
}
