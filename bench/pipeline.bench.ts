/**
 * Pipeline (issues 4 and 15): (1) a snapshot of the whole bundled universe (default datasets,
 * Parquet) against the emulator with no rate limit, run --local style in this process: wall time,
 * cold (the emulator builds each company on first use) and warm; (2) end to end, SYNBIG (a
 * synthetic issuer with 1,000,000 fact rows) to a published Parquet snapshot with
 * `filings-export run --local --wait` against curl downloading the same body from the same
 * emulator in the same run, medians of interleaved runs (goal <= 1.5x), and the peak RSS of that
 * one process (goal <= 256 MB), with the default
 * settings, with `output.publish_conversions: 2` (row ranges on both cores) and with
 * `output.convert_while_staging: false` (no segments); (3) the peak RSS (VmHWM)
 * and CPU of a separate `filings-export worker --only parts` process while it exports SYNBIG's
 * facts/full, alone and with a CPU-bound process sharing the cores (goal <= 200 MB), and of the
 * control worker publishing it (also with 2 conversions). (2) and (3) run the compiled entry (build/, what the installed
 * package and the image run); (3) also once from the sources through tsx, for reference.
 * `PIPELINE_BENCH_ONLY=e2e` runs (2) alone.
 */
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { loadConfig, requireApiKey, type Config } from '../src/config/load.js';
import { loadStore } from '../src/emulator/data/index.js';
import { DEMO_API_KEY } from '../src/emulator/demo-key.js';
import { startEmulator } from '../src/emulator/index.js';
import { startPrivateRedis } from '../src/infra/redis-server.js';
import { silentLogger } from '../src/log.js';
import { DEFAULT_ROW_GROUP_ROWS } from '../src/output/index.js';
import { jobDefinitions } from '../jobs/index.js';
import { openExporter } from '../src/pipeline/exporter.js';
import { followSnapshot } from '../src/pipeline/queue/follow.js';
import { runSnapshot } from '../src/pipeline/run-snapshot.js';
import { parseCompany } from '../src/pipeline/record/universe.js';
import { benchConfig } from './support/bench-config.js';
import { curlDownload } from './support/curl-output.js';
import { endToEndMissReason } from './support/miss-reasons.js';
import { cpuSeconds, peakRssMb, rssMb } from './support/process-stats.js';
import { median } from './support/stats.js';
import type { BenchResult } from './support/types.js';
// @ts-expect-error: a plain ES module of bin/ (no types).
import { staleReason as staleReasonUntyped } from '../bin/entry-point.mjs';

const staleReason = staleReasonUntyped as (root: string) => string | undefined;

const BIG_ROWS = 1_000_000;
const RSS_LIMIT_MB = 256;
const PARTS_RSS_GOAL_MB = 200;
const E2E_GOAL_RATIO = 1.5;
/** Peak RSS of the one `run --local` process (every role in it), with the defaults. */
const LOCAL_RSS_GOAL_MB = 256;
const E2E_RUNS = 3;
/**
 * Settings of the end-to-end runs: the defaults; one range per core of the bench box
 * (`output.publish_conversions: 2`); and everything converted at publish, as before segments
 * (`output.convert_while_staging: false`).
 */
const E2E_VARIANTS = [
  { conversions: 1, early: true },
  { conversions: 2, early: true },
  { conversions: 1, early: false },
];
const ROOT = join(import.meta.dirname, '..');
const BIN = join(ROOT, 'bin', 'filings-export.mjs');

/** The row-group size the control worker publishes with (its config, else the output default). */
function rowGroupRows(env: NodeJS.ProcessEnv): number {
  const config = loadConfig({ env: { ...env, FILINGS_API_KEY: DEMO_API_KEY } });
  return config.output.row_group_rows ?? DEFAULT_ROW_GROUP_ROWS;
}

