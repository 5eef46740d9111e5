/**
 * The demo is for people (issue 36): with its output piped, as CI and `| tee` run it, every line it
 * writes is a sentence, never pino's JSON, and its counts agree ("1 company"). The real CLI, with
 * its private redis-server and in-process emulator, exports one company.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, type CliResult } from '../helpers/processes.js';

let dir: string;
let r: CliResult;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'demo-output-'));
  // LOG_LEVEL info: the progress lines a person follows are written through the logger.
  r = await runCli(['demo', '--tickers', 'AAPL', '--out', join(dir, 'out')], {
    env: { LOG_LEVEL: 'info' },
    unset: ['REDIS_URL', 'FILINGS_API_URL', 'FILINGS_API_KEY', 'FILINGS_API_KEY_FILE', 'CI'],
    timeoutMs: 300_000,
  });
}, 330_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The lines that parse as a JSON value: none may be written for a person. */
function jsonLines(text: string): string[] {
  return text.split('\n').filter((line) => {
    try {
      JSON.parse(line);
      return line.trim() !== '';
    } catch {
      return false;
    }
  });
}

describe('`demo` with its output piped', () => {
  it('publishes, and writes no JSON line on stdout or stderr', () => {
    expect(r.code, r.stderr).toBe(0);
    expect(jsonLines(r.stdout)).toEqual([]);
    expect(jsonLines(r.stderr)).toEqual([]);
  });

  it('writes its progress as readable log lines', () => {
    expect(r.stderr).toMatch(/INFO: snapshot demo-\S+: 3\/3 parts \(facts_full 1\/1/);
  });

  it('counts one company in the singular', () => {
    expect(r.stderr).toContain('demo: exporting 1 company x ');
    expect(r.stderr).toContain('plan: 3 requests (1 company x 3 datasets');
    expect(r.stdout).toMatch(/facts_full +[\d,]+ rows from 1 company\n/);
    expect(r.stdout).not.toMatch(/\b1 companies\b/);
  });

  it('prints the DuckDB statement that reads the Iceberg table, which the publisher committed', async () => {
    const table = join(dir, 'out', 'facts_full');
    expect(r.stdout).toContain(`INSTALL iceberg; LOAD iceberg; SELECT * FROM iceberg_scan('${table}');\n`);
    expect((await readFile(join(table, 'metadata', 'version-hint.text'), 'utf8')).trim()).toBe('1');
  });
});
