/**
 * Incremental nights (issue 13): the bundled universe plus 500 synthetic companies (NIGHTS_BENCH_SYNTHETIC),
 * default datasets, Parquet. The emulator runs in its own process (`filings-export emulator`,
 * unlimited, its clock at 2025-10-30), as a real API runs on another machine; the exporter and its
 * workers run in this process, as `run --local` would. Night 1 fetches everything; night 2 (nothing
 * filed) is incremental; then NIGHTS_BENCH_ONE_ROUNDS rounds (default 5) of a night where Apple alone
 * changed (the emulator's per-company clock moves Apple across its FY2025 10-K, filed 2025-10-31;
 * its synthetic clones keep the global date) followed by a quiet night; night 4 moves the global
 * clock to 2025-11-05, so every synthetic clone of Apple changes as well.
 * Figures: requests per company of a night with nothing changed (target <= 1.1), extra requests
 * per changed company (2: its facts_full and evidence), wall time of an incremental night against
 * the full one, and (issue 27) what a quiet night costs beyond its requests: its wall time against a
 * series_catalog-only snapshot of the same companies (<= 1.5x), the bytes it writes anew against its
 * published bytes (<= 10 %), the bytes stored for it under the root against its published bytes
 * (<= 1.1x), and the extra wall time of a night where one company changed against that company's own
 * download with curl (<= 2x): the median over the rounds of each one-company night minus the mean
 * of the quiet nights either side of it, against the median of one curl download per round; and
 * (issue 38) a quiet night's Iceberg commit against the rest of its publish (<= 2 %). Each
 * one-company night must make exactly n + 2 requests and each quiet night of a round n, or the bench
 * fails (a round where Apple did not change would give a wrong figure). Every night's time, split
 * into its parts and its publish, the CPU of both processes, the parts that waited for the budget
 * gate and the load average after it are printed in the one-company figure's note, so the spread
 * shows and a wait tells itself from work.
 *
 * `npm run bench -- --advisory nights` (NIGHTS_BENCH_SYNTHETIC=100 for a quick check; NIGHTS_BENCH_ICEBERG=0
 * for the same nights without committing the Iceberg tables, to see what the commit adds)
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { jobDefinitions } from '../jobs/index.js';
import { requireApiKey, type Config } from '../src/config/load.js';
import { loadStore } from '../src/emulator/data/index.js';
import { DEMO_API_KEY } from '../src/emulator/demo-key.js';
import { startPrivateRedis } from '../src/infra/redis-server.js';
import { silentLogger } from '../src/log.js';
import { createMetrics, type Metrics } from '../src/metrics/metrics.js';
import type { Manifest } from '../src/output/catalog/manifest.js';
import { openExporter, type Exporter } from '../src/pipeline/exporter.js';
import { parseCompany } from '../src/pipeline/record/universe.js';
import { runSnapshot } from '../src/pipeline/run-snapshot.js';
import { benchConfig } from './support/bench-config.js';
import { curlDownload } from './support/curl-output.js';
import { oneCompanyMissReason } from './support/miss-reasons.js';
import { cpuSeconds } from './support/process-stats.js';
import { startEmulatorProcess, type EmulatorProcess } from './support/emulator-process.js';
import { bracketedDifferences, median } from './support/stats.js';
import type { BenchResult } from './support/types.js';

const SYNTHETIC = wholeNumberEnv('NIGHTS_BENCH_SYNTHETIC', 500, 0, 100_000);
/** At most 40: the rounds take Apple's dates from the ranges described at appleDates. */
const ONE_ROUNDS = wholeNumberEnv('NIGHTS_BENCH_ONE_ROUNDS', 5, 1, 40);
const APPLE_CIK = '0000320193';
/** Every company's date until night 4: Apple's FY2025 10-K (filed 2025-10-31) does not exist yet. */
const QUIET_AS_OF = '2025-10-30';
/** Night 4's date for every company: the 10-K exists, so each synthetic clone of Apple changes. */
const FILED_AS_OF = '2025-11-05';
/** Snapshot date of night 2; the rounds and night 4 take one day each after it. */
const NIGHT_2 = '2025-10-31';

