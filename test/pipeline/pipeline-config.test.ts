import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_BUDGET_CONFIG, resolveBudgetConfig, toBudgetConfig } from '../../src/budget/index.js';
import { envLogLevel, loadConfig, requireApiKey } from '../../src/config/load.js';
import { DATASET_REGISTRY } from '../../src/datasets/index.js';
import { budgetConfigFrom } from '../../src/budget/index.js';
import { ConfigError } from '../../src/errors.js';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { REDACT_PATHS } from '../../src/log.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fx-config-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function file(name: string, text: string): Promise<string> {
  const p = join(dir, name);
  await writeFile(p, text);
  return p;
}

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('config layers', () => {
  it('loads the bundled defaults with no file and an empty environment', () => {
    const c = loadConfig({ env: {}, cwd: dir });
    // The default set is the registry's byDefault entries, in registry order (stated nowhere else).
    const byDefault = Object.entries(DATASET_REGISTRY).filter(([, e]) => e.byDefault);
    expect(byDefault.length).toBeGreaterThan(0);
    expect(c.datasets).toEqual(byDefault.map(([name]) => name));
    expect(c.output.dir).toBe(join(dir, 'out'));
    expect(c.api.key).toBeNull();
    expect(c.configFile).toBeNull();
  });

  it('applies defaults < file < environment < flags', async () => {
    const p = await file(
      'layers.yaml',
      'api: { url: "http://file.example:1" }\noutput: { dir: data/out, formats: [ndjson] }\nworker: { concurrency: 3 }\n',
    );
    const c = loadConfig({
      env: {
        FILINGS_EXPORT_CONFIG: p,
        FILINGS_API_URL: 'http://env.example:2',
        FILINGS_EXPORT_CONCURRENCY: '7',
      },
      flags: [{ path: 'output.formats', value: ['parquet'], flag: '--formats' }],
      cwd: '/',
    });
    expect(c.api.url).toBe('http://env.example:2');
    expect(c.worker.concurrency).toBe(7);
    // relative paths in a file are relative to the file
    expect(c.output.dir).toBe(join(dir, 'data/out'));
    expect(c.output.formats).toEqual(['parquet']);
    expect(c.configFile).toBe(p);
    // untouched fields keep their defaults
    expect(c.retry.attempts).toBe(5);
  });

  it('reads JSON config files too', async () => {
    const p = await file('c.json', JSON.stringify({ datasets: ['facts_core'] }));
    expect(loadConfig({ configPath: p, env: {} }).datasets).toEqual(['facts_core']);
  });

  it('budget.pacing defaults to even and reaches the budget as written in the file', async () => {
    expect(loadConfig({ env: {} }).budget.pacing).toBe('even');
    expect(budgetConfigFrom(loadConfig({ env: {} })).pacing).toBe('even');
    const p = await file('burst.yaml', 'budget:\n  pacing: burst\n  requests_per_minute: 120\n');
    const b = budgetConfigFrom(loadConfig({ configPath: p, env: {} }));
    expect(b).toMatchObject({ pacing: 'burst', requestsPerMinute: 120 });
  });

  it('every budget setting of defaults.yaml maps onto one of the budget module', () => {
    // The file names (snake_case) and the module's names (camelCase) stay one-to-one.
    const fileNames = Object.keys(loadConfig({ env: {} }).budget).sort();
    const moduleNames = Object.keys(DEFAULT_BUDGET_CONFIG)
      .map((k) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`))
      .sort();
    expect(fileNames).toEqual(moduleNames);
  });

  it("the budget's programmatic defaults are defaults.yaml's budget section", () => {
    // DEFAULT_BUDGET_CONFIG fills in resolveBudgetConfig's input: the same values as the file's.
    expect(toBudgetConfig(loadConfig({ env: {} }).budget)).toEqual(DEFAULT_BUDGET_CONFIG);
  });

  it('the example config is valid', () => {
    const c = loadConfig({ configPath: 'config/example.yaml', env: {} });
    expect(c.universe.tickers).toContain('AAPL');
    expect(c.budget.share).toBe(0.8);
  });
});

describe('config errors name the field and the source', () => {
  it('out-of-range value', async () => {
    const p = await file('share.yaml', 'budget:\n  share: 1.5\n');
    const e = configError(() => loadConfig({ configPath: p, env: {} }));
    expect(e.message).toBe(`config.budget.share: must be between 0 and 1 (got 1.5) in ${p}`);
    expect(e.code).toBe('CONFIG_INVALID');
  });

  it('a cron pattern the scheduler would refuse fails at load, not at `schedule`', async () => {
    const p = await file('cron.yaml', "schedule:\n  cron: '0 25 * * *'\n");
    const e = configError(() => loadConfig({ configPath: p, env: {} }));
    expect(e.message).toBe(
      `config.schedule.cron: is not a valid cron pattern: Constraint error, got value 25 expected range 0-23 (got "0 25 * * *") in ${p}`,
    );
    const q = await file('cron2.yaml', "schedule:\n  cron: 'nightly'\n");
    expect(configError(() => loadConfig({ configPath: q, env: {} })).message).toContain(
      'config.schedule.cron: must be a cron pattern with 5 or 6 fields',
    );
  });

  it('the budget rules are the same for the config file and for programmatic input (one source)', async () => {
    const p = await file('margin.yaml', 'budget:\n  safety_margin_ms: 30000\n');
    expect(configError(() => loadConfig({ configPath: p, env: {} })).message).toBe(
      `config.budget.safety_margin_ms: must be less than 20000 (a third of the 60 s window) (got 30000) in ${p}`,
    );
    expect(() => resolveBudgetConfig({ safetyMarginMs: 30000 })).toThrow(
      'budget.safetyMarginMs: must be less than 20000 (a third of the 60 s window) (got 30000)',
    );
    // A value the file accepts reaches the budget as written, with no second check in between.
    const q = await file(
      'ok.yaml',
      'budget:\n  requests_per_minute: 240\n  share: 0.5\n  safety_margin_ms: 0\n',
    );
    expect(budgetConfigFrom(loadConfig({ configPath: q, env: {} }))).toMatchObject({
      requestsPerMinute: 240,
      share: 0.5,
      safetyMarginMs: 0,
    });
  });

  it('LOG_LEVEL has one rule, whether it reaches log.level or a command that loads no config', () => {
    expect(envLogLevel({}, 'warn')).toBe('warn');
    expect(envLogLevel({ LOG_LEVEL: 'debug' })).toBe('debug');
    expect(() => envLogLevel({ LOG_LEVEL: 'loud' })).toThrow(
      'environment LOG_LEVEL: must be one of fatal, error, warn, info, debug, trace, silent (got "loud")',
    );
    expect(configError(() => loadConfig({ env: { LOG_LEVEL: 'loud' } })).message).toContain(
      'config.log.level: must be one of fatal, error, warn, info, debug, trace, silent',
    );
  });

  it('unknown pacing', async () => {
    const p = await file('pacing.yaml', 'budget:\n  pacing: smooth\n');
    const e = configError(() => loadConfig({ configPath: p, env: {} }));
    expect(e.message).toBe(`config.budget.pacing: must be even or burst (got "smooth") in ${p}`);
  });

  it('output.publish_conversions: 1 by default, from a file or FILINGS_EXPORT_PUBLISH_CONVERSIONS, 1 to 64', async () => {
    expect(loadConfig({ env: {}, cwd: dir }).output.publish_conversions).toBe(1);
    const p = await file('conversions.yaml', 'output: { publish_conversions: 3 }\n');
    expect(loadConfig({ env: { FILINGS_EXPORT_CONFIG: p } }).output.publish_conversions).toBe(3);
    expect(
      loadConfig({ env: { FILINGS_EXPORT_CONFIG: p, FILINGS_EXPORT_PUBLISH_CONVERSIONS: '2' } }).output
        .publish_conversions,
    ).toBe(2);
    expect(
      configError(() => loadConfig({ env: { FILINGS_EXPORT_PUBLISH_CONVERSIONS: '0' } })).message,
    ).toMatch(/config\.output\.publish_conversions: .*in environment FILINGS_EXPORT_PUBLISH_CONVERSIONS/);
    expect(
      configError(() => loadConfig({ env: { FILINGS_EXPORT_PUBLISH_CONVERSIONS: '65' } })).message,
    ).toMatch(/config\.output\.publish_conversions: must be at most 64/);
  });

  it.each([
    ['convert_while_staging', 'FILINGS_EXPORT_CONVERT_WHILE_STAGING'],
    ['iceberg', 'FILINGS_EXPORT_ICEBERG'],
  ] as const)('output.%s: on by default, off from a file or %s', async (key, variable) => {
    expect(loadConfig({ env: {}, cwd: dir }).output[key]).toBe(true);
    const p = await file(`${key}.yaml`, `output: { ${key}: false }\n`);
    expect(loadConfig({ env: { FILINGS_EXPORT_CONFIG: p } }).output[key]).toBe(false);
    expect(loadConfig({ env: { FILINGS_EXPORT_CONFIG: p, [variable]: 'true' } }).output[key]).toBe(true);
    const q = await file(`${key}-bad.yaml`, `output: { ${key}: sometimes }\n`);
    expect(configError(() => loadConfig({ env: { FILINGS_EXPORT_CONFIG: q } })).message).toMatch(
      new RegExp(`config\\.output\\.${key}: must be true or false`),
    );
    expect(configError(() => loadConfig({ env: { [variable]: 'maybe' } })).message).toMatch(
      new RegExp(variable),
    );
  });

  it('wrong type from the environment', () => {
    const e = configError(() => loadConfig({ env: { FILINGS_EXPORT_CONCURRENCY: 'many' } }));
    expect(e.message).toBe(
      'config.worker.concurrency: must be a number (got "many") in environment FILINGS_EXPORT_CONCURRENCY',
    );
  });

  it('unknown setting lists the known ones', async () => {
    const p = await file('unknown.yaml', 'budget:\n  shares: 0.5\n');
    const e = configError(() => loadConfig({ configPath: p, env: {} }));
    expect(e.message).toMatch(
      /^config\.budget\.shares: unknown setting \(known here: requests_per_minute, share,/,
    );
    expect(e.message).toContain(`in ${p}`);
  });

  it('bad enum member in a list, from a flag', () => {
    const e = configError(() =>
      loadConfig({
        env: {},
        flags: [{ path: 'datasets', value: ['facts_full', 'factz'], flag: '--datasets' }],
      }),
    );
    expect(e.message).toMatch(/^config\.datasets\[1\]: must be one of facts_full, evidence/);
    expect(e.message).toContain('(got "factz") in flag --datasets');
  });

  it('several problems are all reported, one per line', async () => {
    const p = await file('many.yaml', 'redis:\n  url: http://x\nschedule:\n  tz: Mars/Olympus\n');
    const e = configError(() => loadConfig({ configPath: p, env: {} }));
    const lines = e.message.split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toBe(
      `config.redis.url: must be a redis://, rediss://, redis+cluster://host:port[,host:port…] or redis+sentinel://host:port[,host:port…]/MASTER_NAME URL (got "http://x") in ${p}`,
    );
    expect(lines[1]).toMatch(/^config\.schedule\.tz: must be an IANA time zone/);
  });

  it('missing config file', () => {
    const e = configError(() => loadConfig({ env: { FILINGS_EXPORT_CONFIG: join(dir, 'nope.yaml') } }));
    expect(e.message).toBe(
      `config file ${join(dir, 'nope.yaml')} (from FILINGS_EXPORT_CONFIG): file not found`,
    );
  });

  it('YAML syntax error', async () => {
    const p = await file('broken.yaml', 'budget: [\n');
    expect(configError(() => loadConfig({ configPath: p, env: {} })).message).toMatch(
      new RegExp(`^config file ${p}: not valid YAML`),
    );
  });
});

