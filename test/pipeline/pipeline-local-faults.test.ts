/**
 * Local faults fail fast and clearly, and a failed part never pins a connection: an output root
 * that is not a directory is refused before anything is enqueued (one line naming the path); a
 * part whose writer cannot stage fails at its first attempt, not retryable, naming the path; and
 * the streamed response it abandoned is released, so the client closes at once (real workers, real
 * Redis, the emulator over HTTP, and the CLI as a child process).
 */
import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startPipelineHarness, type PipelineHarness } from '../helpers/pipeline.js';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'filings-export.mjs');
const open: PipelineHarness[] = [];
afterEach(async () => {
  for (const h of open.splice(0)) await h.close();
});

function runCli(
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stderr: string; ms: number }> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr, ms: Date.now() - started }));
  });
}

describe('local faults', () => {
  it('an output root that is a file: one line naming it, before anything is enqueued', async () => {
    const h = await startPipelineHarness();
    open.push(h);
    const notADir = join(h.outDir, 'a-file');
    await writeFile(notADir, 'not a directory');
    const r = await runCli(
      ['run', '--tickers', 'AAPL', '--datasets', 'series_catalog', '--out', notADir, '--local', '--wait'],
      h.env,
    );
    expect(r.code).toBe(1);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/output root .*a-file cannot be used: (ENOTDIR|EEXIST)/);
    expect(lines[0]).toContain('[OUTPUT_FAILED]');
    expect(await h.ctx.store.list()).toEqual([]);
  });

  it('Redis unreachable at start: one line naming the URL (password redacted), no stack trace', async () => {
    const env = { ...process.env, REDIS_URL: 'redis://:s3cret@127.0.0.1:1/0', LOG_LEVEL: 'warn' };
    for (const cmd of [['status'], ['run', '--tickers', 'AAPL', '--datasets', 'series_catalog']]) {
      const r = await runCli(cmd, {
        ...env,
        FILINGS_API_KEY: 'ffx_test_b2b_x',
        FILINGS_API_URL: 'http://127.0.0.1:1',
      });
      expect(r.code).toBe(1);
      expect(r.stderr.trim().split('\n')).toEqual([
        'filings-export: cannot connect to Redis at redis://:redacted@127.0.0.1:1/0: connect ECONNREFUSED 127.0.0.1:1 (set REDIS_URL or redis.url) [REDIS_UNAVAILABLE]',
      ]);
    }
  });

  it('a part that cannot stage fails at its first attempt, names the path, and releases its response', async () => {
    const h = await startPipelineHarness({ config: { 'retry.attempts': 5 } });
    open.push(h);
    await h.startWorkers();
    // Enqueued directly (as a worker on another machine would meet it): the preflight cannot help.
    const notADir = join(h.outDir, 'blocked');
    await writeFile(notADir, 'not a directory');
    const spec = {
      ...h.spec(['AAPL', 'MSFT', 'NVDA'], ['series_catalog'], 'unwritable-root'),
      outDir: notADir,
    };
    const rec = await h.runToEnd(spec);
    expect(rec.state).toBe('failed');
    const parts = await h.ctx.store.parts(spec.id);
    expect(parts).toHaveLength(3);
    for (const p of parts) {
      expect(p.status).toBe('failed');
      expect(p.message).toMatch(/^OUTPUT_FAILED: cannot create the staging folder .*blocked.*ENOTDIR/);
      expect(p.message).toContain('(attempt 1 of 5)');
    }
    expect((await h.stats()).total.requests).toBe(3);
    // Every abandoned body was released: nothing is left for closing the client's pool to wait on.
    expect(h.client.requestsInFlight()).toBe(0);
    await h.client.close();
  });
});
