/**
 * An API that never answered: `run --local` against a closed port says at once, naming the URL
 * and calling the refusal refused, that no request was ever answered and how to stop, instead of
 * holding up to retry.outage_max_ms in silence; one SIGTERM then records the snapshot stopped
 * (it used to stay RUNNING behind a "next probe" time in the past). Real CLI, real Redis.
 */
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/infra/redis-server.js';
import { startPipelineHarness, type PipelineHarness } from '../helpers/pipeline.js';
import { CLI_BIN, ended } from '../helpers/processes.js';

/** Polls `ok` every 100 ms until it holds; throws after `ms`. */
async function until(ok: () => boolean, ms: number, what: string): Promise<void> {
  for (let waited = 0; !ok(); waited += 100) {
    if (waited > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('an API that never answered', () => {
  let h: PipelineHarness;
  beforeAll(async () => {
    h = await startPipelineHarness();
  });
  afterAll(async () => {
    await h?.close();
  });

  it('run --local says so at once with the URL and how to stop; SIGTERM records it stopped', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const args = ['run', '--local', '--tickers', 'AAPL,MSFT,NVDA', '--datasets', 'series_catalog'];
    const env = { ...h.env, FILINGS_API_URL: url };
    const child = spawn(process.execPath, [CLI_BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    const exit = ended(child);
    await until(() => stderr.includes('has not answered any request'), 120_000, `the warning: ${stderr}`);
    const id = /snapshot (adhoc-\S+): enqueued/.exec(stderr)?.[1] ?? '';
    const told = stderr.split('\n').find((l) => l.includes('has not answered any request')) ?? '';
    expect(told).toContain(`the API at ${url} has not answered any request of snapshot ${id} (`);
    expect(told).toContain(`the connection to ${url} was refused (ECONNREFUSED)`);
    expect(told).toContain('If that URL is wrong, stop with Ctrl-C (or one SIGTERM), fix FILINGS_API_URL');
    expect(told).toContain('the queue waits up to 15 min (retry.outage_max_ms)');
    expect(stderr.split('\n').filter((l) => l.includes('has not answered'))).toHaveLength(1);

    child.kill('SIGTERM');
    expect(await exit, stderr).toBe(130);
    expect(stderr).toContain(
      `snapshot ${id} stopped: interrupted by SIGTERM: the API at ${url} never answered (`,
    );
    const rec = await h.ctx.store.view(id);
    expect(rec?.state).toBe('stopped');
    expect(rec?.message).toMatch(/never answered .*ECONNREFUSED.*; run again with --retry once it answers$/);
  });
});
