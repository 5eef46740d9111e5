/** The exporter config the pipeline benches share: unlimited pace, Parquet, default datasets, silent logs. */
import { loadConfig, type Config } from '../../src/config/load.js';
import { DEMO_API_KEY } from '../../src/emulator/demo-key.js';
import { DEFAULT_DATASETS } from '../../src/types.js';

/** `extra` adds or overrides settings by their dotted path, e.g. `{ 'incremental.full_refresh_every_days': 366 }`. */
export function benchConfig(
  apiUrl: string,
  redisUrl: string,
  outDir: string,
  prefix: string,
  extra: Record<string, unknown> = {},
): Config {
  const flags = Object.entries({
    'api.url': apiUrl,
    'redis.url': redisUrl,
    'redis.prefix': prefix,
    'output.dir': outDir,
    'output.formats': ['parquet'],
    datasets: [...DEFAULT_DATASETS],
    'budget.requests_per_minute': 100_000,
    'worker.concurrency': 16,
    'log.level': 'silent',
    ...extra,
  }).map(([path, value]) => ({ path, value, flag: `bench ${path}` }));
  return loadConfig({ env: { FILINGS_API_KEY: DEMO_API_KEY }, flags });
}
