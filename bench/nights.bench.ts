/**
 * Incremental nights (issue 13): the bundled universe plus 500 synthetic companies (NIGHTS_BENCH_SYNTHETIC),
 * default datasets, Parquet, the emulator unlimited and its clock at 2025-10-30, workers in this
 * process. Night 1 fetches everything; night 2 (nothing filed) and night 3 (the clock moved to
 * 2025-11-05: Apple's FY2025 10-K, and so every synthetic clone of Apple, changed) are incremental.
 * Figures: requests per company of a night with nothing changed (target <= 1.1), extra requests
 * per changed company (2: its facts_full and evidence), wall time of an incremental night against
 * the full one.
 *
 * `npm run bench -- nights`
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jobProcessors } from '../jobs/index.js';
import { requireApiKey } from '../src/config/load.js';
import { loadStore } from '../src/emulator/data/index.js';
import { startEmulator } from '../src/emulator/index.js';
import { startPrivateRedis } from '../src/infra/redis-server.js';
import { silentLogger } from '../src/log.js';
import { openExporter } from '../src/pipeline/exporter.js';
import { runSnapshot } from '../src/pipeline/run-snapshot.js';
import { parseCompany } from '../src/pipeline/record/universe.js';
import { benchConfig } from './support/bench-config.js';
import type { BenchResult } from './support/types.js';

const SYNTHETIC = Number(process.env.NIGHTS_BENCH_SYNTHETIC ?? 500);
const APPLE_CIK = '0000320193';

export async function run(): Promise<BenchResult[]> {
  const redis = process.env.REDIS_URL ? undefined : await startPrivateRedis();
  const redisUrl = process.env.REDIS_URL ?? redis?.url ?? '';
  const outDir = await mkdtemp(join(tmpdir(), 'fx-bench-nights-'));
  const store = await loadStore({ validate: false, synthetic: SYNTHETIC });
  const emulator = await startEmulator({ port: 0, store, rateLimitPerMinute: null, asOf: '2025-10-30' });
  const stats = async (): Promise<number> => {
    const res = await fetch(`${emulator.url}/_emulator/stats`);
    return ((await res.json()) as { total: { requests: number } }).total.requests;
  };
  const config = benchConfig(emulator.url, redisUrl, outDir, `bench${randomBytes(4).toString('hex')}`);
  const exporter = await openExporter({
    config,
    logger: silentLogger(),
    apiKey: requireApiKey(config),
    processors: jobProcessors,
  });
  try {
    const companies = store.companies().map((c) => parseCompany(c.ticker ?? c.cik, 'bench'));
    const night = async (
      id: string,
      date: string,
    ): Promise<{ requests: number; ms: number; reused: number }> => {
      const before = await stats();
      const t0 = performance.now();
      const { record } = await runSnapshot({
        exporter,
        spec: {
          id,
          date,
          trigger: 'nightly',
          companies,
          datasets: config.datasets,
          formats: ['parquet'],
          outDir,
        },
        allowMultiDay: true,
        local: true,
        wait: true,
        logger: silentLogger(),
        tty: false,
        say: () => undefined,
      });
      if (record.state !== 'published') throw new Error(`${id} ${record.state}: ${record.message ?? ''}`);
      const reused = Object.values(record.progress).reduce((n, p) => n + p.reused, 0);
      return { requests: (await stats()) - before, ms: performance.now() - t0, reused };
    };
    const full = await night('bench-night-1', '2025-10-30');
    const quiet = await night('bench-night-2', '2025-10-31');
    await fetch(`${emulator.url}/_emulator/clock`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ as_of: '2025-11-05' }),
    });
    const filed = await night('bench-night-3', '2025-11-05');
    const n = companies.length;
    const others = config.datasets.length - 1;
    // Apple and its synthetic clones changed that night; every other company's parts were carried over.
    const changedCompanies = store.companies().filter((c) => store.sourceCikOf(c.cik) === APPLE_CIK).length;
    const changed = (filed.requests - n) / changedCompanies;
    const perCompany = quiet.requests / n;
    return [
      {
        group: 'nights',
        name: `full night: requests (${n} companies x ${config.datasets.length} datasets)`,
        value: full.requests,
        unit: 'count',
        note: `${(full.ms / 1000).toFixed(1)} s`,
      },
      {
        group: 'nights',
        name: 'night with nothing filed: requests per company',
        value: perCompany,
        unit: 'ratio',
        target: '<= 1.1',
        ok: perCompany <= 1.1,
        note: `${quiet.requests} requests for ${n} companies (was ${full.requests}); ${quiet.reused} parts carried over`,
      },
      {
        group: 'nights',
        name: 'night Apple filed its 10-K: extra requests per changed company',
        value: changed,
        unit: 'count',
        target: `= ${others}`,
        ok: changed === others,
        note: `${filed.requests} requests for ${n} companies, ${changedCompanies} of them changed (Apple and its synthetic clones)`,
      },
      {
        group: 'nights',
        name: 'wall time: quiet incremental night / full night',
        value: quiet.ms / full.ms,
        unit: 'ratio',
        note: `${(quiet.ms / 1000).toFixed(1)} s vs ${(full.ms / 1000).toFixed(1)} s; the filing night ${(filed.ms / 1000).toFixed(1)} s`,
      },
    ];
  } finally {
    await exporter.close();
    await emulator.close();
    await store.close();
    await redis?.close();
    await rm(outDir, { recursive: true, force: true });
  }
}
