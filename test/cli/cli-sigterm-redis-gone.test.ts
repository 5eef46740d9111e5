/**
 * One SIGTERM ends `run --local` within its bound whatever Redis does: with the redis-server
 * frozen (SIGSTOP) or killed while parts are in flight, closing waits on Redis for ever, and the
 * process used to run on until a second signal. Now it exits with code 130 and one line naming
 * what closing was still waiting for, and so what it could not record (real CLI, a real
 * redis-server of its own, the emulator over HTTP). The bound is configured
 * (worker.shutdown_timeout_ms plus the margin); no duration is asserted.
 */
import { spawn } from 'node:child_process';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPrivateRedis } from '../../src/infra/redis-server.js';
import { startPipelineHarness, type PipelineHarness } from '../helpers/pipeline.js';
import { CLI_BIN, ended } from '../helpers/processes.js';

/** Polls `ok` every 100 ms until it holds; throws after `ms`. */
async function until(ok: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  for (let waited = 0; !(await ok()); waited += 100) {
    if (waited > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('one SIGTERM ends run --local when Redis is gone', () => {
  let h: PipelineHarness;
  let configFile: string;
  beforeAll(async () => {
    // Slow answers keep parts in flight when Redis goes away.
    h = await startPipelineHarness({ emulator: { latencyMs: 3000 } });
    configFile = join(h.outDir, 'short-shutdown.yaml');
    await writeFile(configFile, 'worker:\n  shutdown_timeout_ms: 500\n');
  });
  afterAll(async () => {
    await rm(configFile, { force: true });
    await h?.close();
  });

  for (const fault of ['SIGSTOP', 'SIGKILL'] as const) {
    it(`Redis ${fault === 'SIGSTOP' ? 'frozen' : 'killed'}: exit 130 with one line saying what was left`, async () => {
      const redis = await startPrivateRedis();
      try {
        const args = ['run', '--local', '--tickers', 'AAPL,MSFT,NVDA,WMT', '--datasets', 'facts_full'];
        const env = { ...h.env, REDIS_URL: redis.url, FILINGS_EXPORT_CONFIG: configFile };
        const child = spawn(process.execPath, [CLI_BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
        let stderr = '';
        child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
        const exit = ended(child);
        await until(() => stderr.includes('enqueued 4 parts'), 60_000, `the parts to be enqueued: ${stderr}`);
        await until(async () => (await h.stats()).total.requests > 0, 60_000, 'a request in flight');
        process.kill(redis.pid ?? 0, fault);
        child.kill('SIGTERM');
        expect(await exit, stderr).toBe(130);
        const last = stderr.trim().split('\n').at(-1) ?? '';
        expect(last).toMatch(
          new RegExp(
            `^filings-export: SIGTERM: closing did not end within 10500 ms, still (waiting for Redis at ${redis.url} to answer: snapshot adhoc-\\S+'s record may not say it stopped|closing the workers and Redis at ${redis.url}: parts they held go back to the queue when their locks expire \\(worker.lock_duration_ms\\)); exiting without it$`,
          ),
        );
      } finally {
        await redis.close();
      }
      // Enqueueing and the first request may each take up to a minute on a loaded machine.
    }, 180_000);
  }
});