interface Night {
  id: string;
  requests: number;
  ms: number;
  /** Until every part was recorded (fetched or carried over); the rest of `ms` is the publish. */
  partsMs: number;
  reused: number;
  /** 1-minute load average right after the night. */
  load: number;
  /**
   * CPU seconds (user + system) over the night: this process (exporter, workers), the part of it
   * spent until every part was recorded, and the emulator's process.
   */
  cpu: { exporter: number; exporterParts: number; emulator: number };
  /** Parts that waited for the budget gate over the night, by reason (pace, window, hold, quota). */
  waits: Record<string, number>;
  /**
   * Its Iceberg commit, from `published` to the record's `committed` (part of `ms`: local workers
   * close after their publish job, commit included); undefined with NIGHTS_BENCH_ICEBERG=0.
   */
  icebergMs: number | undefined;
}
type RunNight = (
  id: string,
  date: string,
  o?: { datasets?: Config['datasets']; outDir?: string },
) => Promise<Night>;

interface Round {
  /** Whether Apple's 10-K appeared this round (else it was taken back, which a real API never does). */
  filed: boolean;
  one: Night;
  quiet: Night;
  /** curl's seconds for Apple's facts_full + evidence, the same first serve the exporter met. */
  download: number;
}

interface Universe {
  n: number;
  /** Requests a changed company adds: its datasets beside series_catalog. */
  others: number;
  /** Synthetic clones of Apple (the companies night 4 changes besides Apple). */
  clones: number;
}

export async function run(): Promise<BenchResult[]> {
  const redis = process.env.REDIS_URL ? undefined : await startPrivateRedis();
  const redisUrl = process.env.REDIS_URL ?? redis?.url ?? '';
  const outDir = await mkdtemp(join(tmpdir(), 'fx-bench-nights-'));
  // The company list and each clone's source, from the same deterministic index the emulator
  // process builds (bundled data + synthetic count): the API does not say which company a clone
  // copies. Index only (validate: false): no company is parsed or built in this process.
  const store = await loadStore({ validate: false, synthetic: SYNTHETIC });
  let emulator: EmulatorProcess | undefined;
  let exporter: Exporter | undefined;
  try {
    // The TypeScript entry: the working tree's code, no build step to go stale; tsx costs only the
    // start-up, before `listening on`. --no-warm: the warm-up builds every company as of everything
    // bundled, which no night asks for, and would spend the first night's CPU on it.
    emulator = await startEmulatorProcess(
      [
        '--port',
        '0',
        '--rate-limit',
        'none',
        '--synthetic',
        String(SYNTHETIC),
        '--as-of',
        QUIET_AS_OF,
        '--no-warm',
      ],
      { FILINGS_EXPORT_ENTRY: 'source' },
    );
    // The rounds take a snapshot date each: no full refresh may fall due among them.
    const config = benchConfig(emulator.url, redisUrl, outDir, `bench${randomBytes(4).toString('hex')}`, {
      'incremental.full_refresh_every_days': 366,
      // NIGHTS_BENCH_ICEBERG=0: the same nights without the tables' commit, to measure what it adds.
      ...(process.env.NIGHTS_BENCH_ICEBERG === '0' ? { 'output.iceberg': false } : {}),
    });
    exporter = await openExporter({
      config,
      logger: silentLogger(),
      apiKey: requireApiKey(config),
      definitions: jobDefinitions,
    });
    const api = emulatorControl(emulator.url);
    const companies = store.companies().map((c) => parseCompany(c.ticker ?? c.cik, 'bench'));
    const universe: Universe = {
      n: companies.length,
      others: config.datasets.length - 1,
      clones: store.companies().filter((c) => c.cik !== APPLE_CIK && store.sourceCikOf(c.cik) === APPLE_CIK)
        .length,
    };
    const night = nightRunner(exporter, config, companies, api, emulator.pid);
    return await measure(night, api, universe, outDir);
  } finally {
    await exporter?.close();
    await emulator?.close();
    await store.close();
    await redis?.close();
    await rm(outDir, { recursive: true, force: true });
  }
}

