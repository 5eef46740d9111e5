/**
 * The Filing Facts API emulator, in process: `startEmulator(opts)` loads the keys file and the SEC
 * data, then serves the API (src/emulator/server/) until `close()`. The CLI
 * (`filings-export emulator`) is a thin wrapper; tests and the demo call this directly.
 */
import { setMaxListeners } from 'node:events';
import type { Server } from 'node:http';
import { EmulatorConfigError, toError } from './errors.js';
import type { Logger } from './runtime.js';
import { silentLogger } from './runtime.js';
import { systemClock, timerDelay, type EmulatorClock, type Delay } from './runtime.js';
import { Authenticator } from './auth/authenticator.js';
import { loadKeysFile, parseKeysFile, type KeysFile } from './auth/keys-file.js';
import { checkAsOf } from './data/index.js';
import { defaultDataDir, loadStore, type DataStore, type Restatement } from './data/index.js';
import { listenOn, type ListenAt } from '../listen.js';
import { packagePath } from '../package-root.js';
import { FaultPlan, seededRandom } from './faults/fault-plan.js';
import { Limiter } from './limits/key-limiter.js';
import { checkLimitOverrides } from './limits/overrides.js';
import { B2B_ROUTES, RAW_ROUTES } from './server/routes/index.js';
import type { ServerDeps } from './server/routes/route-context.js';
import { RowsTextCache } from './server/rows-cache.js';
import { asOfClock } from './as-of-clock.js';
import { createEmulatorServer } from './server/server.js';
import { Stats } from './server/stats.js';
import type { EmulatorStore } from './store.js';

export type { KeysFile } from './auth/keys-file.js';
export { loadKeysFile, parseKeysFile } from './auth/keys-file.js';
export { sha256Hex } from './auth/authenticator.js';
export { generateKey } from './auth/keygen.js';
export { loadStore, type DataStore, type Restatement } from './data/index.js';
export { DEMO_API_KEY } from './demo-key.js';
export { EmulatorConfigError, EmulatorDataError, EmulatorError, type EmulatorErrorCode } from './errors.js';
export type { EmulatorClock, Delay, Logger } from './runtime.js';

/** The bundled SEC data (gzip copy). */
export const BUNDLED_DATA_DIR = defaultDataDir();
/** The bundled keys file holding the demo key's hash. */
export const BUNDLED_KEYS_FILE = packagePath('config', 'emulator-keys.json');
export const DEFAULT_PORT = 8787;

export interface EmulatorOptions {
  /** TCP port; 0 picks a free one. @defaultValue 8787 */
  port?: number;
  /** Listening address. @defaultValue `127.0.0.1` */
  host?: string;
  /** Where a person chooses the port, named when it is taken (the CLI's `--port`). @defaultValue none */
  portSetting?: string;
  /** Directory in the layout of data/sec (companyfacts/, submissions/, filings/, reference/). @defaultValue bundled data/sec */
  dataDir?: string;
  /** A keys-file object or a path to one. @defaultValue bundled config/emulator-keys.json */
  keys?: KeysFile | string;
  /**
   * Per-minute limit of every key (overrides the file): a whole number >= 0, or null = no limit (no
   * X-RateLimit-* headers, never a rate 429). Anything else is a EmulatorConfigError. @defaultValue from the keys file
   */
  rateLimitPerMinute?: number | null;
  /** Daily quota of every account and key (overrides the file); null = none. @defaultValue from the keys file */
  dailyQuota?: number | null;
  /** Monthly quota of every account and key (overrides the file); null = none. @defaultValue from the keys file */
  monthlyQuota?: number | null;
  /** Share (0 to 1) of data requests answered 503 `Facts backend unavailable`. @defaultValue 0 */
  faultRate?: number;
  /** Seed of the fault-rate draw, for reproducible runs. @defaultValue random */
  faultSeed?: number;
  /** Random source of the fault-rate draw (tests); wins over faultSeed. @defaultValue Math.random */
  random?: () => number;
  /** Delay in ms before every `/api/b2b/*` response. @defaultValue 0 */
  latencyMs?: number;
  /** How latency and slow-body pauses wait (tests record the waits). @defaultValue real timers */
  delay?: Delay;
  /** Number of synthetic issuers cloned from the real ones (load tests). @defaultValue 0 */
  synthetic?: number;
  /** When > 0, adds the synthetic issuer SYNBIG whose facts/full has exactly this many rows. @defaultValue 0 */
  syntheticLargeRows?: number;
  /** Base URL written into URL fields. @defaultValue `http://<host>:<port>` (127.0.0.1 for a wildcard host) */
  publicUrl?: string;
  /** An already loaded store (reuse across emulators); dataDir and synthetic are then ignored. */
  store?: EmulatorStore;
  /**
   * Build every real company's rows in the background once listening, so first requests do not pay
   * the SEC parsing (the CLI turns it on). @defaultValue false
   */
  warmUp?: boolean;
  /** Time source of windows, quotas and key expiry. @defaultValue system clock */
  clock?: EmulatorClock;
  /**
   * Answer as if it were this day (`YYYY-MM-DD`): filings filed later do not exist. Changed at run
   * time with `POST /_emulator/clock`. @defaultValue null (everything bundled)
   */
  asOf?: string | null;
  /**
   * Companies answering as of their own date instead of `asOf`: ticker or CIK → `YYYY-MM-DD`, or null
   * for everything bundled (e.g. `{ AAPL: '2025-11-05' }` plays a night where only Apple filed; its
   * synthetic clones keep `asOf`). Changed at run time with `POST /_emulator/clock`. @defaultValue none
   */
  asOfCompanies?: Record<string, string | null>;
  /**
   * Facts restated by a later filing: each one a bundled company's fact given a new value by an
   * amendment filed on a day of the as-of clock (docs/emulator.md, "Restatements"). Applies to the
   * store the emulator loads (not to `store`). @defaultValue none
   */
  restatements?: readonly Restatement[];
  logger?: Logger;
}

