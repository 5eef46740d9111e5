/**
 * The fault-matrix soak suite (`npm run soak`, `npm run soak -- --short`, `--faults a,b`): for each
 * fault, real processes (Redis: a redis-server with AOF, or a private Redis Cluster or Sentinel
 * group for the failover faults; the emulator; two workers with their own working dirs) export one
 * snapshot while the fault is injected, then the published rows are checked against the API with
 * DuckDB, value by value. Prints one table: fault, trials, rows lost, rows extra, rows duplicated,
 * partial files visible, outcome. Exits 1 unless every row is 0 / 0 / 0 / 0 / published.
 */
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { parseRedisUrl } from '../src/config/redis-url.js';
import { DEMO_API_KEY } from '../src/emulator/index.js';
import { openRedis } from '../src/infra/redis-connection.js';
import { freePort } from '../src/infra/redis-server.js';
import { silentLogger } from '../src/log.js';
import { SnapshotStore } from '../src/pipeline/record/snapshot-store.js';
import { checkTrial } from './soak/check.js';
import { BIN, Held, managed, waitFor, type Proc } from './soak/processes.js';
import { startSoakRedis, type SoakRedis, type SoakTopology } from './soak/topologies.js';

const args = process.argv.slice(2);
const short = args.includes('--short');
const pick =
  args.find((a) => a.startsWith('--faults='))?.slice(9) ??
  (args.includes('--faults') ? args[args.indexOf('--faults') + 1] : undefined);
const OUTAGE_S = short ? 20 : 60;
const SYNTHETIC = short ? 12 : 40;
const DATASETS = ['series_catalog', 'issuer_reference'];

interface World {
  dir: string;
  outDir: string;
  apiUrl: string;
  redis: SoakRedis;
  emulator: Proc;
  workers: Proc[];
  store: SnapshotStore;
  env: NodeJS.ProcessEnv;
  companies: string[];
  /** Starts a control-only worker (faults of publishing run the others with --only parts). */
  startControl(): Promise<void>;
}

/**
 * A fault: what it does, and when (`publish`: once every part is staged; the workers then run
 * `--only parts` and the fault starts the control worker that publishes, so the fault is sure to
 * meet the publish); `redis`: the topology its trial runs on (default `single`).
 */
type Fault = ((w: World) => Promise<void>) & { at?: 'publish'; tmpfsMb?: number; redis?: SoakTopology };

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function armRules(w: World, rules: Record<string, unknown>[]): Promise<void> {
  const res = await fetch(`${w.apiUrl}/_emulator/faults`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ rules }),
  });
  if (res.status >= 300) throw new Error(`faults: ${res.status} ${await res.text()}`);
}

/** The primary holding the queue's slot SIGKILLed, a replica promoted; the run rides through. */
function failover(redis: 'cluster' | 'sentinel'): Fault {
  const kill = async (w: World): Promise<void> => {
    process.stderr.write(`  ${redis}: ${await w.redis.failover()}\n`);
  };
  return Object.assign(kill, { redis });
}

const FAULTS: Record<string, Fault> = {
  none: async () => undefined,
  'worker SIGKILL mid-part': async (w) => {
    await w.workers[0]?.stop('SIGKILL');
    await sleep(1000);
    await w.workers[0]?.start();
  },
  'Redis restart (AOF)': (w) => w.redis.restart(2000),
  'Sentinel failover (primary SIGKILL)': failover('sentinel'),
  'Cluster failover (slot primary SIGKILL)': failover('cluster'),
  [`API outage ${OUTAGE_S} s`]: async (w) => {
    await w.emulator.stop('SIGKILL');
    await sleep(OUTAGE_S * 1000);
    await w.emulator.start();
  },
  'truncated bodies': (w) => armRules(w, [{ operation: 'series/catalog', fault: 'truncate', times: 6 }]),
  'connection resets': (w) => armRules(w, [{ operation: 'series/catalog', fault: 'reset', times: 6 }]),
  '500s': (w) => armRules(w, [{ operation: 'issuer/reference', fault: '500', times: 6 }]),
  'slow bodies past the body timeout': (w) =>
    armRules(w, [{ operation: 'series/catalog', fault: 'slow', ms: 1500, times: 4 }]),
  'disk full during publish': Object.assign(
    async (w: World) => {
      // Every part is staged: fill what is left of the output's filesystem as publishing starts,
      // hold it full for 3 s, then free it (the publish job retries).
      const filler = join(w.outDir, '.filler');
      spawnSync('fallocate', ['-l', `${diskFreeBytes(w.outDir)}`, filler]);
      spawnSync('sh', ['-c', `cat /dev/zero > '${filler}.rest' 2>/dev/null`]);
      await w.startControl();
      await sleep(3000);
      await rm(filler, { force: true });
      await rm(`${filler}.rest`, { force: true });
    },
    { at: 'publish' as const, tmpfsMb: 1024 },
  ),
};