describe('the API key', () => {
  const key = 'ffx_live_b2b_0123456789abcdef';

  it('is refused in a config file, without echoing it', async () => {
    const p = await file('key.yaml', `api:\n  key: ${key}\n`);
    const e = configError(() => loadConfig({ configPath: p, env: {} }));
    expect(e.message).toBe(
      `config.api.key: an API key may not be written in a config file (${p}); set FILINGS_API_KEY or FILINGS_API_KEY_FILE (a secret file) instead`,
    );
    expect(e.message).not.toContain(key);
  });

  it('is refused anywhere in a config file when it looks like one', async () => {
    const p = await file('hidden.yaml', `universe:\n  tickers: [${key}]\n`);
    const e = configError(() => loadConfig({ configPath: p, env: {} }));
    expect(e.message).toMatch(/^config\.universe\.tickers\[0\]: looks like an API key/);
    expect(e.message).not.toContain(key);
  });

  it('comes from FILINGS_API_KEY or a secret file, and is redacted everywhere', async () => {
    const secretFile = await file('secret', `${key}\n`);
    const fromFile = loadConfig({ env: { FILINGS_API_KEY_FILE: secretFile } });
    expect(requireApiKey(fromFile).reveal()).toBe(key);
    const fromEnv = loadConfig({ env: { FILINGS_API_KEY: key } });
    expect(fromEnv.api.key?.reveal()).toBe(key);

    expect(JSON.stringify(fromEnv)).not.toContain(key);
    expect(inspect(fromEnv, { depth: 10 })).not.toContain(key);
    expect(`${String(fromEnv.api.key)}`).toBe('[redacted]');
    let logged = '';
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb) {
        logged += chunk.toString();
        cb();
      },
    });
    pino({ redact: { paths: REDACT_PATHS, censor: '[redacted]' } }, sink).info({ config: fromEnv }, 'config');
    expect(logged).toContain('"key":"[redacted]"');
    expect(logged).not.toContain(key);
  });

  it('an unreadable key file is named', () => {
    const e = configError(() => loadConfig({ env: { FILINGS_API_KEY_FILE: join(dir, 'missing-secret') } }));
    expect(e.message).toMatch(/^FILINGS_API_KEY_FILE: cannot read the API key file .*missing-secret/);
  });

  it('requireApiKey says how to give one', () => {
    const c = loadConfig({ env: {} });
    expect(() => requireApiKey(c)).toThrow(/no API key: set FILINGS_API_KEY/);
  });
});
