/**
 * The `filings-export emulator` CLI as a user runs it: a real child process, stdout read until
 * `listening on`, the printed demo key used against the served API, graceful SIGTERM, exit code 2
 * for a bad keys file or data dir, and `emulator keygen`.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_API_KEY } from '../../src/emulator/demo-key.js';
import { postOperation } from '../helpers/emulator.js';
import { TIGHT_KEY, tightKeysFile } from '../helpers/tight-keys.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const bin = join(root, 'bin', 'filings-export.mjs');
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ffx-cli-test-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

interface Run {
  child: ChildProcessWithoutNullStreams;
  stdout: () => string;
  stderr: () => string;
  exit: Promise<number | null>;
}

function run(args: string[]): Run {
  const child = spawn(process.execPath, [bin, ...args], {
    cwd: root,
    env: { ...process.env, LOG_LEVEL: 'warn' },
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exit = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { child, stdout: () => out, stderr: () => err, exit };
}

/** Resolves with the URL once `listening on` appears; rejects if the process exits first. */
function listening(r: Run): Promise<string> {
  return new Promise((resolve, reject) => {
    const check = (): void => {
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(r.stdout());
      if (m?.[1]) {
        r.child.stdout.off('data', check);
        resolve(m[1]);
      }
    };
    r.child.stdout.on('data', check);
    void r.exit.then((code) => reject(new Error(`exited ${code}: ${r.stderr()}`)));
  });
}

