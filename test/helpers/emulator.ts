/**
 * Starts the real emulator (real data, real HTTP) on a free port with a test keys file holding
 * one key per auth state. Plaintext keys are random per emulator; the file holds only sha256.
 *
 * Accounts:
 * - `acct_main` (active, no quotas): `active` (cross_company_search, 1000/min), `noCrossCompany`
 *   (no entitlement, 1000/min), `revoked`, `disabled`, `expired` (expired 2000-01-01).
 * - `acct_disabled` (disabled): `accountDisabled` (the key itself is active).
 * - `acct_quota` (account daily 5, monthly 8): `quotaLimited` (key daily 3), `quotaSibling`
 *   (no key quota). Rate limit 1000/min.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sha256Hex } from '../../src/emulator/auth/authenticator.js';
import type { KeyEntry, KeysFile } from '../../src/emulator/auth/keys-file.js';
import { loadStore } from '../../src/emulator/data/index.js';
import { BUNDLED_DATA_DIR, startEmulator, type EmulatorOptions } from '../../src/emulator/index.js';
import type { EmulatorStore } from '../../src/emulator/store.js';

export type TestKeyName =
  | 'active'
  | 'noCrossCompany'
  | 'revoked'
  | 'disabled'
  | 'expired'
  | 'accountDisabled'
  | 'quotaLimited'
  | 'quotaSibling';

export interface TestEmulator {
  url: string;
  port: number;
  /** The `active` key: cross-company entitlement, 1000/min, no quotas. */
  apiKey: string;
  keys: Record<TestKeyName, string>;
  /** Key ids as in the keys file (stats are keyed by them). */
  keyIds: Record<TestKeyName, string>;
  /** The keys file written for this emulator (sha256 only). */
  keysFile: string;
  keysData: KeysFile;
  /** Stops serving (connections refused) without forgetting the keys: an API outage. */
  stop(): Promise<void>;
  /** Serves again on the same port, keys and data, after stop(). */
  restart(): Promise<void>;
  close(): Promise<void>;
}

/** Quotas of the `acct_quota` account and its `quotaLimited` key. */
export const TEST_QUOTAS = { accountDaily: 5, accountMonthly: 8, keyDaily: 3 } as const;
export const TEST_RATE_LIMIT = 1000;

function entry(id: string, key: string, over: Partial<KeyEntry> = {}): KeyEntry {
  return {
    id,
    sha256: sha256Hex(key),
    status: 'active',
    expires_at: null,
    entitlements: [],
    rate_limit_per_minute: TEST_RATE_LIMIT,
    quota: { daily: null, monthly: null },
    ...over,
  };
}

export function makeTestKeys(): {
  keys: Record<TestKeyName, string>;
  keyIds: Record<TestKeyName, string>;
  file: KeysFile;
} {
  const names: TestKeyName[] = [
    'active',
    'noCrossCompany',
    'revoked',
    'disabled',
    'expired',
    'accountDisabled',
    'quotaLimited',
    'quotaSibling',
  ];
  const keys = Object.fromEntries(
    names.map((n) => [n, `ffx_live_b2b_test_${n}_${randomBytes(12).toString('hex')}`]),
  ) as Record<TestKeyName, string>;
  const keyIds = Object.fromEntries(names.map((n) => [n, `key_${n}`])) as Record<TestKeyName, string>;
  const file: KeysFile = {
    accounts: [
      {
        id: 'acct_main',
        status: 'active',
        quota: { daily: null, monthly: null },
        keys: [
          entry(keyIds.active, keys.active, { entitlements: ['cross_company_search'] }),
          entry(keyIds.noCrossCompany, keys.noCrossCompany),
          entry(keyIds.revoked, keys.revoked, { status: 'revoked' }),
          entry(keyIds.disabled, keys.disabled, { status: 'disabled' }),
          entry(keyIds.expired, keys.expired, { expires_at: '2000-01-01T00:00:00Z' }),
        ],
      },
      {
        id: 'acct_disabled',
        status: 'disabled',
        quota: { daily: null, monthly: null },
        keys: [entry(keyIds.accountDisabled, keys.accountDisabled)],
      },
      {
        id: 'acct_quota',
        status: 'active',
        quota: { daily: TEST_QUOTAS.accountDaily, monthly: TEST_QUOTAS.accountMonthly },
        keys: [
          entry(keyIds.quotaLimited, keys.quotaLimited, {
            quota: { daily: TEST_QUOTAS.keyDaily, monthly: null },
          }),
          entry(keyIds.quotaSibling, keys.quotaSibling),
        ],
      },
    ],
  };
  return { keys, keyIds, file };
}

let bundledStore: Promise<EmulatorStore> | undefined;

/**
 * The bundled data loaded once per test process (vitest runs each file in its own process), so a
 * file that starts several emulators parses the SEC files once. Read-only, never closed.
 */
export function bundledTestStore(): Promise<EmulatorStore> {
  bundledStore ??= loadStore({ dataDir: BUNDLED_DATA_DIR });
  return bundledStore;
}

/**
 * Starts an emulator on port 0 with the test keys; `opts` override anything (keys included).
 * Without `store`, `dataDir` or `synthetic` options it serves the shared bundled store.
 */
export async function startTestEmulator(opts: Partial<EmulatorOptions> = {}): Promise<TestEmulator> {
  const { keys, keyIds, file } = makeTestKeys();
  const custom =
    opts.store !== undefined ||
    opts.dataDir !== undefined ||
    opts.synthetic !== undefined ||
    opts.syntheticLargeRows !== undefined ||
    opts.restatements !== undefined;
  const store = custom ? opts.store : await bundledTestStore();
  const dir = await mkdtemp(join(tmpdir(), 'ffx-emulator-keys-'));
  const keysFile = join(dir, 'keys.json');
  await writeFile(keysFile, JSON.stringify(file, null, 2));
  let running;
  try {
    running = await startEmulator({ port: 0, keys: keysFile, store, ...opts });
  } catch (err: unknown) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  let emulator: typeof running | null = running;
  const port = running.port;
  return {
    url: running.url,
    port,
    apiKey: keys.active,
    keys,
    keyIds,
    keysFile,
    keysData: file,
    async stop() {
      await emulator?.close();
      emulator = null;
    },
    async restart() {
      if (emulator) return;
      emulator = await startEmulator({ keys: keysFile, store, ...opts, port });
    },
    async close() {
      await emulator?.close();
      emulator = null;
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export interface JsonResponse<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: T;
}

/** POSTs a JSON body (or a raw string) to `/api/b2b/<operation>` with an optional key. */
export async function postOperation<T = Record<string, unknown>>(
  baseUrl: string,
  operation: string,
  body: unknown,
  apiKey?: string,
  headers: Record<string, string> = {},
): Promise<JsonResponse<T>> {
  const res = await fetch(`${baseUrl}/api/b2b/${operation}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(apiKey !== undefined ? { 'x-api-key': apiKey } : {}),
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: (text === '' ? {} : JSON.parse(text)) as T };
}

/** Header values as a plain object (for contract validation). */
export function headerRecord(h: Headers): Record<string, string> {
  return Object.fromEntries(h.entries());
}

/** Moves the emulator's as-of clock (`POST /_emulator/clock`) to `asOf`; throws unless it answers 200. */
export async function setEmulatorClock(url: string, asOf: string | null): Promise<void> {
  const res = await fetch(`${url}/_emulator/clock`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ as_of: asOf }),
  });
  if (res.status !== 200) throw new Error(`POST ${url}/_emulator/clock: ${res.status} ${await res.text()}`);
}
