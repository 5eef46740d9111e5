/**
 * `filings-export emulator` (serve the API locally) and `filings-export emulator keygen`.
 * Thin: parse options, start, print the demo key and `listening on …`, close on SIGINT/SIGTERM.
 * Start-up failures (keys file, data dir, options) exit with code 2 and a message naming the cause.
 */
import { InvalidArgumentError, type Command } from 'commander';
import { fraction, integer, parseLimitText } from '../option-parsers.js';

interface EmulatorCliOptions {
  port: number;
  host: string;
  data?: string;
  keys?: string;
  rateLimit?: LimitArg;
  dailyQuota?: LimitArg;
  monthlyQuota?: LimitArg;
  faultRate?: number;
  faultSeed?: number;
  latencyMs?: number;
  synthetic?: number;
  syntheticLargeRows?: number;
  publicUrl?: string;
  warm: boolean;
  asOf?: string;
  asOfCompany?: Record<string, string | null>;
}

/**
 * commander stores a parser's `null` as `''` (commander/lib/command.js, "Fill-in appropriate missing
 * values"), so "no limit" travels as this word and becomes null only in `limitOption`.
 */
const NO_LIMIT = 'none';
type LimitArg = number | typeof NO_LIMIT;

/** A whole number >= 0, or `none`/`unlimited` for no limit. */
function limit(name: string) {
  return (text: string): LimitArg => {
    const v = parseLimitText(text);
    if (v === undefined) {
      throw new InvalidArgumentError(
        `${name} must be a whole number from 0 to ${Number.MAX_SAFE_INTEGER}, or "none" for no limit (got "${text}")`,
      );
    }
    return v ?? NO_LIMIT;
  };
}

/** Option value → startEmulator override: absent = keys file, `none` = null (no limit). */
function limitOption(v: LimitArg | undefined): number | null | undefined {
  return v === NO_LIMIT ? null : v;
}

/**
 * `--as-of-company TICKER=DATE` (repeatable) → `{ TICKER: DATE }`; `TICKER=all` is null (everything
 * bundled). The company and date are checked by the emulator, which names a bad one.
 */
function companyDate(
  text: string,
  prev: Record<string, string | null> | undefined,
): Record<string, string | null> {
  const m = /^([^=\s]+)=(\S+)$/.exec(text);
  if (m === null)
    throw new InvalidArgumentError(`--as-of-company must be TICKER=YYYY-MM-DD or CIK=all (got "${text}")`);
  return { ...prev, [m[1] as string]: m[2] === 'all' ? null : (m[2] as string) };
}

/** Registers `emulator` and `emulator keygen` on the program; the emulator itself loads lazily. */
export function register(program: Command): void {
  const emulator = program
    .command('emulator')
    .description('Serve the Filing Facts API locally on real SEC data (auth, limits, quotas, faults)')
    .option('--port <n>', 'TCP port (0 = any free port)', integer('--port', 0, 65535), 8787)
    .option('--host <addr>', 'listening address', '127.0.0.1')
    .option('--data <dir>', 'SEC data directory (layout of data/sec) (default: bundled data)')
    .option('--keys <file>', 'keys file (sha256 hashes only) (default: bundled demo keys)')
    .option('--rate-limit <perMin>', 'per-minute limit of every key, or "none"', limit('--rate-limit'))
    .option('--daily-quota <n>', 'daily quota of every account and key, or "none"', limit('--daily-quota'))
    .option(
      '--monthly-quota <n>',
      'monthly quota of every account and key, or "none"',
      limit('--monthly-quota'),
    )
    .option('--fault-rate <p>', 'share of data requests answered 503 (0 to 1)', fraction('--fault-rate'))
    .option('--fault-seed <n>', 'seed of the fault-rate draw', integer('--fault-seed', 0))
    .option('--latency-ms <n>', 'delay before every API response', integer('--latency-ms', 0, 600_000))
    .option('--synthetic <n>', 'add N synthetic issuers for load tests', integer('--synthetic', 0, 100_000))
    .option(
      '--synthetic-large-rows <n>',
      'add SYNBIG, a synthetic issuer whose facts/full has N rows',
      integer('--synthetic-large-rows', 0, 50_000_000),
    )
    .option('--public-url <url>', 'base URL written into URL fields (default: the listening address)')
    .option('--no-warm', 'do not build the companies in the background after start')
    .option(
      '--as-of <date>',
      'answer as if it were this day (YYYY-MM-DD): later filings do not exist; POST /_emulator/clock changes it',
    )
    .option(
      '--as-of-company <ticker=date>',
      'this company answers as of its own date (repeatable; "all" for everything bundled), e.g. AAPL=2025-11-05',
      companyDate,
    )
    .action(async (o: EmulatorCliOptions) => runEmulator(o));

  emulator
    .command('keygen')
    .description('Print a new random API key, its sha256 and a keys-file entry')
    .option('--prefix <prefix>', 'key prefix, ending in _b2b_', 'ffx_live_b2b_')
    .action(async (o: { prefix: string }) => runKeygen(o.prefix));
}