/** Free bytes of the filesystem holding `path`. */
function diskFreeBytes(path: string): number {
  const out = spawnSync('df', ['-B1', '--output=avail', path], { encoding: 'utf8' }).stdout;
  return Number(out.trim().split('\n').pop() ?? 0);
}

/** A small filesystem of its own for the output, so filling it touches nothing else. */
function mountTmpfs(outDir: string, mb: number, held: Held): void {
  const m = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${mb}m`, 'tmpfs', outDir], { encoding: 'utf8' });
  if (m.status !== 0)
    throw new Error(
      `not run: a tmpfs cannot be mounted here (${m.stderr.trim() || 'mount failed'}; needs root)`,
    );
  held.add(`the tmpfs at ${outDir}`, () => void spawnSync('umount', [outDir], { stdio: 'ignore' }));
}

/** Starts a managed process once its stop is held, so a start that fails half way is stopped too. */
async function startHeld(p: Proc, held: Held): Promise<Proc> {
  held.add(p.name, () => p.stop('SIGTERM', 5000));
  await p.start();
  return p;
}

async function startEmulator(dir: string, logDir: string, held: Held): Promise<{ proc: Proc; url: string }> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const args = ['emulator', '--port', String(port), '--synthetic', String(SYNTHETIC)];
  const proc = managed('emulator', process.execPath, [BIN, ...args, '--rate-limit', 'none', '--no-warm'], {
    env: { ...process.env, LOG_LEVEL: 'warn' },
    cwd: dir,
    logDir,
    ready: async () => (await fetch(`${url}/_emulator/health`)).ok,
  });
  return { proc: await startHeld(proc, held), url };
}

async function writeConfig(dir: string): Promise<string> {
  const config = join(dir, 'soak.yaml');
  await writeFile(
    config,
    [
      'retry:',
      '  attempts: 5',
      '  base_delay_ms: 300',
      '  max_delay_ms: 3000',
      '  outage_probe_base_ms: 1000',
      '  outage_probe_max_ms: 5000',
      `  outage_max_ms: ${(OUTAGE_S + 120) * 1000}`,
      'api:',
      '  body_timeout_ms: 1000',
      'worker:',
      '  concurrency: 4',
      '  shutdown_timeout_ms: 5000',
      'output:',
      '  formats: [parquet]',
      '',
    ].join('\n'),
  );
  return config;
}

/** A `filings-export worker` process with its own working and temp dir. */
async function startWorker(
  name: string,
  only: string[],
  ctx: { dir: string; logDir: string; env: NodeJS.ProcessEnv },
  held: Held,
): Promise<Proc> {
  const cwd = join(ctx.dir, name);
  await mkdir(cwd, { recursive: true });
  const env = { ...ctx.env, TMPDIR: cwd };
  return startHeld(
    managed(name, process.execPath, [BIN, 'worker', ...only], { env, cwd, logDir: ctx.logDir }),
    held,
  );
}

/** The snapshot store over the trial's Redis, connected as the product connects (any topology). */
async function openStore(redis: SoakRedis, held: Held): Promise<SnapshotStore> {
  const target = parseRedisUrl(redis.url);
  if (typeof target === 'string') throw new Error(`soak: ${redis.url}: ${target}`);
  const client: Redis = await openRedis({ url: redis.url, target, logger: silentLogger() });
  held.add('the store’s Redis connection', () => client.disconnect());
  return new SnapshotStore(client, {
    prefix: redis.prefix,
    queueBase: 'filings-export',
    recordTtlSeconds: 86_400,
  });
}

/** Starts a trial's world; everything started is in `held`, also when a step fails. */
async function setup(name: string, fault: Fault, held: Held): Promise<World> {
  const dir = await mkdtemp(join(tmpdir(), 'fx-soak-'));
  held.add(`the temp dir ${dir}`, () =>
    process.env.SOAK_KEEP ? undefined : rm(dir, { recursive: true, force: true }),
  );
  const outDir = join(dir, 'out');
  const logDir = join(dir, 'logs');
  await mkdir(outDir);
  if (fault.tmpfsMb !== undefined) mountTmpfs(outDir, fault.tmpfsMb, held);
  await mkdir(logDir);
  const base = `soak${name.replace(/[^a-z0-9]/gi, '').slice(0, 12)}`;
  const redis = await startSoakRedis(fault.redis ?? 'single', base, { dir, logDir });
  held.add(`the ${redis.topology} Redis`, () => redis.close());
  const emulator = await startEmulator(dir, logDir, held);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    REDIS_URL: redis.url,
    FILINGS_API_URL: emulator.url,
    FILINGS_API_KEY: DEMO_API_KEY,
    FILINGS_EXPORT_CONFIG: await writeConfig(dir),
    FILINGS_EXPORT_PREFIX: redis.prefix,
    FILINGS_EXPORT_OUT: outDir,
    LOG_LEVEL: 'warn',
  };
  const ctx = { dir, logDir, env };
  const only = fault.at === 'publish' ? ['--only', 'parts'] : [];
  const workers: Proc[] = [];
  for (const i of [1, 2]) workers.push(await startWorker(`worker-${i}`, only, ctx, held));
  const companies = [
    'AAPL',
    'MSFT',
    'NVDA',
    ...Array.from({ length: SYNTHETIC }, (_, i) => String(9_000_000_001 + i).padStart(10, '0')),
  ];
  const startControl = async (): Promise<void> => {
    workers.push(await startWorker('control', ['--only', 'control'], ctx, held));
  };
  const store = await openStore(redis, held);
  return {
    dir,
    outDir,
    apiUrl: emulator.url,
    redis,
    emulator: emulator.proc,
    workers,
    store,
    env,
    companies,
    startControl,
  };
}

interface Row {
  fault: string;
  trials: number;
  lost: number;
  extra: number;
  duplicated: number;
  partial: number;
  outcome: string;
  seconds: number;
}

/** A row for a trial that could not be judged: why, in the outcome column. */
function failedRow(fault: string, trials: number, outcome: string, started: number): Row {
  const seconds = trials === 0 ? 0 : Math.round((Date.now() - started) / 1000);
  return { fault, trials, lost: NaN, extra: NaN, duplicated: NaN, partial: NaN, outcome, seconds };
}

/** Runs the snapshot in `w`, injects the fault on the way, and judges what was published. */
async function runTrial(name: string, fault: Fault, w: World, started: number): Promise<Row> {
  const id = `soak-${name.replace(/[^a-z0-9]+/gi, '-').toLowerCase()}`.slice(0, 60);
  const run = spawnSync(
    process.execPath,
    [BIN, 'run', '--tickers', w.companies.join(','), '--datasets', DATASETS.join(','), '--snapshot-id', id],
    { env: w.env, encoding: 'utf8' },
  );
  if (run.status !== 0) throw new Error(`run: ${run.stderr}`);
  const total = w.companies.length * DATASETS.length;
  // Inject the fault once a fifth of the parts are done (parts in flight), or, for a fault of
  // publishing, once every part is.
  const at = fault.at === 'publish' ? total : Math.max(1, Math.floor(total / 5));
  let done = 0;
  await waitFor(
    'parts in flight',
    async () => {
      const rec = await w.store.get(id);
      done = Object.values(rec?.progress ?? {}).reduce((n, p) => n + p.total - p.pending, 0);
      return done >= at;
    },
    120_000,
  );
  process.stderr.write(`  ${name}: injected with ${done} of ${total} parts done\n`);
  await fault(w);
  let state = '';
  await waitFor(
    'the snapshot to end',
    async () => {
      state = (await w.store.get(id))?.state ?? '';
      return state === 'published' || state === 'failed' || state === 'stopped';
    },
    (OUTAGE_S + 300) * 1000,
  );
  const check = await checkTrial({
    outDir: w.outDir,
    snapshotId: id,
    datasets: DATASETS,
    companies: w.companies,
    api: { url: w.apiUrl, key: DEMO_API_KEY },
  });
  if (state !== 'published') check.details.push(`message: ${(await w.store.get(id))?.message ?? ''}`);
  if (check.details.length) process.stderr.write(`  ${name}: ${check.details.slice(0, 5).join('; ')}\n`);
  return {
    fault: name,
    trials: 1,
    lost: check.rowsLost,
    extra: check.rowsExtra,
    duplicated: check.rowsDuplicated,
    partial: check.partialFiles,
    // Published means the record says so and the marker is there.
    outcome: state === 'published' && !check.published ? 'published without _SUCCESS' : state,
    seconds: Math.round((Date.now() - started) / 1000),
  };
}

/** The trial under way: what a signal to the soak stops before it exits. */
let current: Held | undefined;

async function trial(name: string, fault: Fault): Promise<Row> {
  const started = Date.now();
  const held = new Held();
  current = held;
  try {
    let w: World;
    try {
      w = await setup(name, fault, held);
    } catch (err: unknown) {
      return failedRow(name, 0, String(err), started);
    }
    return await runTrial(name, fault, w, started);
  } catch (err: unknown) {
    return failedRow(name, 1, `error: ${String(err)}`, started);
  } finally {
    await held.closeAll();
    current = undefined;
  }
}

for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => {
    process.stderr.write(
      `soak: ${signal}: stopping the trial's processes (a second ${signal} exits at once)\n`,
    );
    void (current?.closeAll() ?? Promise.resolve()).finally(() => process.exit(130));
  });