export interface RunningEmulator {
  /** Base URL, e.g. `http://127.0.0.1:8787`. */
  url: string;
  port: number;
  /** Stops accepting, cuts open connections, resolves when the server is closed. */
  close(): Promise<void>;
}

export async function startEmulator(opts: EmulatorOptions = {}): Promise<RunningEmulator> {
  const clock = opts.clock ?? systemClock;
  const logger = opts.logger ?? silentLogger();
  const host = opts.host ?? '127.0.0.1';
  const initialAsOf = checkOptions(opts);
  const keysFile =
    typeof opts.keys === 'object'
      ? parseKeysFile(opts.keys)
      : await loadKeysFile(opts.keys ?? BUNDLED_KEYS_FILE);
  const { store, owned } = await openStore(opts, clock, logger);

  let publicUrl = opts.publicUrl?.replace(/\/+$/, '') ?? '';
  const shutdown = new AbortController();
  // Every in-flight request listens on it: no listener-leak warning at high concurrency.
  setMaxListeners(0, shutdown.signal);
  let server: Server;
  try {
    server = buildServer(opts, {
      store,
      initialAsOf,
      keysFile,
      clock,
      logger,
      publicUrl: () => publicUrl,
      shutdown: shutdown.signal,
    });
  } catch (err: unknown) {
    // asOfCompanies names companies, so it is checked against the loaded store: close what we loaded.
    await owned?.close();
    throw err;
  }
  const at = {
    port: opts.port ?? DEFAULT_PORT,
    host,
    ...(opts.portSetting ? { setting: opts.portSetting } : {}),
  };
  const port = await listen(server, at, owned);
  const url = `http://${shownHost(host)}:${port}`;
  if (publicUrl === '') publicUrl = url;
  logger.info({ url, companies: store.companies().length }, 'emulator listening');
  if (opts.warmUp) void warmUp(store, shutdown.signal, logger);

  let closing: Promise<void> | undefined;
  return {
    url,
    port,
    close() {
      closing ??= new Promise<void>((resolve) => {
        shutdown.abort();
        server.close(() => resolve());
        server.closeAllConnections();
      }).then(() => owned?.close());
      return closing;
    },
  };
}

/**
 * Checks the options that need neither the keys nor the data, so a bad one stops the start at
 * once, naming the option; returns the initial as-of date.
 */
function checkOptions(opts: EmulatorOptions): string | null {
  checkLimitOverrides(opts);
  checkNumber('faultRate', opts.faultRate, 0, 1);
  checkNumber('latencyMs', opts.latencyMs, 0, 600_000);
  return opts.asOf === undefined || opts.asOf === null ? null : checkAsOf(opts.asOf, 'asOf');
}

