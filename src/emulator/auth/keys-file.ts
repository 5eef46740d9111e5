/**
 * The emulator's keys file: accounts and their API keys, holding only sha256 hashes of the
 * plaintext keys (section 5: the plaintext is shown once at creation, only a hash is kept).
 * Format (fixed, other tools write it):
 * `{"accounts":[{"id","status":"active|disabled","quota":{"daily","monthly"},"keys":[{"id","sha256",
 * "status":"active|revoked|disabled","expires_at","entitlements","rate_limit_per_minute","quota",
 * "rate_limit_headers"?}]}]}`. `rate_limit_headers` is optional (absent = true), so older files stay valid.
 */
import { readFile } from 'node:fs/promises';
import { EmulatorConfigError, toError } from '../errors.js';

export type AccountStatus = 'active' | 'disabled';
export type KeyStatus = 'active' | 'revoked' | 'disabled';

export interface QuotaSpec {
  /** Requests per UTC day; null = no daily quota. */
  daily: number | null;
  /** Requests per UTC month; null = no monthly quota. */
  monthly: number | null;
}

export interface KeyEntry {
  /** Stable key id (never the plaintext): used in stats and logs. Unique in the file. */
  id: string;
  /** Lowercase hex sha256 of the plaintext key. */
  sha256: string;
  status: KeyStatus;
  /** ISO-8601 instant from which the key is expired, or null. */
  expires_at: string | null;
  /** For example `cross_company_search`. */
  entitlements: string[];
  /** Per-minute limit of this key; null = no per-minute limit. */
  rate_limit_per_minute: number | null;
  /**
   * false: the key's responses carry no X-RateLimit-* headers although its per-minute limit still
   * applies (a 429 with Retry-After and the interface's body): a limit the client must discover.
   * @defaultValue true
   */
  rate_limit_headers?: boolean;
  quota: QuotaSpec;
}

export interface AccountEntry {
  id: string;
  status: AccountStatus;
  quota: QuotaSpec;
  keys: KeyEntry[];
}

export interface KeysFile {
  accounts: AccountEntry[];
}

/** Reads and validates a keys file; every problem names the file and the JSON path. */
export async function loadKeysFile(path: string): Promise<KeysFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err: unknown) {
    const e = toError(err) as NodeJS.ErrnoException;
    const why = e.code === 'ENOENT' ? 'file not found' : e.message;
    throw new EmulatorConfigError(`keys file ${path}: ${why}`, { cause: e });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err: unknown) {
    throw new EmulatorConfigError(`keys file ${path}: invalid JSON: ${toError(err).message}`, { cause: err });
  }
  return parseKeysFile(json, path);
}

/**
 * Validates a keys-file object (already parsed). `source` names it in messages, e.g. a path.
 * Throws EmulatorConfigError `keys file <source>: accounts[0].keys[1].sha256: expected 64 hex characters`.
 */
export function parseKeysFile(json: unknown, source = '(inline)'): KeysFile {
  const fail = (path: string, what: string): never => {
    throw new EmulatorConfigError(`keys file ${source}: ${path}: ${what}`);
  };
  if (!isObject(json)) return fail('(root)', 'expected an object with an "accounts" array');
  if (!Array.isArray(json.accounts)) return fail('accounts', 'expected an array');
  const accountIds = new Set<string>();
  const keyIds = new Set<string>();
  const hashes = new Set<string>();
  const accounts = json.accounts.map((raw: unknown, i): AccountEntry => {
    const at = `accounts[${i}]`;
    if (!isObject(raw)) return fail(at, 'expected an object');
    const id = nonEmptyString(raw.id, `${at}.id`, fail);
    if (accountIds.has(id)) fail(`${at}.id`, `duplicate account id "${id}"`);
    accountIds.add(id);
    const status = oneOf(raw.status, ['active', 'disabled'] as const, `${at}.status`, fail);
    const quota = quotaSpec(raw.quota, `${at}.quota`, fail);
    if (!Array.isArray(raw.keys)) return fail(`${at}.keys`, 'expected an array');
    const keys = raw.keys.map((k: unknown, j): KeyEntry => {
      const kat = `${at}.keys[${j}]`;
      if (!isObject(k)) return fail(kat, 'expected an object');
      const kid = nonEmptyString(k.id, `${kat}.id`, fail);
      if (keyIds.has(kid)) fail(`${kat}.id`, `duplicate key id "${kid}"`);
      keyIds.add(kid);
      if (typeof k.sha256 !== 'string' || !/^[0-9a-fA-F]{64}$/.test(k.sha256)) {
        fail(`${kat}.sha256`, 'expected 64 hex characters');
      }
      const sha256 = (k.sha256 as string).toLowerCase();
      if (hashes.has(sha256)) fail(`${kat}.sha256`, 'duplicate key hash');
      hashes.add(sha256);
      const kstatus = oneOf(k.status, ['active', 'revoked', 'disabled'] as const, `${kat}.status`, fail);
      let expires: string | null = null;
      if (k.expires_at !== null && k.expires_at !== undefined) {
        if (typeof k.expires_at !== 'string' || Number.isNaN(Date.parse(k.expires_at))) {
          fail(`${kat}.expires_at`, 'expected an ISO-8601 date-time or null');
        }
        expires = k.expires_at as string;
      }
      const ents = k.entitlements ?? [];
      if (!Array.isArray(ents)) return fail(`${kat}.entitlements`, 'expected an array of strings');
      ents.forEach((e: unknown, n) => {
        if (typeof e !== 'string') fail(`${kat}.entitlements[${n}]`, 'expected a string');
      });
      return {
        id: kid,
        sha256,
        status: kstatus,
        expires_at: expires,
        entitlements: ents as string[],
        rate_limit_per_minute: optionalCount(k.rate_limit_per_minute, `${kat}.rate_limit_per_minute`, fail),
        ...(k.rate_limit_headers === undefined
          ? {}
          : { rate_limit_headers: optionalBoolean(k.rate_limit_headers, `${kat}.rate_limit_headers`, fail) }),
        quota: quotaSpec(k.quota, `${kat}.quota`, fail),
      };
    });
    return { id, status, quota, keys };
  });
  return { accounts };
}

type Fail = (path: string, what: string) => never;

function optionalBoolean(v: unknown, path: string, fail: Fail): boolean {
  if (typeof v !== 'boolean') return fail(path, 'expected true or false');
  return v;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function nonEmptyString(v: unknown, path: string, fail: Fail): string {
  if (typeof v !== 'string' || v.trim() === '') return fail(path, 'expected a non-empty string');
  return v;
}

function oneOf<T extends string>(v: unknown, allowed: readonly T[], path: string, fail: Fail): T {
  if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v)) {
    return fail(path, `expected one of ${allowed.map((a) => `"${a}"`).join(', ')}`);
  }
  return v as T;
}

/** A non-negative integer or null; absent counts as null. */
function optionalCount(v: unknown, path: string, fail: Fail): number | null {
  if (v === null || v === undefined) return null;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) {
    return fail(path, 'expected a non-negative integer or null');
  }
  return v;
}

/** `{daily, monthly}`; an absent quota object means no quotas. */
function quotaSpec(v: unknown, path: string, fail: Fail): QuotaSpec {
  if (v === null || v === undefined) return { daily: null, monthly: null };
  if (!isObject(v)) return fail(path, 'expected an object {"daily": N|null, "monthly": N|null}');
  return {
    daily: optionalCount(v.daily, `${path}.daily`, fail),
    monthly: optionalCount(v.monthly, `${path}.monthly`, fail),
  };
}