const chosen = Object.entries(FAULTS).filter(
  ([name]) => !pick || pick.split(',').some((p) => name.toLowerCase().includes(p.toLowerCase())),
);
const rows: Row[] = [];
for (const [name, fault] of chosen) {
  process.stderr.write(`soak: ${name}...\n`);
  rows.push(await trial(name, fault));
}
const header = [
  'fault',
  'trials',
  'rows lost',
  'rows extra',
  'rows duplicated',
  'partial files visible',
  'outcome',
  'seconds',
];
const lines = [
  header,
  ...rows.map((r) =>
    [r.fault, r.trials, r.lost, r.extra, r.duplicated, r.partial, r.outcome, r.seconds].map(String),
  ),
];
process.stdout.write(
  `${lines
    .map((l) => `| ${l.join(' | ')} |`)
    .join('\n')
    .replace(/\n/, `\n|${header.map(() => '---').join('|')}|\n`)}\n`,
);
process.stdout.write(
  `(${short ? 'short' : 'full'} run: ${SYNTHETIC + 3} companies x ${DATASETS.length} datasets, outage ${OUTAGE_S} s; disk-full and quota-429 faults: see docs/pipeline.md)\n`,
);
const bad = rows.filter(
  (r) => r.lost !== 0 || r.extra !== 0 || r.duplicated !== 0 || r.partial !== 0 || r.outcome !== 'published',
);
process.exitCode = bad.length === 0 ? 0 : 1;