export async function run(): Promise<BenchResult[]> {
  const results: BenchResult[] = [];
  const redis = process.env.REDIS_URL ? undefined : await startPrivateRedis();
  const redisUrl = process.env.REDIS_URL ?? redis?.url ?? '';
  const prefix = `bench${randomBytes(4).toString('hex')}`;
  const outDir = await mkdtemp(join(tmpdir(), 'fx-bench-pipeline-'));
  const only = process.env.PIPELINE_BENCH_ONLY;
  if (only !== undefined && only !== 'e2e')
    throw new Error(`PIPELINE_BENCH_ONLY=${only}: the only part that runs alone is e2e`);
  try {
    // (1) the bundled universe, no rate limit
    if (only === undefined) results.push(...(await bundledUniverse(redisUrl, outDir, prefix)));
    // (2) and (3): SYNBIG, 1,000,000 fact rows
    results.push(...(await synbig(redisUrl, outDir, prefix, only === undefined)));
  } finally {
    await rm(outDir, { recursive: true, force: true });
    if (redis) await redis.close();
    else await dropKeys(redisUrl, prefix);
  }
  return results;
}

/** (1) A snapshot of the bundled universe, cold and warm, in this process. */
async function bundledUniverse(redisUrl: string, outDir: string, prefix: string): Promise<BenchResult[]> {
  const results: BenchResult[] = [];
  {
    const store = await loadStore({ validate: false });
    const emulator = await startEmulator({ port: 0, store, rateLimitPerMinute: null });
    try {
      const config = benchConfig(emulator.url, redisUrl, outDir, prefix);
      const exporter = await openExporter({
        config,
        logger: silentLogger(),
        apiKey: requireApiKey(config),
        definitions: jobDefinitions,
      });
      try {
        const companies = store
          .companies()
          .filter((c) => !c.synthetic)
          .map((c) => parseCompany(c.ticker ?? c.cik, 'bundled'));
        const times: number[] = [];
        for (const pass of ['cold', 'warm']) {
          const t0 = performance.now();
          const { record } = await runSnapshot({
            exporter,
            spec: {
              id: `bench-universe-${pass}`,
              date: '2026-11-21',
              trigger: 'manual',
              companies,
              datasets: config.datasets,
              formats: config.output.formats,
              outDir,
            },
            allowMultiDay: true,
            // Both passes fetch everything: this measures a full snapshot, not an incremental night.
            fullRefresh: true,
            local: true,
            wait: true,
            logger: silentLogger(),
            tty: false,
            say: () => undefined,
          });
          if (record.state !== 'published')
            throw new Error(`universe snapshot ${record.state}: ${record.message ?? ''}`);
          times.push(performance.now() - t0);
        }
        const parts = companies.length * config.datasets.length;
        const warm = (times[1] ?? NaN) / 1000;
        results.push({
          group: 'pipeline',
          name: `snapshot of the bundled universe (${parts} parts, Parquet, emulator unlimited)`,
          value: warm,
          unit: 's',
          target: '< 30 s',
          ok: warm < 30,
          note: `warm run; cold run (emulator builds each company on first use) ${((times[0] ?? NaN) / 1000).toFixed(1)} s`,
        });
      } finally {
        await exporter.close();
      }
    } finally {
      await emulator.close();
      await store.close();
    }
  }
  return results;
}