describe('filings-export emulator', () => {
  it('prints the demo key and `listening on`, serves the API, and closes on SIGTERM', async () => {
    const r = run(['emulator', '--port', '0', '--no-warm']);
    try {
      const url = await listening(r);
      expect(r.stdout()).toContain(`demo API key (local emulator only): ${DEMO_API_KEY}`);
      const res = await postOperation(url, 'issuer/reference', { ticker: 'AAPL' }, DEMO_API_KEY);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-ratelimit-limit')).toBe('600');
      r.child.kill('SIGTERM');
      expect(await r.exit).toBe(0);
    } finally {
      r.child.kill('SIGKILL');
    }
  });

  it('applies --rate-limit over the keys file', async () => {
    const r = run(['emulator', '--port', '0', '--no-warm', '--rate-limit', '2']);
    try {
      const url = await listening(r);
      const res = await postOperation(url, 'issuer/reference', { ticker: 'AAPL' }, DEMO_API_KEY);
      expect(res.headers.get('x-ratelimit-limit')).toBe('2');
      r.child.kill('SIGINT');
      expect(await r.exit).toBe(0);
    } finally {
      r.child.kill('SIGKILL');
    }
  });

  it('--rate-limit none --daily-quota none --monthly-quota none lift every limit of the keys file', async () => {
    // A key the file limits to 1 request a minute, a day and a month (account too).
    const key = TIGHT_KEY;
    const keysPath = join(dir, 'tight-keys.json');
    await writeFile(keysPath, JSON.stringify(tightKeysFile()));
    const r = run([
      'emulator',
      '--port',
      '0',
      '--no-warm',
      '--keys',
      keysPath,
      '--rate-limit',
      'none',
      '--daily-quota',
      'none',
      '--monthly-quota',
      'NONE',
    ]);
    try {
      const url = await listening(r);
      for (let i = 0; i < 3; i++) {
        const res = await postOperation(url, 'issuer/reference', { ticker: 'AAPL' }, key);
        expect(res.status).toBe(200);
        expect(res.headers.get('x-ratelimit-limit')).toBeNull();
        expect(res.headers.get('x-ratelimit-remaining')).toBeNull();
      }
      r.child.kill('SIGTERM');
      expect(await r.exit).toBe(0);
    } finally {
      r.child.kill('SIGKILL');
    }
  });

  it('refuses a limit that is not a whole number or none, naming the option', async () => {
    const cases: [string, string][] = [
      ['--rate-limit', '-3'],
      ['--rate-limit', 'abc'],
      ['--daily-quota', '1.5'],
      ['--monthly-quota', ''],
    ];
    const runs = cases.map(([flag, value]) => ({ flag, value, r: run(['emulator', flag, value]) }));
    for (const { flag, value, r } of runs) {
      expect(await r.exit).not.toBe(0);
      expect(r.stderr()).toContain(`${flag} must be a whole number from 0 to`);
      expect(r.stderr()).toContain(`or "none" for no limit (got "${value}")`);
      expect(r.stdout()).not.toContain('listening on');
    }
  });

  it('a bad keys file stops the start with exit code 2 and names the file and JSON path', async () => {
    const bad = join(dir, 'keys.json');
    await writeFile(
      bad,
      JSON.stringify({
        accounts: [{ id: 'a', status: 'active', keys: [{ id: 'k', sha256: 'nope', status: 'active' }] }],
      }),
    );
    const r = run(['emulator', '--port', '0', '--keys', bad]);
    expect(await r.exit).toBe(2);
    expect(r.stderr()).toContain(`keys file ${bad}: accounts[0].keys[0].sha256: expected 64 hex characters`);
    expect(r.stdout()).not.toContain('listening on');

    const missing = run(['emulator', '--port', '0', '--keys', join(dir, 'absent.json')]);
    expect(await missing.exit).toBe(2);
    expect(missing.stderr()).toContain(`keys file ${join(dir, 'absent.json')}: file not found`);
  });

  it('a bad data dir stops the start with exit code 2 naming the directory', async () => {
    const empty = join(dir, 'no-data-here');
    const r = run(['emulator', '--port', '0', '--data', empty]);
    expect(await r.exit).toBe(2);
    expect(r.stderr()).toContain(empty);
  });

  it('--as-of-company gives one company its own date; a bad one stops the start naming it', async () => {
    const r = run([
      'emulator',
      '--port',
      '0',
      '--no-warm',
      '--as-of',
      '2025-10-30',
      '--as-of-company',
      'AAPL=2025-11-05',
      '--as-of-company',
      'MSFT=all',
    ]);
    try {
      const url = await listening(r);
      expect(await (await fetch(`${url}/_emulator/clock`)).json()).toEqual({
        as_of: '2025-10-30',
        companies: { '0000320193': '2025-11-05', '0000789019': null },
      });
      r.child.kill('SIGINT');
      expect(await r.exit).toBe(0);
    } finally {
      r.child.kill('SIGKILL');
    }
    const unknown = run(['emulator', '--port', '0', '--no-warm', '--as-of-company', 'NOPE=2025-11-05']);
    expect(await unknown.exit).toBe(2);
    expect(unknown.stderr()).toContain('asOfCompanies: unknown company "NOPE"');
    const malformed = run(['emulator', '--as-of-company', 'AAPL']);
    expect(await malformed.exit).not.toBe(0);
    expect(malformed.stderr()).toContain('--as-of-company must be TICKER=YYYY-MM-DD');
  });

  it('a bad option value exits non-zero with a message naming the option', async () => {
    const r = run(['emulator', '--fault-rate', '2']);
    expect(await r.exit).not.toBe(0);
    expect(r.stderr()).toContain('--fault-rate must be a number from 0 to 1');
  });
});

describe('filings-export emulator keygen', () => {
  it('prints a new key, its sha256 and a keys-file entry', async () => {
    const r = run(['emulator', 'keygen']);
    expect(await r.exit).toBe(0);
    const key = /^key:\s+(\S+)$/m.exec(r.stdout())?.[1] ?? '';
    const hash = /^sha256:\s+([0-9a-f]{64})$/m.exec(r.stdout())?.[1];
    expect(key).toMatch(/^ffx_live_b2b_[0-9a-f]{40}$/);
    expect(hash).toBe(createHash('sha256').update(key).digest('hex'));
    const entry = JSON.parse(r.stdout().slice(r.stdout().indexOf('{'))) as { sha256: string; status: string };
    expect(entry).toMatchObject({ sha256: hash, status: 'active' });
  });

  it('honours --prefix and refuses one without _b2b_ (exit 2)', async () => {
    const ok = run(['emulator', 'keygen', '--prefix', 'ffx_test_b2b_']);
    expect(await ok.exit).toBe(0);
    expect(ok.stdout()).toMatch(/^key:\s+ffx_test_b2b_[0-9a-f]{40}$/m);
    const bad = run(['emulator', 'keygen', '--prefix', 'ffx_live_']);
    expect(await bad.exit).toBe(2);
    expect(bad.stderr()).toContain('ending in "_b2b_"');
  });
});
