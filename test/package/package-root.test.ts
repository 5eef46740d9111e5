/**
 * Files read at run time resolve from the package root alike from the sources and from the compiled
 * build/ (one folder deeper): config/defaults.yaml, the emulator's data/sec and keys file, and the
 * package.json whose version the manifest's writer names (build/ once read build/package.json,
 * which does not exist, and wrote "unknown").
 */
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULTS_FILE } from '../../src/config/load.js';
import { BUNDLED_DATA_DIR, BUNDLED_KEYS_FILE } from '../../src/emulator/index.js';
import { PACKAGE_ROOT } from '../../src/package-root.js';

const repo = fileURLToPath(new URL('..', import.meta.url)).replace(/\/$/, '');

describe('the package root', () => {
  it('is the checkout from the sources, and every bundled file is found under it', () => {
    expect(PACKAGE_ROOT).toBe(repo);
    expect(DEFAULTS_FILE).toBe(join(repo, 'config', 'defaults.yaml'));
    expect(BUNDLED_DATA_DIR).toBe(join(repo, 'data', 'sec'));
    expect(BUNDLED_KEYS_FILE).toBe(join(repo, 'config', 'emulator-keys.json'));
    for (const f of [DEFAULTS_FILE, BUNDLED_DATA_DIR, BUNDLED_KEYS_FILE]) expect(existsSync(f), f).toBe(true);
  });

  it('is the checkout from the compiled build/ too (no package.json in build/)', async () => {
    const url = (p: string): string => pathToFileURL(join(repo, 'build', 'src', p)).href;
    const built = (await import(url('package-root.js'))) as { PACKAGE_ROOT: string };
    const emulator = (await import(url('emulator/index.js'))) as { BUNDLED_DATA_DIR: string };
    expect(existsSync(join(repo, 'build', 'package.json'))).toBe(false);
    expect(built.PACKAGE_ROOT).toBe(repo);
    expect(emulator.BUNDLED_DATA_DIR).toBe(join(repo, 'data', 'sec'));
  });
});
