/**
 * Operations figures (issue 14): the cost of Prometheus metrics on part throughput (unlimited key,
 * 2,000 small parts, with and without metrics, alternating, median of 3 each), and the start-up
 * time of the CLI entry compiled (as in the image) against through tsx; (issue 27) Redis's time
 * per read of a snapshot's view at 1,000 and 10,000 companies (support/snapshot-view.ts).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cp, mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { jobDefinitions } from '../jobs/index.js';
import { loadConfig, requireApiKey } from '../src/config/load.js';
import { DEMO_API_KEY, startEmulator } from '../src/emulator/index.js';
import { SYNTHETIC_CIK_START } from '../src/emulator/data/companies/synthetic.js';
import { startPrivateRedis } from '../src/infra/redis-server.js';
import { silentLogger } from '../src/log.js';
import { createMetrics } from '../src/metrics/metrics.js';
import { openExporter, parseCompany, runSnapshot } from '../src/pipeline/index.js';
import { median } from './support/stats.js';
import type { BenchResult } from './support/types.js';
import { snapshotViewCost } from './support/snapshot-view.js';

const repo = join(import.meta.dirname, '..');
const COMPANIES = 2000;

async function metricsOverhead(): Promise<BenchResult> {
  const redis = process.env.REDIS_URL ? undefined : await startPrivateRedis();
  const redisUrl = process.env.REDIS_URL ?? redis?.url ?? '';
  const outDir = await mkdtemp(join(tmpdir(), 'fx-bench-ops-'));
  const emulator = await startEmulator({
    port: 0,
    synthetic: COMPANIES,
    rateLimitPerMinute: null,
    warmUp: false,
  });
  try {
    const config = loadConfig({
      env: { FILINGS_API_KEY: DEMO_API_KEY },
      flags: Object.entries({
        'api.url': emulator.url,
        'redis.url': redisUrl,
        'redis.prefix': `benchops${randomBytes(3).toString('hex')}`,
        'output.dir': outDir,
        'output.formats': ['ndjson'],
        datasets: ['issuer_reference'],
        'worker.concurrency': 32,
        'log.level': 'silent',
      }).map(([path, value]) => ({ path, value, flag: `bench ${path}` })),
    });
    const exporter = await openExporter({
      config,
      logger: silentLogger(),
      apiKey: requireApiKey(config),
      definitions: jobDefinitions,
    });
    const companies = Array.from({ length: COMPANIES }, (_, i) =>
      parseCompany(String(SYNTHETIC_CIK_START + i), 'bench'),
    );
    const times: Record<'with' | 'without', number[]> = { with: [], without: [] };
    try {
      let n = 0;
      for (let round = 0; round < 3; round++) {
        for (const variant of ['without', 'with'] as const) {
          const metrics = variant === 'with' ? createMetrics(new Registry()) : undefined;
          const t0 = performance.now();
          const { record } = await runSnapshot({
            exporter,
            spec: {
              id: `bench-ops-${n++}`,
              date: '2026-11-21',
              trigger: 'manual',
              companies,
              datasets: ['issuer_reference'],
              formats: ['ndjson'],
              outDir,
            },
            allowMultiDay: true,
            local: true,
            wait: true,
            logger: silentLogger(),
            tty: false,
            say: () => undefined,
            ...(metrics ? { metrics } : {}),
          });
          if (record.state !== 'published')
            throw new Error(`snapshot ${record.state}: ${record.message ?? ''}`);
          times[variant].push(performance.now() - t0);
        }
      }
    } finally {
      await exporter.close();
    }
    const overhead = median(times.with) / median(times.without) - 1;
    return {
      group: 'operations',
      name: `metrics overhead on part throughput (${COMPANIES} issuer_reference parts, unlimited key)`,
      value: Math.round(overhead * 1000) / 10,
      unit: '%',
      target: '<= 3 %',
      ok: overhead <= 0.03,
      note: `median of 3: ${Math.round(median(times.without))} ms without, ${Math.round(median(times.with))} ms with`,
    };
  } finally {
    await emulator.close();
    await redis?.close();
    await rm(outDir, { recursive: true, force: true });
  }
}

async function startup(): Promise<BenchResult[]> {
  // Compile as the image does, into a folder laid out like the checkout.
  const dir = await mkdtemp(join(tmpdir(), 'fx-bench-build-'));
  try {
    execFileSync(
      process.execPath,
      [join(repo, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--outDir', dir],
      {
        cwd: repo,
      },
    );
    await mkdir(join(dir, 'bin'));
    await cp(join(repo, 'bin/container-entry.mjs'), join(dir, 'bin/container-entry.mjs'));
    await cp(join(repo, 'package.json'), join(dir, 'package.json'));
    for (const d of ['node_modules', 'config', 'data']) await symlink(join(repo, d), join(dir, d));
    const time = (entry: string, env: NodeJS.ProcessEnv = process.env): number => {
      const t0 = performance.now();
      const r = spawnSync(process.execPath, [entry, 'worker', '--help'], { env, stdio: 'ignore' });
      if (r.status !== 0) throw new Error(`${entry} exited ${r.status}`);
      return performance.now() - t0;
    };
    const compiled: number[] = [];
    const tsx: number[] = [];
    // bin/filings-export.mjs runs build/ whenever build/ is current: forced to the sources, it
    // measures tsx, whatever state build/ is in.
    const sourceEnv = { ...process.env, FILINGS_EXPORT_ENTRY: 'source' };
    for (let i = 0; i < 5; i++) {
      compiled.push(time(join(dir, 'bin/container-entry.mjs')));
      tsx.push(time(join(repo, 'bin/filings-export.mjs'), sourceEnv));
    }
    return [
      {
        group: 'operations',
        name: 'worker start-up (worker --help), compiled JS as in the image',
        value: Math.round(median(compiled)),
        unit: 'ms',
        note: 'median of 5',
      },
      {
        group: 'operations',
        name: 'worker start-up (worker --help), sources through tsx (FILINGS_EXPORT_ENTRY=source, warm cache)',
        value: Math.round(median(tsx)),
        unit: 'ms',
        note: 'median of 5',
      },
    ];
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function run(): Promise<BenchResult[]> {
  return [await metricsOverhead(), ...(await startup()), ...(await snapshotViewCost())];
}
