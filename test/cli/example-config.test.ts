/**
 * The shipped config/example.yaml is a config to copy (issue 36): a worker started on it, as its
 * header says to run it, logs no warning about its own settings (it warned that its
 * worker.concurrency was too low for its own rate limit).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEMO_API_KEY } from '../../src/emulator/demo-key.js';
import { CLI_BIN, spawnWorker, terminateAll } from '../helpers/processes.js';

const EXAMPLE = fileURLToPath(new URL('../../config/example.yaml', import.meta.url));
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'example-config-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('config/example.yaml', () => {
  it('starts a worker that logs no warning about the example itself', async () => {
    const w = spawnWorker(CLI_BIN, ['worker', '--config', EXAMPLE], {
      env: {
        ...process.env,
        // Only where things are: this machine's Redis and a scratch output root.
        REDIS_URL: inject('redisUrl'),
        FILINGS_EXPORT_PREFIX: `example-config-${process.pid}`,
        FILINGS_EXPORT_OUT: join(dir, 'out'),
        FILINGS_API_KEY: DEMO_API_KEY,
        LOG_LEVEL: 'info',
      },
    });
    try {
      await w.ready;
    } finally {
      await terminateAll([w.child]);
    }
    const lines = w
      .log()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { level: number; msg: string });
    expect(lines.map((l) => l.msg)).toContain('worker ready');
    expect(lines.filter((l) => l.level >= 40 || /too low|may be|warn/i.test(l.msg))).toEqual([]);
  }, 120_000);
});