/** Every night of the bench in order, then its figures. */
async function measure(
  night: RunNight,
  api: EmulatorControl,
  u: Universe,
  outDir: string,
): Promise<BenchResult[]> {
  const full = await night('bench-night-1', QUIET_AS_OF);
  const quiet = await night('bench-night-2', NIGHT_2);
  // The requests a quiet night makes anyway, alone: a catalog-only snapshot (its own root).
  const catalogOnly = await night('bench-catalog', NIGHT_2, {
    datasets: ['series_catalog'],
    outDir: join(outDir, 'catalog-only'),
  });
  const bytes = await quietNightBytes(outDir, 'bench-night-2');
  const rounds = await oneCompanyRounds(night, api, u);
  // After an even number of rounds Apple is back before its 10-K, so night 4 changes it too.
  const changed = u.clones + (ONE_ROUNDS % 2 === 0 ? 1 : 0);
  await api.setClock({ as_of: FILED_AS_OF });
  const filed = await night('bench-night-4', addDays(NIGHT_2, 2 * ONE_ROUNDS + 1));
  const download = median(rounds.map((r) => r.download));
  return [
    ...nightFigures({ full, quiet, catalogOnly, filed, changed, u, bytes, rounds }),
    ...changedFigures({
      quiet,
      filed,
      changed,
      rounds,
      download,
      timeline: [full, quiet, ...rounds.flatMap((r) => [r.one, r.quiet]), filed],
    }),
  ];
}

/** Issue 38: what the Iceberg commit adds to a quiet night's publish (none when it is off). */
function icebergFigure(quiet: Night): BenchResult[] {
  if (quiet.icebergMs === undefined) return [];
  const publishMs = quiet.ms - quiet.partsMs - quiet.icebergMs;
  return [
    {
      group: 'nights',
      name: 'quiet night: its Iceberg commit / the rest of its publish',
      value: quiet.icebergMs / publishMs,
      unit: 'ratio',
      target: '<= 0.02',
      ok: quiet.icebergMs / publishMs <= 0.02,
      note: `${quiet.icebergMs.toFixed(0)} ms for every table vs ${seconds(publishMs)} s (the record's committed time after its published)`,
    },
  ];
}

/** Runs one snapshot of every company as a night; its requests are the emulator's count over it. */
function nightRunner(
  exporter: Exporter,
  config: Config,
  companies: ReturnType<typeof parseCompany>[],
  api: EmulatorControl,
  emulatorPid: number,
): RunNight {
  // The local workers record the budget's waits here: a night's waits are the counter's difference.
  const metrics = createMetrics();
  return async (id, date, o = {}) => {
    const before = await api.requests();
    const waits0 = await budgetWaits(metrics);
    const cpu0 = process.cpuUsage();
    const emulatorCpu0 = await cpuSeconds(emulatorPid);
    const t0 = performance.now();
    const parts = partsRecorded(exporter, id, t0, cpu0);
    const { record } = await runSnapshot({
      exporter,
      spec: {
        id,
        date,
        trigger: 'nightly',
        companies,
        datasets: o.datasets ?? config.datasets,
        formats: ['parquet'],
        outDir: o.outDir ?? config.output.dir,
      },
      allowMultiDay: true,
      local: true,
      wait: true,
      metrics,
      logger: silentLogger(),
      tty: false,
      say: () => undefined,
    }).finally(() => parts.stop());
    const ms = performance.now() - t0;
    if (record.state !== 'published') throw new Error(`${id} ${record.state}: ${record.message ?? ''}`);
    const reused = Object.values(record.progress).reduce((n, p) => n + p.reused, 0);
    const exporterCpu = cpuSince(cpu0);
    const partsEnd = await parts.end;
    const cpu = {
      exporter: exporterCpu,
      exporterParts: partsEnd?.cpu ?? exporterCpu,
      emulator: (await cpuSeconds(emulatorPid)) - emulatorCpu0,
    };
    const requests = (await api.requests()) - before;
    const waits = Object.fromEntries(
      Object.entries(await budgetWaits(metrics)).map(([reason, n]) => [reason, n - (waits0[reason] ?? 0)]),
    );
    const icebergMs = await commitMs(exporter, id);
    return {
      id,
      requests,
      ms,
      partsMs: partsEnd?.ms ?? ms,
      reused,
      load: loadavg()[0] ?? NaN,
      cpu,
      waits,
      icebergMs,
    };
  };
}

