/**
 * What `bin/filings-export.mjs` runs: the compiled build/ only while it is newer than every file it
 * was compiled from (an edit must never run stale code), the TypeScript through tsx otherwise; and
 * the real CLI under both entries, serving the bundled data (config/ and data/ resolve from the
 * package root, src/package-root.ts); and the installed package, which has no sources, runs build/.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_API_KEY } from '../../src/emulator/demo-key.js';
import { postOperation } from '../helpers/emulator.js';
// @ts-expect-error: a plain ES module of bin/ (no types); its exports are checked below.
import { chooseEntry, INPUTS, staleReason } from '../../bin/entry-point.mjs';

const choose = chooseEntry as (root: string, env?: Record<string, string>) => 'build' | 'source';
const stale = staleReason as (root: string) => string | undefined;

let dir: string;
const at = (s: number): Date => new Date(Date.UTC(2026, 0, 1) + s * 1000);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fx-entry-'));
  await mkdir(join(dir, 'src', 'cli'), { recursive: true });
  await mkdir(join(dir, 'jobs'), { recursive: true });
  await mkdir(join(dir, 'build'), { recursive: true });
  await mkdir(join(dir, 'scripts'), { recursive: true });
  for (const f of [
    'src/cli/main.ts',
    'jobs/index.ts',
    'tsconfig.json',
    'tsconfig.build.json',
    'scripts/build.mjs',
    'scripts/bundle-cli.mjs',
  ]) {
    await writeFile(join(dir, f), '');
    await utimes(join(dir, f), at(0), at(0));
  }
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('choosing the entry', () => {
  it('runs the sources while there is no complete build', () => {
    expect(stale(dir)).toMatch(/build\/ is missing/);
    expect(choose(dir, {})).toBe('source');
    expect(() => choose(dir, { FILINGS_EXPORT_ENTRY: 'build' })).toThrow(/missing or incomplete/);
  });

  it('runs build/ once it is newer than every source, and the sources again after an edit', async () => {
    await writeFile(join(dir, 'build', '.stamp'), '');
    await utimes(join(dir, 'build', '.stamp'), at(10), at(10));
    expect(stale(dir)).toBeUndefined();
    expect(choose(dir, {})).toBe('build');
    expect(choose(dir, { FILINGS_EXPORT_ENTRY: 'source' })).toBe('source');

    await utimes(join(dir, 'src', 'cli', 'main.ts'), at(20), at(20));
    expect(stale(dir)).toBe(`${join('src', 'cli', 'main.ts')} changed after the last build (npm run build)`);
    expect(choose(dir, {})).toBe('source');
    expect(() => choose(dir, { FILINGS_EXPORT_ENTRY: 'build' })).toThrow(/src\/cli\/main\.ts changed/);

    // A changed compiler setting makes the build stale too.
    await utimes(join(dir, 'src', 'cli', 'main.ts'), at(0), at(0));
    await utimes(join(dir, 'tsconfig.build.json'), at(20), at(20));
    expect(choose(dir, {})).toBe('source');

    // So does a changed build script: the bundle of build/cli/ is made by it.
    await utimes(join(dir, 'tsconfig.build.json'), at(0), at(0));
    await utimes(join(dir, 'scripts', 'bundle-cli.mjs'), at(20), at(20));
    expect(stale(dir)).toMatch(/^scripts\/bundle-cli\.mjs changed/);
    await utimes(join(dir, 'scripts', 'bundle-cli.mjs'), at(0), at(0));
    expect(stale(dir)).toBeUndefined();
  });

  it('names every input the build is made from, and each exists in the checkout', () => {
    const root = join(import.meta.dirname, '..', '..');
    expect(INPUTS).toEqual(
      expect.arrayContaining(['src', 'jobs', 'scripts/build.mjs', 'scripts/bundle-cli.mjs']),
    );
    for (const input of INPUTS as string[]) expect(existsSync(join(root, input)), input).toBe(true);
  });

  it('runs build/ where there are no sources to compare with (the installed package, the image)', async () => {
    const installed = join(dir, 'installed');
    await mkdir(join(installed, 'build', 'src'), { recursive: true });
    expect(choose(installed, {})).toBe('build');
    expect(choose(installed, { FILINGS_EXPORT_ENTRY: 'build' })).toBe('build');
    expect(() => choose(installed, { FILINGS_EXPORT_ENTRY: 'source' })).toThrow(
      'FILINGS_EXPORT_ENTRY=source: this installation has no TypeScript sources (src/)',
    );
  });

  it('names a bad FILINGS_EXPORT_ENTRY', () => {
    expect(() => choose(dir, { FILINGS_EXPORT_ENTRY: 'compiled' })).toThrow(
      'FILINGS_EXPORT_ENTRY must be auto, source or build (got "compiled")',
    );
  });
});

describe('the real CLI under each entry', () => {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  const bin = join(root, 'bin', 'filings-export.mjs');

  /** Starts the emulator on a free port, reads one issuer with the demo key, stops it. */
  async function serveOnce(entry: string): Promise<{ code: number | null; body: unknown; stderr: string }> {
    const child = spawn(process.execPath, [bin, 'emulator', '--port', '0'], {
      cwd: root,
      env: { ...process.env, FILINGS_EXPORT_ENTRY: entry, LOG_LEVEL: 'warn' },
    });
    let out = '';
    let stderr = '';
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (b: Buffer) => {
        out += b.toString();
        const m = /listening on (http:\/\/\S+)/.exec(out);
        if (m?.[1]) resolve(m[1]);
      });
      child.once('exit', (code) => reject(new Error(`exited ${code}: ${stderr}`)));
    });
    const res = await postOperation(url, 'issuer/reference', { ticker: 'AAPL' }, DEMO_API_KEY);
    const body: unknown = res.status === 200 ? res.body : res.status;
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    return { code: await exited, body, stderr };
  }

  it.each(['build', 'source'])('FILINGS_EXPORT_ENTRY=%s serves the bundled data', async (entry) => {
    const r = await serveOnce(entry);
    expect(r.code, r.stderr).toBe(0);
    expect(r.body).toMatchObject({ ticker: 'AAPL' });
  });

  it('refuses a bad FILINGS_EXPORT_ENTRY with exit code 2 and says why', async () => {
    const child = spawn(process.execPath, [bin, '--help'], {
      env: { ...process.env, FILINGS_EXPORT_ENTRY: 'fast' },
    });
    let stderr = '';
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(2);
    expect(stderr).toContain('FILINGS_EXPORT_ENTRY must be auto, source or build (got "fast")');
  });
});