/** The injected store, or one loaded from the data dir; a store we load is ours to close. */
async function openStore(
  opts: EmulatorOptions,
  clock: EmulatorClock,
  logger: Logger,
): Promise<{ store: EmulatorStore; owned: DataStore | undefined }> {
  if (opts.store) return { store: opts.store, owned: undefined };
  const owned = await loadStore({
    dataDir: opts.dataDir ?? BUNDLED_DATA_DIR,
    synthetic: opts.synthetic ?? 0,
    syntheticLargeRows: opts.syntheticLargeRows ?? 0,
    ...(opts.restatements !== undefined ? { restatements: opts.restatements } : {}),
    clock,
    logger,
  });
  return { store: owned, owned };
}

/** What the HTTP server is built from, beyond the options. */
interface ServerParts {
  store: EmulatorStore;
  initialAsOf: string | null;
  keysFile: KeysFile;
  clock: EmulatorClock;
  logger: Logger;
  publicUrl: () => string;
  shutdown: AbortSignal;
}

function buildServer(opts: EmulatorOptions, parts: ServerParts): Server {
  const { clock, logger } = parts;
  const asOf = asOfClock(parts.store, parts.initialAsOf, opts.asOfCompanies);
  const deps: ServerDeps = {
    // Read per request: a change of the as-of date applies to the next request.
    get store() {
      return asOf.view();
    },
    clock,
    logger,
    publicUrl: parts.publicUrl,
    dataDir: opts.dataDir ?? BUNDLED_DATA_DIR,
  };
  const random = opts.random ?? (opts.faultSeed !== undefined ? seededRandom(opts.faultSeed) : Math.random);
  return createEmulatorServer({
    deps,
    authenticator: new Authenticator(parts.keysFile, clock),
    limiter: new Limiter(clock, {
      rateLimitPerMinute: opts.rateLimitPerMinute,
      dailyQuota: opts.dailyQuota,
      monthlyQuota: opts.monthlyQuota,
    }),
    faults: new FaultPlan(opts.faultRate ?? 0, random),
    asOf,
    stats: new Stats(() => clock.now()),
    latencyMs: opts.latencyMs ?? 0,
    delay: opts.delay ?? timerDelay,
    rowsCache: new RowsTextCache(),
    operations: B2B_ROUTES,
    rawRoutes: RAW_ROUTES,
    shutdown: parts.shutdown,
  });
}

/** Listens and returns the port; a port that cannot be had closes the store we loaded and says why. */
async function listen(server: Server, at: ListenAt, owned: DataStore | undefined): Promise<number> {
  try {
    return (await listenOn(server, at, (message, cause) => new EmulatorConfigError(message, { cause }))).port;
  } catch (err: unknown) {
    await owned?.close();
    throw err;
  }
}

/** The host of the URL clients use: loopback for a wildcard address, brackets for IPv6. */
function shownHost(host: string): string {
  return host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
}

/**
 * Builds facts/full of the companies in the store's warm-up order (largest first), then their
 * evidence, one company at a time with a turn of the event loop between builds, so requests that
 * arrive meanwhile wait for at most one build.
 */
async function warmUp(store: EmulatorStore, signal: AbortSignal, logger: Logger): Promise<void> {
  const started = performance.now();
  const companies = store.warmUpOrder?.() ?? store.companies().filter((c) => !c.synthetic);
  for (const dataset of ['factsFull', 'evidence'] as const) {
    for (const company of companies) {
      await new Promise((resolve) => setImmediate(resolve));
      if (signal.aborted) return;
      try {
        await store[dataset](company.cik);
      } catch (err: unknown) {
        logger.warn(
          { err: toError(err), cik: company.cik, dataset },
          'emulator: warm-up failed for a company',
        );
      }
    }
  }
  logger.info({ ms: Math.round(performance.now() - started) }, 'emulator: warm-up done');
}

function checkNumber(name: string, v: number | undefined, min: number, max: number): void {
  if (v !== undefined && !(Number.isFinite(v) && v >= min && v <= max)) {
    throw new EmulatorConfigError(`${name} must be a number from ${min} to ${max} (got ${v})`);
  }
}