/** (2) end to end against curl, then (3) the workers' memory (with `workers`). */
async function synbig(
  redisUrl: string,
  outDir: string,
  prefix: string,
  workers: boolean,
): Promise<BenchResult[]> {
  const results: BenchResult[] = [];
  {
    const big = await startEmulator({ port: 0, rateLimitPerMinute: null, syntheticLargeRows: BIG_ROWS });
    try {
      // The entry the installed package and the image run: build/, rebuilt here when stale.
      if (staleReason(ROOT) !== undefined)
        execFileSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], { stdio: 'inherit' });
      const env = {
        ...process.env,
        FILINGS_EXPORT_ENTRY: 'build',
        FILINGS_API_URL: big.url,
        FILINGS_API_KEY: DEMO_API_KEY,
        REDIS_URL: redisUrl,
        FILINGS_EXPORT_OUT: outDir,
        LOG_LEVEL: 'info',
      };
      results.push(...(await endToEnd(big.url, { ...env, FILINGS_EXPORT_PREFIX: `${prefix}e2e` }, outDir)));
      if (!workers) return results;
      for (const hog of [false, true]) {
        const config = benchConfig(big.url, redisUrl, outDir, `${prefix}big${hog ? 'hog' : ''}`);
        results.push(
          ...(await workerExport(
            config,
            { ...env, FILINGS_EXPORT_PREFIX: `${prefix}big${hog ? 'hog' : ''}` },
            { hog, entry: 'build' },
          )),
        );
      }
      // Publishing memory with two conversions sharing the file (output.publish_conversions: 2).
      {
        const config = benchConfig(big.url, redisUrl, outDir, `${prefix}bigc2`);
        const env2 = {
          ...env,
          FILINGS_EXPORT_PREFIX: `${prefix}bigc2`,
          FILINGS_EXPORT_PUBLISH_CONVERSIONS: '2',
        };
        const rows = await workerExport(config, env2, { hog: false, entry: 'build', conversions: 2 });
        results.push(...rows.filter((r) => r.name.startsWith('worker peak RSS publishing')));
      }
      // For reference: the same worker run from the TypeScript sources through tsx.
      const config = benchConfig(big.url, redisUrl, outDir, `${prefix}bigsrc`);
      results.push(
        ...(await workerExport(
          config,
          { ...env, FILINGS_EXPORT_ENTRY: 'source', FILINGS_EXPORT_PREFIX: `${prefix}bigsrc` },
          { hog: false, entry: 'source' },
        )),
      );
    } finally {
      await big.close();
    }
  }
  return results;
}

/**
 * Seconds curl takes to download SYNBIG's facts/full (body discarded). A figure only counts when
 * curl got the whole body: status 200 and as many bytes as Content-Length announced.
 */
function curlSeconds(url: string): Promise<{ seconds: number; bytes: number }> {
  return curlDownload(`${url}/api/b2b/facts/full`, 'SYNBIG');
}

/**
 * Runs the CLI to its end; returns its wall time in seconds, its stdout and stderr, when it started,
 * its peak RSS in MB: the kernel's high-water mark (VmHWM), read every 50 ms, so only growth in
 * the last 50 ms before the process exits could be missed; its CPU seconds (user + system, read
 * the same way, so the last 50 ms may be missing); and the CPU seconds this process (the emulator
 * serving the body, in the bench's process) spent meanwhile.
 */
