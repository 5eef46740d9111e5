/**
 * A port already taken, as a person meets it (issue 36): `dashboard --port`, `emulator --port`,
 * `worker --metrics-port` and `run --local --metrics-port` on a port another process holds each
 * end with one line naming the port, saying it is in use and which setting chooses another, and a
 * non-zero exit: never a TypeError about a null address, never a process left running.
 */
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEMO_API_KEY } from '../../src/emulator/demo-key.js';
import { listenFailure } from '../../src/listen.js';
import { runCli } from '../helpers/processes.js';

let holder: Server;
let port: number;

beforeAll(async () => {
  holder = createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  const address = holder.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  port = address.port;
});
afterAll(async () => {
  await new Promise((resolve) => holder.close(resolve));
});

const env = (): NodeJS.ProcessEnv => ({
  REDIS_URL: inject('redisUrl'),
  FILINGS_EXPORT_PREFIX: `busy-port-${process.pid}`,
  FILINGS_API_KEY: DEMO_API_KEY,
  // Nothing is fetched: the commands end before any request.
  FILINGS_API_URL: 'http://127.0.0.1:9',
});

describe('a server asked for a port another process holds', () => {
  const cases: { args: (p: string) => string[]; setting: string }[] = [
    { args: (p) => ['dashboard', '--port', String(p)], setting: '--port, or dashboard.port' },
    { args: (p) => ['emulator', '--port', String(p), '--no-warm'], setting: '(--port)' },
    { args: (p) => ['worker', '--metrics-port', String(p)], setting: '--metrics-port' },
    {
      args: (p) => ['run', '--local', '--tickers', 'AAPL', '--metrics-port', String(p)],
      setting: '--metrics-port',
    },
  ];
  for (const c of cases) {
    it(`\`${c.args('<busy>').join(' ')}\` names the port, says it is in use, and exits`, async () => {
      const r = await runCli(c.args(String(port)), { env: env() });
      expect(r.code, r.stderr).toBe(2);
      const lines = r.stderr.trim().split('\n');
      expect(lines, r.stderr).toHaveLength(1);
      expect(lines[0]).toContain(`port ${port} on 127.0.0.1 is already in use`);
      expect(lines[0]).toContain(c.setting);
      expect(r.stderr).not.toMatch(/Cannot destructure|address\(\)/);
    });
  }
});

describe('listenFailure', () => {
  const at = { port: 80, host: '127.0.0.1' };
  const err = (code: string): NodeJS.ErrnoException => Object.assign(new Error(`listen ${code}`), { code });

  it('says what each refusal means and what to do', () => {
    expect(listenFailure(err('EACCES'), at)).toBe(
      'port 80 on 127.0.0.1 needs privileges this process lacks (ports below 1024 do): choose another port; 0 picks a free one',
    );
    expect(listenFailure(err('EADDRNOTAVAIL'), { ...at, host: '10.9.9.9' })).toMatch(
      /^cannot listen on 10\.9\.9\.9: it is not an address of this machine/,
    );
    expect(listenFailure(err('EMFILE'), at)).toBe('cannot listen on 127.0.0.1:80: EMFILE');
  });
});