async function runEmulator(o: EmulatorCliOptions): Promise<void> {
  const [
    { startEmulator, BUNDLED_KEYS_FILE, DEMO_API_KEY, sha256Hex, loadKeysFile },
    { createLogger },
    { coerceError },
  ] = await Promise.all([
    import('../../emulator/index.js'),
    import('../../log.js'),
    import('../../errors.js'),
  ]);
  const [{ envLogLevel }, { closeOnSignal }] = await Promise.all([
    import('../../config/load.js'),
    import('../command-support.js'),
  ]);
  let logger;
  try {
    logger = createLogger({ level: envLogLevel(process.env, 'warn') });
  } catch (err: unknown) {
    process.stderr.write(`filings-export emulator: ${coerceError(err).message}\n`);
    process.exitCode = 2;
    return;
  }
  const keysPath = o.keys ?? BUNDLED_KEYS_FILE;
  let running;
  let shownKey = '<API_KEY>';
  try {
    const keys = await loadKeysFile(keysPath);
    running = await startEmulator({
      port: o.port,
      host: o.host,
      portSetting: '--port',
      dataDir: o.data,
      keys,
      rateLimitPerMinute: limitOption(o.rateLimit),
      dailyQuota: limitOption(o.dailyQuota),
      monthlyQuota: limitOption(o.monthlyQuota),
      faultRate: o.faultRate,
      faultSeed: o.faultSeed,
      latencyMs: o.latencyMs,
      synthetic: o.synthetic,
      syntheticLargeRows: o.syntheticLargeRows,
      publicUrl: o.publicUrl,
      warmUp: o.warm,
      ...(o.asOf !== undefined ? { asOf: o.asOf } : {}),
      ...(o.asOfCompany !== undefined ? { asOfCompanies: o.asOfCompany } : {}),
      logger,
    });
    const demoHash = sha256Hex(DEMO_API_KEY);
    if (keys.accounts.some((a) => a.keys.some((k) => k.sha256 === demoHash))) {
      process.stdout.write(`demo API key (local emulator only): ${DEMO_API_KEY}\n`);
      shownKey = DEMO_API_KEY;
    }
  } catch (err: unknown) {
    process.stderr.write(`filings-export emulator: ${coerceError(err).message}\n`);
    process.exitCode = 2;
    return;
  }
  process.stdout.write(`listening on ${running.url}\n`);
  process.stdout.write(
    `try: curl -s -X POST ${running.url}/api/b2b/facts/latest -H 'X-API-Key: ${shownKey}' ` +
      `-H 'Content-Type: application/json' -d '{"ticker":"AAPL","limit":3}'\n`,
  );
  const emulator = running;
  await closeOnSignal('filings-export emulator', () => emulator.close());
}

async function runKeygen(prefix: string): Promise<void> {
  const [{ generateKey }, { coerceError }] = await Promise.all([
    import('../../emulator/index.js'),
    import('../../errors.js'),
  ]);
  let generated;
  try {
    generated = generateKey(prefix);
  } catch (err: unknown) {
    process.stderr.write(`filings-export emulator keygen: ${coerceError(err).message}\n`);
    process.exitCode = 2;
    return;
  }
  process.stdout.write(
    `key:    ${generated.key}\n` +
      `sha256: ${generated.sha256}\n` +
      `The key is shown once; the keys file keeps only its hash. Entry for accounts[].keys:\n` +
      `${JSON.stringify(generated.entry, null, 2)}\n`,
  );
}