/** A published snapshot's Iceberg commit time: its record's `committed` after its `published`. */
async function commitMs(exporter: Exporter, id: string): Promise<number | undefined> {
  const rec = await exporter.ctx.store.view(id);
  if (rec?.iceberg?.state !== 'committed' || rec.finishedAtMs === null) return undefined;
  return rec.iceberg.atMs - rec.finishedAtMs;
}

/** The budget waits counted so far, by reason. */
async function budgetWaits(metrics: Metrics): Promise<Record<string, number>> {
  const { values } = await metrics.budgetWaits.get();
  return Object.fromEntries(values.map((v) => [String(v.labels.reason), v.value]));
}

/** A night's budget waits as text: "none", or e.g. "window 12, pace 3". */
function waitsText(waits: Record<string, number>): string {
  const some = Object.entries(waits).filter(([, n]) => n > 0);
  return some.length === 0 ? 'no budget waits' : some.map(([reason, n]) => `${reason} waits ${n}`).join(', ');
}

/** This process's CPU seconds (user + system) since `from`. */
function cpuSince(from: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(from);
  return (used.user + used.system) / 1e6;
}

/**
 * When every part of snapshot `id` was recorded, in ms after `t0`, and this process's CPU seconds
 * since `cpu0` then: its record polled every 50 ms (one Redis read) until then or until `stop()`
 * (undefined if never seen).
 */
