/**
 * The fault-matrix soak suite (`npm run soak`, `npm run soak -- --short`, `--faults a,b`): for each
 * fault, real processes (redis-server with AOF, the emulator, two workers with their own working
 * dirs) export one snapshot while the fault is injected, then the published rows are checked
 * against the API with DuckDB, value by value. Prints one table: fault, trials, rows lost, rows
 * extra, rows duplicated, partial files visible, outcome. Exits 1 unless every row is
 * 0 / 0 / 0 / 0 / published.
 */
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { DEMO_API_KEY } from '../src/emulator/index.js';
import { freePort } from '../src/infra/redis-server.js';
import { SnapshotStore } from '../src/pipeline/record/snapshot-store.js';
import { checkTrial } from './soak/check.js';
import { BIN, managed, waitFor, type Proc } from './soak/processes.js';

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
  redis: Proc;
  emulator: Proc;
  workers: Proc[];
  store: SnapshotStore;
  storeRedis: Redis;
  env: NodeJS.ProcessEnv;
  companies: string[];
  /** Starts a control-only worker (faults of publishing run the others with --only parts). */
  startControl(): Promise<void>;
}

/**
 * A fault: what it does, and when (`publish`: once every part is staged; the workers then run
 * `--only parts` and the fault starts the control worker that publishes, so the fault is sure to
 * meet the publish).
 */
type Fault = ((w: World) => Promise<void>) & { at?: 'publish'; tmpfsMb?: number };

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function armRules(w: World, rules: Record<string, unknown>[]): Promise<void> {
  const res = await fetch(`${w.apiUrl}/_emulator/faults`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ rules }),
  });
  if (res.status >= 300) throw new Error(`faults: ${res.status} ${await res.text()}`);
}

const FAULTS: Record<string, Fault> = {
  none: async () => undefined,
  'worker SIGKILL mid-part': async (w) => {
    await w.workers[0]?.stop('SIGKILL');
    await sleep(1000);
    await w.workers[0]?.start();
  },
  'Redis restart (AOF)': async (w) => {
    await w.redis.stop('SIGTERM');
    await sleep(2000);
    await w.redis.start();
  },
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

async function setup(name: string, tmpfsMb?: number, partsOnly = false): Promise<World> {
  const dir = await mkdtemp(join(tmpdir(), 'fx-soak-'));
  const outDir = join(dir, 'out');
  const logDir = join(dir, 'logs');
  await mkdir(outDir);
  if (tmpfsMb !== undefined) {
    // A small filesystem of its own for the output, so filling it touches nothing else.
    const m = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${tmpfsMb}m`, 'tmpfs', outDir], {
      encoding: 'utf8',
    });
    if (m.status !== 0)
      throw new Error(
        `not run: a tmpfs cannot be mounted here (${m.stderr.trim() || 'mount failed'}; needs root)`,
      );
  }
  await mkdir(logDir);
  const redisPort = await freePort();
  const apiPort = await freePort();
  const apiUrl = `http://127.0.0.1:${apiPort}`;
  const redisUrl = `redis://127.0.0.1:${redisPort}`;
  const redis = managed(
    'redis',
    'redis-server',
    ['--port', String(redisPort), '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes', '--save', ''],
    {
      env: process.env,
      cwd: dir,
      logDir,
      ready: async () =>
        spawnSync('redis-cli', ['-p', String(redisPort), 'ping'])
          .stdout?.toString()
          .trim() === 'PONG',
    },
  );
  await redis.start();
  const emulator = managed(
    'emulator',
    process.execPath,
    [
      BIN,
      'emulator',
      '--port',
      String(apiPort),
      '--synthetic',
      String(SYNTHETIC),
      '--rate-limit',
      'none',
      '--no-warm',
    ],
    {
      env: { ...process.env, LOG_LEVEL: 'warn' },
      cwd: dir,
      logDir,
      ready: async () => (await fetch(`${apiUrl}/_emulator/health`)).ok,
    },
  );
  await emulator.start();
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
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    REDIS_URL: redisUrl,
    FILINGS_API_URL: apiUrl,
    FILINGS_API_KEY: DEMO_API_KEY,
    FILINGS_EXPORT_CONFIG: config,
    FILINGS_EXPORT_PREFIX: `soak${name.replace(/[^a-z0-9]/gi, '').slice(0, 12)}`,
    FILINGS_EXPORT_OUT: outDir,
    LOG_LEVEL: 'warn',
  };
  const workers: Proc[] = [];
  for (const i of [1, 2]) {
    const cwd = join(dir, `worker-${i}`);
    await mkdir(cwd);
    const w = managed(
      `worker-${i}`,
      process.execPath,
      [BIN, 'worker', ...(partsOnly ? ['--only', 'parts'] : [])],
      {
        env: { ...env, TMPDIR: cwd },
        cwd,
        logDir,
      },
    );
    await w.start();
    workers.push(w);
  }
  const storeRedis = new Redis(redisUrl, { maxRetriesPerRequest: null });
  storeRedis.on('error', () => undefined); // Redis restarts are one of the faults
  const store = new SnapshotStore(storeRedis, {
    prefix: env.FILINGS_EXPORT_PREFIX ?? 'fx',
    queueBase: 'filings-export',
    recordTtlSeconds: 86_400,
  });
  const companies = [
    'AAPL',
    'MSFT',
    'NVDA',
    ...Array.from({ length: SYNTHETIC }, (_, i) => String(9_000_000_001 + i).padStart(10, '0')),
  ];
  const startControl = async (): Promise<void> => {
    const cwd = join(dir, 'control');
    await mkdir(cwd, { recursive: true });
    const c = managed('control', process.execPath, [BIN, 'worker', '--only', 'control'], {
      env: { ...env, TMPDIR: cwd },
      cwd,
      logDir,
    });
    await c.start();
    workers.push(c);
  };
  return { dir, outDir, apiUrl, redis, emulator, workers, store, storeRedis, env, companies, startControl };
}

async function teardown(w: World): Promise<void> {
  w.storeRedis.disconnect();
  for (const p of [...w.workers, w.emulator, w.redis]) await p.stop('SIGTERM', 5000).catch(() => undefined);
  spawnSync('umount', [w.outDir], { stdio: 'ignore' });
  if (!process.env.SOAK_KEEP) await rm(w.dir, { recursive: true, force: true });
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

async function trial(name: string, fault: Fault): Promise<Row> {
  const started = Date.now();
  let w: World;
  try {
    w = await setup(name, fault.tmpfsMb, fault.at === 'publish');
  } catch (err: unknown) {
    return {
      fault: name,
      trials: 0,
      lost: NaN,
      extra: NaN,
      duplicated: NaN,
      partial: NaN,
      outcome: String(err),
      seconds: 0,
    };
  }
  try {
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
    await waitFor(
      'parts in flight',
      async () => {
        const rec = await w.store.get(id);
        const done = Object.values(rec?.progress ?? {}).reduce((n, p) => n + p.total - p.pending, 0);
        return done >= at;
      },
      120_000,
    );
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
  } catch (err: unknown) {
    return {
      fault: name,
      trials: 1,
      lost: NaN,
      extra: NaN,
      duplicated: NaN,
      partial: NaN,
      outcome: `error: ${String(err)}`,
      seconds: Math.round((Date.now() - started) / 1000),
    };
  } finally {
    await teardown(w);
  }
}

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