async function cliSeconds(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{
  seconds: number;
  out: string;
  err: string;
  startedAt: number;
  peakMb: number;
  cpu: number;
  serverCpu: number;
}> {
  const startedAt = Date.now();
  const t0 = performance.now();
  const server0 = process.cpuUsage();
  let peakMb = NaN;
  let cpu = NaN;
  let timer: NodeJS.Timeout | undefined;
  const { out, err } = await new Promise<{ out: string; err: string }>((resolve, reject) => {
    const child = execFile(
      process.execPath,
      [BIN, ...args],
      { env, maxBuffer: 16 * 1024 * 1024 },
      (e, stdout, stderr) =>
        e
          ? reject(new Error(`${args.join(' ')}: ${e.message} ${stderr.slice(-2000)}`))
          : resolve({ out: stdout, err: stderr }),
    );
    const pid = child.pid ?? 0;
    timer = setInterval(() => {
      // The process may be gone between two reads (no file, or a zombie's without VmHWM): the
      // highest value read stands.
      peakRssMb(pid).then(
        (mb) => {
          if (!Number.isNaN(mb)) peakMb = Number.isNaN(peakMb) ? mb : Math.max(peakMb, mb);
        },
        () => undefined,
      );
      cpuSeconds(pid).then(
        (s) => {
          if (!Number.isNaN(s)) cpu = Number.isNaN(cpu) ? s : Math.max(cpu, s);
        },
        () => undefined,
      );
    }, 50);
  }).finally(() => clearInterval(timer));
  const server = process.cpuUsage(server0);
  const serverCpu = (server.user + server.system) / 1e6;
  return { seconds: (performance.now() - t0) / 1000, out, err, startedAt, peakMb, cpu, serverCpu };
}

/**
 * Seconds from the command's start to its last part staged and to the snapshot published, from the
 * timestamps of its JSON log lines (LOG_LEVEL=info): where an end-to-end run spends its time.
 */
function phasesOf(stderr: string, startedAt: number): { staged: number; published: number } {
  let staged = NaN;
  let published = NaN;
  for (const line of stderr.split('\n')) {
    if (!line.startsWith('{')) continue;
    const entry = JSON.parse(line) as { time?: number; msg?: string };
    if (typeof entry.time !== 'number' || typeof entry.msg !== 'string') continue;
    const at = (entry.time - startedAt) / 1000;
    // "1/1 part (…)": the count agrees with its noun, so one part reads singular.
    if (Number.isNaN(staged) && / (\d+)\/\1 parts? /.test(entry.msg)) staged = at;
    if (entry.msg === 'snapshot published') published = at;
  }
  return { staged, published };
}

/**
 * (2) `filings-export run` of SYNBIG vs curl downloading the same body, side by side: curl, run,
 * curl, run, curl (each run into its own root), median against median, so a burst of load on the
 * box weighs on both sides.
 */
async function endToEnd(url: string, env: NodeJS.ProcessEnv, outDir: string): Promise<BenchResult[]> {
  // Warm-up, not timed: the first request builds SYNBIG's source company in the emulator.
  await curlSeconds(url);
  const loadBefore = loadavg()[0] ?? NaN;
  const curls = [await curlSeconds(url)];
  const variants = E2E_VARIANTS.map(({ conversions, early }) => ({
    conversions,
    early,
    runs: [] as number[],
    peaks: [] as number[],
    cpus: [] as number[],
    serverCpus: [] as number[],
    phases: [] as { staged: number; published: number }[],
    published: true,
  }));
  for (let i = 0; i < E2E_RUNS; i++) {
    // The variants in turn between two downloads, so a change of the box's speed hits both.
    for (const v of variants) {
      const tag = `${i}c${v.conversions}${v.early ? 'e' : ''}`;
      const run = await cliSeconds(
        [
          'run',
          '--tickers',
          'SYNBIG',
          '--datasets',
          'facts_full',
          '--formats',
          'parquet',
          '--local',
          '--wait',
        ],
        {
          ...env,
          FILINGS_EXPORT_OUT: join(outDir, `e2e-${tag}`),
          FILINGS_EXPORT_PREFIX: `${env.FILINGS_EXPORT_PREFIX}${tag}`,
          FILINGS_EXPORT_PUBLISH_CONVERSIONS: String(v.conversions),
          FILINGS_EXPORT_CONVERT_WHILE_STAGING: String(v.early),
        },
      );
      v.runs.push(run.seconds);
      v.peaks.push(run.peakMb);
      v.cpus.push(run.cpu);
      v.serverCpus.push(run.serverCpu);
      v.phases.push(phasesOf(run.err, run.startedAt));
      v.published &&= /"status":"published"/.test(run.out) && /"facts_full":1000000/.test(run.out);
    }
    curls.push(await curlSeconds(url));
  }
  // The Node in the figure: V8's young generation and native memory differ between 20 and 24.
  const load = `load average ${loadBefore.toFixed(1)} before, ${(loadavg()[0] ?? NaN).toFixed(1)} after (${availableParallelism()} cores); Node ${process.version}`;
  // Every download is the same body: a different byte count means one of them was not whole.
  const sizes = new Set(curls.map((c) => c.bytes));
  if (sizes.size !== 1) throw new Error(`curl downloads differ in size: ${[...sizes].join(', ')} bytes`);
  const curl = median(curls.map((c) => c.seconds));
  return variants.flatMap((v) => {
    const ratio = median(v.runs) / curl;
    const peak = median(v.peaks);
    const defaults = v.early && v.conversions === 1;
    const setting = !v.early
      ? 'output.convert_while_staging: false'
      : defaults
        ? 'defaults'
        : `output.publish_conversions: ${v.conversions}`;
    const command = `FILINGS_EXPORT_PUBLISH_CONVERSIONS=${v.conversions} FILINGS_EXPORT_CONVERT_WHILE_STAGING=${v.early} filings-export run --tickers SYNBIG --datasets facts_full --local --wait`;
    return [
      {
        group: 'pipeline',
        name: `end to end SYNBIG 1,000,000 rows to published Parquet ÷ curl download (${setting})`,
        value: ratio,
        unit: 'ratio',
        target: `<= ${E2E_GOAL_RATIO}x`,
        ok: v.published && ratio <= E2E_GOAL_RATIO,
        note:
          `run --local --wait ${v.runs.map((r) => r.toFixed(1)).join(' / ')} s (${v.published ? 'published' : 'NOT published'}); ` +
          `curl ${curls.map((c) => c.seconds.toFixed(1)).join(' / ')} s for ${((curls[0]?.bytes ?? NaN) / 1e9).toFixed(2)} GB; medians; ` +
          `all staged at ${v.phases.map((p) => p.staged.toFixed(1)).join(' / ')} s, published at ${v.phases.map((p) => p.published.toFixed(1)).join(' / ')} s (log timestamps); ` +
          `CPU s of run --local ${v.cpus.map((c) => c.toFixed(1)).join(' / ')}, of the emulator serving it ${v.serverCpus.map((c) => c.toFixed(1)).join(' / ')} (user + system); ` +
          `${load}; compiled entry (build/); ${command}`,
        whenMissed: endToEndMissReason({
          cpu: v.cpus,
          emulatorCpu: v.serverCpus,
          staged: v.phases.map((p) => p.staged),
          published: v.phases.map((p) => p.published),
          wall: v.runs,
          curl,
          cores: availableParallelism(),
        }),
      },
      {
        group: 'pipeline',
        name: `run --local peak RSS of the one process, SYNBIG 1,000,000 rows (${setting})`,
        value: Math.round(peak),
        unit: 'MB',
        // The goal is the defaults'; the other settings trade memory for time on purpose.
        ...(defaults
          ? { target: `<= ${LOCAL_RSS_GOAL_MB} MB`, ok: v.published && peak <= LOCAL_RSS_GOAL_MB }
          : {}),
        note: `median of ${v.peaks.map((p) => Math.round(p)).join(' / ')} MB (VmHWM sampled every 50 ms), the same runs as the ratio; ${load}`,
      },
    ];
  });
}

/** A CPU-bound process (a busy loop) sharing the cores until killed. */
function startCpuHog(): ChildProcess {
  return spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
}

/** (3) A parts worker and a control worker export and publish SYNBIG; their peaks and CPU. */
async function workerExport(
  config: Config,
  env: NodeJS.ProcessEnv,
  { hog, entry, conversions = 1 }: { hog: boolean; entry: 'build' | 'source'; conversions?: number },
): Promise<BenchResult[]> {
  const outDir = config.output.dir;
  // Two processes: the parts worker (fetch + stage) and the control worker (publish), so each
  // peak is measured on its own.
  const partsWorker = await startWorker(['worker', '--only', 'parts'], env);
  const controlWorker = await startWorker(['worker', '--only', 'control'], env);
  const idleMb = await rssMb(controlWorker.pid ?? 0);
  const hogProcess = hog ? startCpuHog() : undefined;
  const exporter = await openExporter({
    config,
    logger: silentLogger(),
    apiKey: requireApiKey(config),
    definitions: jobDefinitions,
  });
  const id = `bench-synbig-${entry}${hog ? '-hog' : ''}-c${conversions}`;
  try {
    const cpu0 = await cpuSeconds(partsWorker.pid ?? 0);
    const t0 = performance.now();
    await exporter.ctx.enqueue({
      id,
      date: '2026-11-21',
      trigger: 'manual',
      companies: [parseCompany('SYNBIG', 'bench')],
      datasets: ['facts_full'],
      formats: ['parquet'],
      outDir,
    });
    const rec = await followSnapshot(exporter.ctx.store, id, { pollMs: 500 });
    const seconds = (performance.now() - t0) / 1000;
    const peak = await peakRssMb(partsWorker.pid ?? 0);
    const publishPeak = await peakRssMb(controlWorker.pid ?? 0);
    const cpu = (await cpuSeconds(partsWorker.pid ?? 0)) - cpu0;
    const rows = rec.progress.facts_full?.rows ?? 0;
    const label =
      (hog ? ', a CPU hog sharing the cores' : ', alone') +
      (entry === 'source' ? '; reference: from the sources through tsx' : '');
    const out: BenchResult[] = [
      {
        group: 'pipeline',
        name: `parts worker peak RSS, facts/full of ${BIG_ROWS.toLocaleString('en-US')} rows (fetch + stage${label})`,
        value: Math.round(peak),
        unit: 'MB',
        ...(entry === 'build'
          ? {
              target: `<= ${PARTS_RSS_GOAL_MB} MB`,
              ok: rec.state === 'published' && rows === BIG_ROWS && peak <= PARTS_RSS_GOAL_MB,
            }
          : {}),
        note: `${rec.state}, ${rows} rows in ${seconds.toFixed(1)} s incl. publishing (${Math.round(rows / seconds)} rows/s)`,
      },
      {
        group: 'pipeline',
        name: `parts worker CPU per 1,000 rows: facts_full (fetch + parse + stage${label})`,
        value: cpu / (rows / 1000),
        unit: 's',
        note: `${cpu.toFixed(1)} CPU s for ${rows} rows (user + system, /proc)`,
      },
    ];
    if (!hog && entry === 'build') {
      out.push({
        group: 'pipeline',
        name: `worker peak RSS publishing it (Parquet, the control worker${conversions > 1 ? `, ${conversions} conversions` : ''})`,
        value: Math.round(publishPeak),
        unit: 'MB',
        target: `< ${RSS_LIMIT_MB} MB`,
        ok: rec.state === 'published' && publishPeak < RSS_LIMIT_MB,
        note: `idle ${Math.round(idleMb)} MB before publishing; Parquet row groups of ${rowGroupRows(env)} rows`,
      });
    }
    return out;
  } finally {
    hogProcess?.kill('SIGKILL');
    await exporter.close();
    await Promise.all([stopWorker(partsWorker), stopWorker(controlWorker)]);
  }
}

/** Removes the bench's keys from a Redis it did not start. */
async function dropKeys(url: string, prefix: string): Promise<void> {
  const r = new Redis(url);
  try {
    const keys = await r.keys(`${prefix}*`);
    for (let i = 0; i < keys.length; i += 500) await r.del(...keys.slice(i, i + 500));
  } finally {
    r.disconnect();
  }
}

async function startWorker(args: string[], env: NodeJS.ProcessEnv): Promise<ChildProcess> {
  const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  await new Promise<void>((resolve, reject) => {
    child.stderr?.on('data', (b: Buffer) => {
      log += b.toString();
      if (log.includes('worker ready')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`worker exited (${code}): ${log}`)));
  });
  return child;
}

async function stopWorker(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}