function partsRecorded(
  exporter: Exporter,
  id: string,
  t0: number,
  cpu0: NodeJS.CpuUsage,
): { end: Promise<{ ms: number; cpu: number } | undefined>; stop(): void } {
  let stopped = false;
  const poll = async (): Promise<{ ms: number; cpu: number } | undefined> => {
    while (!stopped) {
      const rec = await exporter.ctx.store.get(id);
      const progress = Object.values(rec?.progress ?? {});
      if (progress.length > 0 && progress.every((p) => p.pending === 0))
        return { ms: performance.now() - t0, cpu: cpuSince(cpu0) };
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return undefined;
  };
  return { end: poll(), stop: () => (stopped = true) };
}

/**
 * Apple's own dates, a new one each call: Apple's bundled filings answer the same bodies on every
 * day from its 10-Q (2025-08-01) to 2025-10-30, and the same other bodies from its 10-K
 * (2025-10-31) on, so a date across 2025-10-31 changes Apple and one on the same side does not.
 * A new date matters: the emulator builds a company once per date and records a body's text on
 * its second serve (src/emulator/server/rows-cache.ts), so on a new date the exporter's request and
 * curl's are each the first serve of lists just built. 40 rounds reach 2025-09-20 and 2025-12-14.
 */
function appleDates(): (filed: boolean) => string {
  let after = 0;
  let before = 0;
  return (filed) => (filed ? addDays(FILED_AS_OF, after++) : addDays(QUIET_AS_OF, -1 - before++));
}

/**
 * ONE_ROUNDS times: Apple alone changes (odd rounds: its 10-K appears; even: it is gone again), a
 * night; Apple moves to another date with the same bodies and curl downloads it; a quiet night.
 * Before each night and each download Apple is built at its new date by a series/catalog request
 * (untimed), as the exporter's catalog part does first: a real API has the data ready, the
 * emulator builds it per date.
 */
async function oneCompanyRounds(night: RunNight, api: EmulatorControl, u: Universe): Promise<Round[]> {
  const appleDate = appleDates();
  const rounds: Round[] = [];
  for (let r = 1; r <= ONE_ROUNDS; r++) {
    const filed = r % 2 === 1;
    await api.moveApple(appleDate(filed));
    const one = expectRequests(
      await night(`bench-one-${r}`, addDays(NIGHT_2, 2 * r - 1)),
      u.n + u.others,
      'Apple alone changed: one catalog per company and Apple’s other datasets',
    );
    await api.moveApple(appleDate(filed));
    const download = await api.appleDownloadSeconds();
    const quiet = expectRequests(
      await night(`bench-quiet-${r}`, addDays(NIGHT_2, 2 * r)),
      u.n,
      'nothing changed: one catalog per company',
    );
    rounds.push({ filed, one, quiet, download });
  }
  return rounds;
}

function expectRequests(night: Night, expected: number, why: string): Night {
  if (night.requests !== expected)
    throw new Error(`${night.id}: ${night.requests} requests, expected ${expected} (${why})`);
  return night;
}

function nightFigures(o: {
  full: Night;
  quiet: Night;
  catalogOnly: Night;
  filed: Night;
  changed: number;
  u: Universe;
  bytes: QuietBytes;
  rounds: readonly Round[];
}): BenchResult[] {
  const { full, quiet, catalogOnly, filed, u, bytes } = o;
  const perCompany = quiet.requests / u.n;
  const changed = (filed.requests - u.n) / o.changed;
  const oneMs = median(o.rounds.map((r) => r.one.ms));
  return [
    {
      group: 'nights',
      name: `full night: requests (${u.n} companies x ${u.others + 1} datasets)`,
      value: full.requests,
      unit: 'count',
      note: `${seconds(full.ms)} s`,
    },
    {
      group: 'nights',
      name: 'night with nothing filed: requests per company',
      value: perCompany,
      unit: 'ratio',
      target: '<= 1.1',
      ok: perCompany <= 1.1,
      note: `${quiet.requests} requests for ${u.n} companies (was ${full.requests}); ${quiet.reused} parts carried over`,
    },
    {
      group: 'nights',
      name: "night Apple's clones changed: extra requests per changed company",
      value: changed,
      unit: 'count',
      target: `= ${u.others}`,
      ok: changed === u.others,
      note: `${filed.requests} requests for ${u.n} companies, ${o.changed} of them changed (Apple's synthetic clones${o.changed > u.clones ? ' and Apple' : ''}); each night Apple alone changed: ${u.n + u.others} (checked)`,
    },
    {
      group: 'nights',
      name: 'wall time: quiet incremental night / full night',
      value: quiet.ms / full.ms,
      unit: 'ratio',
      note: `${seconds(quiet.ms)} s vs ${seconds(full.ms)} s; Apple alone changed ${seconds(oneMs)} s (median), its clones ${seconds(filed.ms)} s`,
    },
    {
      group: 'nights',
      name: 'wall time: quiet night / series_catalog-only snapshot of the same companies',
      value: quiet.ms / catalogOnly.ms,
      unit: 'ratio',
      target: '<= 1.5',
      ok: quiet.ms / catalogOnly.ms <= 1.5,
      note: `${seconds(quiet.ms)} s vs ${seconds(catalogOnly.ms)} s`,
    },
    ...icebergFigure(quiet),
    {
      group: 'nights',
      name: 'quiet night: bytes written anew / its published bytes',
      value: bytes.anew / bytes.published,
      unit: 'ratio',
      target: '<= 0.10',
      ok: bytes.anew / bytes.published <= 0.1,
      note: `${mb(bytes.anew)} of ${mb(bytes.published)} (series_catalog and changes are written every night; the rest is hard-linked)`,
    },
    {
      group: 'nights',
      name: 'quiet night: bytes stored for the snapshot / its published bytes',
      value: bytes.stored / bytes.published,
      unit: 'ratio',
      target: '<= 1.1',
      ok: bytes.stored / bytes.published <= 1.1,
      note: `${mb(bytes.stored)} under the root (files, changes, manifest, staging) for ${mb(bytes.published)} published; a hard-linked file is counted for each snapshot holding it`,
    },
  ];
}

/** The one-company figure (several rounds) and night 4's cost per changed company. */
function changedFigures(o: {
  quiet: Night;
  filed: Night;
  changed: number;
  rounds: readonly Round[];
  download: number;
  timeline: readonly Night[];
}): BenchResult[] {
  // Each one-company night against the quiet nights just before and after it: the nights drift over
  // the bench (the process warms up, load comes and goes).
  const extras = bracketedDifferences(
    [o.quiet.ms, ...o.rounds.map((r) => r.quiet.ms)],
    o.rounds.map((r) => r.one.ms),
  );
  const extraOne = Math.max(0, median(extras)) / 1000;
  const extraFiled = Math.max(0, o.filed.ms - o.quiet.ms) / 1000;
  const extraPerChanged = extraFiled / o.changed;
  return [
    {
      group: 'nights',
      name: 'one changed company (Apple): extra wall time / its own download (curl)',
      value: extraOne / o.download,
      unit: 'ratio',
      target: '<= 2',
      ok: extraOne / o.download <= 2,
      note:
        `${extraOne.toFixed(2)} s beyond a quiet night, the median over ${o.rounds.length} rounds of each one-company night ` +
        `minus the mean of the quiet nights either side of it (${extras.map((ms) => (ms / 1000).toFixed(2)).join(', ')} s); ${spread(o)}`,
      whenMissed: oneCompanyMissReason({ ...o, cores: availableParallelism() }),
    },
    {
      group: 'nights',
      name: "night Apple's clones changed: extra wall time per changed company / its own download (curl)",
      value: extraPerChanged / o.download,
      unit: 'ratio',
      target: '<= 2',
      ok: extraPerChanged / o.download <= 2,
      note:
        `${extraFiled.toFixed(1)} s beyond the quiet night 2 for ${o.changed} changed companies; ` +
        `Apple's facts_full + evidence download ${o.download.toFixed(2)} s (median of the rounds). A file holding a changed company keeps its other ` +
        `row groups byte for byte; only the <= 2 row groups the company starts and ends in are re-encoded`,
    },
  ];
}

/** Every time behind the one-company figure, so a reader sees the spread and the load. */
function spread(o: {
  quiet: Night;
  rounds: readonly Round[];
  download: number;
  timeline: readonly Night[];
}): string {
  const list = (xs: readonly number[]): string => xs.map((x) => x.toFixed(2)).join(', ');
  const ones = o.rounds.map((r) => `${seconds(r.one.ms, 2)} (10-K ${r.filed ? 'in' : 'out'})`);
  const quiets = [o.quiet.ms, ...o.rounds.map((r) => r.quiet.ms)];
  const load = loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
  return (
    `one-company nights ${ones.join(', ')} s (median ${seconds(median(o.rounds.map((r) => r.one.ms)), 2)}), ` +
    `quiet nights ${list(quiets.map((ms) => ms / 1000))} s (median ${seconds(median(quiets), 2)}); ` +
    `Apple's facts_full + evidence download ${list(o.rounds.map((r) => r.download))} s (median ${o.download.toFixed(2)}; ` +
    `each the first serve of a body just built, as the exporter's); every night in order (s = parts + publish; CPU s of the exporter's process in its parts + in its publish, + the emulator's; parts that waited for the budget gate; 1-min load after it): ` +
    `${o.timeline.map((n) => `${n.id.replace('bench-', '')} ${seconds(n.ms, 2)} = ${seconds(n.partsMs, 2)} + ${seconds(n.ms - n.partsMs, 2)} (cpu ${n.cpu.exporterParts.toFixed(1)} + ${(n.cpu.exporter - n.cpu.exporterParts).toFixed(1)} + ${n.cpu.emulator.toFixed(1)}, ${waitsText(n.waits)}, load ${n.load.toFixed(1)})`).join(', ')}; ` +
    `load average at the end ${load}`
  );
}

interface QuietBytes {
  /** The snapshot's published bytes (its manifest's total). */
  published: number;
  /** Bytes written that night: files not reused, and `changes`. */
  anew: number;
  /** Every byte under the root that belongs to the snapshot. */
  stored: number;
}

async function quietNightBytes(root: string, id: string): Promise<QuietBytes> {
  const manifest = JSON.parse(
    await readFile(join(root, '_snapshots', id, 'manifest.json'), 'utf8'),
  ) as Manifest;
  const anew =
    manifest.files.filter((f) => f.reused_from === undefined).reduce((b, f) => b + f.bytes, 0) +
    (manifest.changes?.files ?? []).reduce((b, f) => b + f.bytes, 0);
  return { published: manifest.totals.bytes, anew, stored: await bytesOfSnapshot(root, id) };
}

/** Every byte under the root that belongs to a snapshot: its partitions, metadata and staging. */
async function bytesOfSnapshot(root: string, id: string): Promise<number> {
  let total = 0;
  const walk = async (dir: string, mine: boolean): Promise<void> => {
    for (const e of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
      const path = join(dir, e.name);
      const own =
        mine || e.name === `snapshot_id=${id}` || (e.name === id && /_snapshots|_staging$/.test(dir));
      if (e.isDirectory()) await walk(path, own);
      else if (own) total += (await stat(path)).size;
    }
  };
  await walk(root, false);
  return total;
}

/** What the bench asks of the emulator's process: its control plane, and Apple's bodies. */
interface EmulatorControl {
  /** Requests the emulator has answered so far. */
  requests(): Promise<number>;
  setClock(body: { as_of: string; companies?: Record<string, string> }): Promise<void>;
  /** Apple alone to `date` (the rest stays at QUIET_AS_OF), then built there (see oneCompanyRounds). */
  moveApple(date: string): Promise<void>;
  /** Seconds curl takes to download Apple's facts_full and evidence bodies, one after the other. */
  appleDownloadSeconds(): Promise<number>;
}

function emulatorControl(url: string): EmulatorControl {
  const post = async (path: string, body: unknown, headers: Record<string, string> = {}): Promise<void> => {
    const res = await fetch(`${url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`emulator ${path}: HTTP ${res.status}: ${text.slice(0, 300)}`);
  };
  const setClock: EmulatorControl['setClock'] = (body) => post('/_emulator/clock', body);
  return {
    async requests() {
      const res = await fetch(`${url}/_emulator/stats`);
      return ((await res.json()) as { total: { requests: number } }).total.requests;
    },
    setClock,
    async moveApple(date) {
      await setClock({ as_of: QUIET_AS_OF, companies: { AAPL: date } });
      await post('/api/b2b/series/catalog', { ticker: 'AAPL' }, { 'x-api-key': DEMO_API_KEY });
    },
    async appleDownloadSeconds() {
      let total = 0;
      for (const op of ['facts/full', 'evidence/enriched'])
        total += (await curlDownload(`${url}/api/b2b/${op}`, 'AAPL')).seconds;
      return total;
    },
  };
}

/** `date` (YYYY-MM-DD) moved by `days` (negative: earlier). */
function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

function seconds(ms: number, digits = 1): string {
  return (ms / 1000).toFixed(digits);
}

function mb(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

/** A whole number from the environment, `fallback` when unset; throws naming the variable otherwise. */
function wholeNumberEnv(name: string, fallback: number, min: number, max: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const v = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || v < min || v > max)
    throw new Error(`${name} must be a whole number from ${min} to ${max} (got "${raw}")`);
  return v;
}
