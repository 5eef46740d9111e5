/**
 * Authentication of the emulator over real HTTP: every 401/403 string of section 7, the keys
 * file's validation (JSON paths in messages), keygen, and the absence of rate-limit headers on
 * 401/403 bodies (section 4).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../src/emulator/auth/authenticator.js';
import { generateKey } from '../../src/emulator/auth/keygen.js';
import { loadKeysFile, parseKeysFile } from '../../src/emulator/auth/keys-file.js';
import { DEMO_API_KEY } from '../../src/emulator/demo-key.js';
import { BUNDLED_KEYS_FILE, startEmulator } from '../../src/emulator/index.js';
import { EmulatorConfigError } from '../../src/emulator/errors.js';
import { validateResponse } from '../helpers/contract.js';
import {
  bundledTestStore,
  headerRecord,
  makeTestKeys,
  postOperation,
  startTestEmulator,
  type TestEmulator,
} from '../helpers/emulator.js';

let emu: TestEmulator;
let dir: string;

beforeAll(async () => {
  emu = await startTestEmulator();
  dir = await mkdtemp(join(tmpdir(), 'ffx-auth-test-'));
});
afterAll(async () => {
  await emu.close();
  await rm(dir, { recursive: true, force: true });
});

const body = { ticker: 'AAPL', limit: 1 };

describe('401 and 403 with the exact strings of section 7', () => {
  const cases: [string, () => string | undefined, number, string][] = [
    ['no key', () => undefined, 401, 'API key required'],
    ['empty key', () => '', 401, 'API key required'],
    ['unknown key', () => 'ffx_live_b2b_notakey', 401, 'Invalid API key'],
    ['account disabled', () => emu.keys.accountDisabled, 403, 'Account is disabled'],
    ['revoked key', () => emu.keys.revoked, 403, 'API key has been revoked'],
    ['disabled key', () => emu.keys.disabled, 403, 'API key is disabled'],
    ['expired key', () => emu.keys.expired, 403, 'API key has expired'],
  ];
  for (const [name, key, status, error] of cases) {
    it(`${name} → ${status} ${error}`, async () => {
      const res = await postOperation(emu.url, 'facts/latest', body, key());
      expect(res.status).toBe(status);
      expect(res.body).toEqual({ error });
      // Section 4: 401/403 bodies carry no rate-limit headers.
      expect(res.headers.get('x-ratelimit-limit')).toBeNull();
      expect(validateResponse('facts/latest', res.status, res.body, headerRecord(res.headers))).toEqual([]);
    });
  }

  it('the active key passes and the answer carries the rate-limit headers', async () => {
    const res = await postOperation(emu.url, 'facts/latest', body, emu.apiKey);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-ratelimit-limit')).toBe('1000');
  });

  it('auth comes before body validation: a bad body with no key is 401', async () => {
    const res = await postOperation(emu.url, 'facts/latest', '{not json', undefined);
    expect(res.status).toBe(401);
  });

  it('a key expires when the injected clock reaches expires_at', async () => {
    const { keys, file } = makeTestKeys();
    const account = file.accounts[0];
    const key = account?.keys[0];
    if (!account || !key) throw new Error('test keys changed');
    key.expires_at = '2030-06-01T00:00:00Z';
    let now = Date.parse('2030-05-31T23:59:59Z');
    const e = await startEmulator({
      port: 0,
      keys: file,
      clock: { now: () => now },
      store: await bundledTestStore(),
    });
    try {
      expect((await postOperation(e.url, 'issuer/reference', { ticker: 'AAPL' }, keys.active)).status).toBe(
        200,
      );
      now = Date.parse('2030-06-01T00:00:00Z');
      const res = await postOperation(e.url, 'issuer/reference', { ticker: 'AAPL' }, keys.active);
      expect(res).toMatchObject({ status: 403, body: { error: 'API key has expired' } });
    } finally {
      await e.close();
    }
  });
});

describe('keys file', () => {
  const valid = () => makeTestKeys().file;

  it('accepts the test file and the bundled one, which holds the demo key hash only', async () => {
    expect(parseKeysFile(valid()).accounts).toHaveLength(3);
    const bundled = await loadKeysFile(BUNDLED_KEYS_FILE);
    const hashes = bundled.accounts.flatMap((a) => a.keys.map((k) => k.sha256));
    expect(hashes).toContain(sha256Hex(DEMO_API_KEY));
    expect(JSON.stringify(bundled)).not.toContain(DEMO_API_KEY);
  });

  const broken: [string, (f: ReturnType<typeof valid>) => unknown, string][] = [
    [
      'bad sha256',
      (f) => ((f.accounts[0]!.keys[1]!.sha256 = 'abc'), f),
      'accounts[0].keys[1].sha256: expected 64 hex characters',
    ],
    [
      'bad key status',
      (f) => (((f.accounts[1]!.keys[0] as { status: string }).status = 'paused'), f),
      'accounts[1].keys[0].status: expected one of "active", "revoked", "disabled"',
    ],
    [
      'bad account status',
      (f) => (((f.accounts[2] as { status: string }).status = 'x'), f),
      'accounts[2].status: expected one of "active", "disabled"',
    ],
    [
      'bad expiry',
      (f) => ((f.accounts[0]!.keys[0]!.expires_at = 'soon'), f),
      'accounts[0].keys[0].expires_at: expected an ISO-8601 date-time or null',
    ],
    [
      'negative quota',
      (f) => ((f.accounts[2]!.quota.daily = -1), f),
      'accounts[2].quota.daily: expected a non-negative integer or null',
    ],
    [
      'fractional rate',
      (f) => ((f.accounts[0]!.keys[2]!.rate_limit_per_minute = 1.5), f),
      'accounts[0].keys[2].rate_limit_per_minute: expected a non-negative integer or null',
    ],
    [
      'rate_limit_headers not a boolean',
      (f) => (((f.accounts[0]!.keys[1] as { rate_limit_headers?: unknown }).rate_limit_headers = 'no'), f),
      'accounts[0].keys[1].rate_limit_headers: expected true or false',
    ],
    [
      'duplicate hash',
      (f) => ((f.accounts[1]!.keys[0]!.sha256 = f.accounts[0]!.keys[0]!.sha256), f),
      'accounts[1].keys[0].sha256: duplicate key hash',
    ],
    [
      'keys not an array',
      (f) => (((f.accounts[0] as { keys: unknown }).keys = {}), f),
      'accounts[0].keys: expected an array',
    ],
    ['no accounts', () => ({ keys: [] }), 'accounts: expected an array'],
    ['not an object', () => [], '(root): expected an object'],
  ];
  for (const [name, mutate, message] of broken) {
    it(`names the JSON path: ${name}`, () => {
      expect(() => parseKeysFile(mutate(valid()), 'keys.json')).toThrow(`keys file keys.json: ${message}`);
    });
  }

  it('a missing file, invalid JSON and a bad shape stop the start with the file named', async () => {
    const missing = join(dir, 'missing.json');
    await expect(startEmulator({ port: 0, keys: missing })).rejects.toThrow(
      `keys file ${missing}: file not found`,
    );
    const bad = join(dir, 'bad.json');
    await writeFile(bad, '{"accounts": [');
    await expect(startEmulator({ port: 0, keys: bad })).rejects.toThrow(
      new RegExp(`keys file ${bad}: invalid JSON`),
    );
    const shape = join(dir, 'shape.json');
    const f = valid();
    f.accounts[0]!.keys[1]!.sha256 = 'zz';
    await writeFile(shape, JSON.stringify(f));
    const err = await startEmulator({ port: 0, keys: shape }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EmulatorConfigError);
    expect((err as Error).message).toBe(
      `keys file ${shape}: accounts[0].keys[1].sha256: expected 64 hex characters`,
    );
  });
});

describe('keygen', () => {
  it('makes a prefixed random key whose sha256 authenticates once pasted into a keys file', async () => {
    const a = generateKey();
    const b = generateKey('ffx_test_b2b_');
    expect(a.key).toMatch(/^ffx_live_b2b_[0-9a-f]{40}$/);
    expect(b.key).toMatch(/^ffx_test_b2b_[0-9a-f]{40}$/);
    expect(a.key).not.toBe(generateKey().key);
    expect(a.sha256).toBe(sha256Hex(a.key));
    const e = await startEmulator({
      port: 0,
      store: await bundledTestStore(),
      keys: {
        accounts: [{ id: 'acct', status: 'active', quota: { daily: null, monthly: null }, keys: [a.entry] }],
      },
    });
    try {
      const res = await postOperation(e.url, 'issuer/reference', { ticker: 'AAPL' }, a.key);
      expect(res.status).toBe(200);
      // No per-minute limit in the entry: no rate-limit headers to report.
      expect(res.headers.get('x-ratelimit-limit')).toBeNull();
    } finally {
      await e.close();
    }
  });

  it('refuses a prefix that does not end in _b2b_', () => {
    expect(() => generateKey('ffx_live_')).toThrow(/ending in "_b2b_"/);
  });
});
