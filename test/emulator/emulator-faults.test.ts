/**
 * Fault injection over real HTTP: the per-request header (503, 500, reset, truncate, slow),
 * scripted rules with operation/ticker filters and `times`, `--fault-rate` with an injected random
 * source, and `--latency-ms`. Delays are asserted as lower bounds only (sleeps guarantee them).
 */
import { request } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { timerDelay, type Delay } from '../../src/emulator/runtime.js';
import { validateResponse } from '../helpers/contract.js';
import { headerRecord, postOperation, startTestEmulator, type TestEmulator } from '../helpers/emulator.js';

let emu: TestEmulator;
/** Every wait the emulator asked for (latency, slow-body pauses), in order; the waits still happen. */
const waits: number[] = [];
const recordingDelay: Delay = async (ms, signal) => {
  waits.push(ms);
  await timerDelay(ms, signal);
};
beforeAll(async () => {
  emu = await startTestEmulator({ delay: recordingDelay });
});
afterAll(() => emu.close());
afterEach(async () => {
  await fetch(`${emu.url}/_emulator/faults`, { method: 'DELETE' });
});

const aapl = { ticker: 'AAPL' };

function fault(kind: string, ms?: number): Record<string, string> {
  return { 'x-emulator-fault': kind, ...(ms !== undefined ? { 'x-emulator-fault-ms': String(ms) } : {}) };
}

/** Raw node:http POST recording status, body chunks and how the body ended. */
function rawPost(
  path: string,
  body: unknown,
  headers: Record<string, string>,
): Promise<{
  status?: number;
  chunks: Buffer[];
  times: number[];
  ended: 'end' | 'error';
  error?: string;
  length?: number;
}> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const times: number[] = [];
    const data = JSON.stringify(body);
    const req = request(
      `${emu.url}${path}`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': emu.apiKey, ...headers },
      },
      (res) => {
        res.on('data', (c: Buffer) => {
          chunks.push(c);
          times.push(Date.now());
        });
        res.on('end', () =>
          resolve({
            status: res.statusCode,
            chunks,
            times,
            ended: 'end',
            length: Number(res.headers['content-length']),
          }),
        );
        res.on('error', (e) =>
          resolve({
            status: res.statusCode,
            chunks,
            times,
            ended: 'error',
            error: e.message,
            length: Number(res.headers['content-length']),
          }),
        );
      },
    );
    req.on('error', (e) =>
      resolve({ chunks, times, ended: 'error', error: (e as NodeJS.ErrnoException).code ?? e.message }),
    );
    req.end(data);
  });
}

describe('X-Emulator-Fault header', () => {
  it('503 answers `Facts backend unavailable` with rate-limit headers', async () => {
    const res = await postOperation(emu.url, 'facts/core', aapl, emu.apiKey, fault('503'));
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ error: 'Facts backend unavailable' });
    expect(res.headers.get('x-ratelimit-limit')).toBe('1000');
    expect(validateResponse('facts/core', 503, res.body, headerRecord(res.headers))).toEqual([]);
  });

  it('500 answers a JSON error', async () => {
    const res = await postOperation(emu.url, 'series/catalog', aapl, emu.apiKey, fault('500'));
    expect(res.status).toBe(500);
    expect(typeof res.body.error).toBe('string');
    expect(validateResponse('series/catalog', 500, res.body, headerRecord(res.headers))).toEqual([]);
  });

  it('reset drops the connection before any status line', async () => {
    const res = await rawPost('/api/b2b/facts/latest', aapl, fault('reset'));
    expect(res.status).toBeUndefined();
    expect(res.ended).toBe('error');
    await expect(postOperation(emu.url, 'facts/latest', aapl, emu.apiKey, fault('reset'))).rejects.toThrow();
  });

  it('truncate sends a Content-Length it never completes', async () => {
    const res = await rawPost('/api/b2b/facts/latest', aapl, fault('truncate'));
    expect(res.status).toBe(200);
    expect(res.ended).toBe('error');
    const got = Buffer.concat(res.chunks).length;
    expect(got).toBeGreaterThan(0);
    expect(got).toBeLessThan(res.length ?? 0);
    // fetch sees it as a failed body read.
    const r = await fetch(`${emu.url}/api/b2b/facts/latest`, {
      method: 'POST',
      headers: { 'x-api-key': emu.apiKey, ...fault('truncate') },
      body: JSON.stringify(aapl),
    });
    expect(r.status).toBe(200);
    await expect(r.text()).rejects.toThrow();
  });

  it('slow dribbles the whole body in pieces with X-Emulator-Fault-Ms between them', async () => {
    const normal = await postOperation(emu.url, 'facts/latest', { ticker: 'AAPL', limit: 20 }, emu.apiKey);
    waits.length = 0;
    const res = await rawPost('/api/b2b/facts/latest', { ticker: 'AAPL', limit: 20 }, fault('slow', 40));
    expect(res.status).toBe(200);
    expect(res.ended).toBe('end');
    expect(res.chunks.length).toBeGreaterThanOrEqual(4);
    // 8 pieces, a 40 ms pause before each but the first (and no latency: the fault names the ms).
    expect(waits).toEqual(Array.from({ length: 7 }, () => 40));
    expect(JSON.parse(Buffer.concat(res.chunks).toString('utf8'))).toEqual(normal.body);
  });

  it('an unknown fault kind is a 400 naming the header', async () => {
    const res = await postOperation(emu.url, 'facts/latest', aapl, emu.apiKey, fault('explode'));
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/X-Emulator-Fault must be one of 503, 500, reset, truncate, slow/);
  });

  it('faults come after auth and validation: no key is still 401, a bad body still 400', async () => {
    expect((await postOperation(emu.url, 'facts/full', aapl, undefined, fault('503'))).status).toBe(401);
    expect((await postOperation(emu.url, 'facts/full', {}, emu.apiKey, fault('503'))).status).toBe(400);
  });
});

describe('scripted rules', () => {
  it('fire `times` times on matching operation and ticker only, then disarm', async () => {
    const arm = await fetch(`${emu.url}/_emulator/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ rules: [{ operation: 'facts/core', ticker: 'aapl', fault: '503', times: 2 }] }),
    });
    expect(arm.status).toBe(200);
    expect(((await arm.json()) as { rules: unknown[] }).rules).toHaveLength(1);
    // Other operation, other company: untouched.
    expect((await postOperation(emu.url, 'facts/latest', aapl, emu.apiKey)).status).toBe(200);
    expect(
      (
        await postOperation(
          emu.url,
          'facts/core',
          { ticker: 'NVDA', metric_id: 'us-gaap#Revenues' },
          emu.apiKey,
        )
      ).status,
    ).toBe(200);
    // The CIK of Apple matches the ticker filter too.
    const one = await postOperation(
      emu.url,
      'facts/core',
      { cik: '0000320193', metric_id: 'us-gaap#Revenues' },
      emu.apiKey,
    );
    expect(one).toMatchObject({ status: 503, body: { error: 'Facts backend unavailable' } });
    expect(
      (
        await postOperation(
          emu.url,
          'facts/core',
          { ticker: 'AAPL', metric_id: 'us-gaap#Revenues' },
          emu.apiKey,
        )
      ).status,
    ).toBe(503);
    expect(
      (
        await postOperation(
          emu.url,
          'facts/core',
          { ticker: 'AAPL', metric_id: 'us-gaap#Revenues' },
          emu.apiKey,
        )
      ).status,
    ).toBe(200);
    const left = (await (await fetch(`${emu.url}/_emulator/faults`)).json()) as { rules: unknown[] };
    expect(left.rules).toEqual([]);
  });

  it('rules of several kinds apply in order; DELETE disarms them', async () => {
    await fetch(`${emu.url}/_emulator/faults`, {
      method: 'POST',
      body: JSON.stringify({
        rules: [{ fault: '500' }, { fault: 'reset', operation: 'issuer/reference', times: 5 }],
      }),
    });
    expect((await postOperation(emu.url, 'issuer/reference', aapl, emu.apiKey)).status).toBe(500);
    await expect(postOperation(emu.url, 'issuer/reference', aapl, emu.apiKey)).rejects.toThrow();
    const del = await fetch(`${emu.url}/_emulator/faults`, { method: 'DELETE' });
    expect(await del.json()).toEqual({ ok: true, rules: [] });
    expect((await postOperation(emu.url, 'issuer/reference', aapl, emu.apiKey)).status).toBe(200);
  });

  it('refuses a malformed rule with a 400 naming the field', async () => {
    const res = await fetch(`${emu.url}/_emulator/faults`, {
      method: 'POST',
      body: JSON.stringify({ rules: [{ fault: '503' }, { fault: 'boom' }] }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toMatch(/^rules\[1\]\.fault: expected one of/);
    const times = await fetch(`${emu.url}/_emulator/faults`, {
      method: 'POST',
      body: JSON.stringify({ rules: [{ fault: '503', times: 0 }] }),
    });
    expect(((await times.json()) as { error: string }).error).toBe(
      'rules[0].times: expected a positive integer',
    );
  });

  it('stats count injected faults per operation', async () => {
    await fetch(`${emu.url}/_emulator/reset`, { method: 'POST' });
    await postOperation(emu.url, 'dims/catalog', aapl, emu.apiKey, fault('503'));
    const stats = (await (await fetch(`${emu.url}/_emulator/stats`)).json()) as {
      by_operation: Record<string, { faults: number; by_status: Record<string, number> }>;
    };
    expect(stats.by_operation['dims/catalog']).toMatchObject({ faults: 1, by_status: { '503': 1 } });
  });
});

describe('--fault-rate and --latency-ms', () => {
  it('503 on the drawn share of data requests; telemetry is spared', async () => {
    const draws = [0.05, 0.95, 0.05, 0.95];
    let i = 0;
    const e = await startTestEmulator({ faultRate: 0.1, random: () => draws[i++ % draws.length] ?? 1 });
    try {
      const statuses: number[] = [];
      for (let n = 0; n < 4; n++)
        statuses.push((await postOperation(e.url, 'issuer/reference', aapl, e.apiKey)).status);
      expect(statuses).toEqual([503, 200, 503, 200]);
      for (let n = 0; n < 4; n++) {
        expect(
          (await postOperation(e.url, 'telemetry/proof-open', { evidence_key: 'x' }, e.apiKey)).status,
        ).toBe(202);
      }
    } finally {
      await e.close();
    }
  });

  it('a seeded fault rate is reproducible', async () => {
    const run = async (): Promise<number[]> => {
      const e = await startTestEmulator({ faultRate: 0.5, faultSeed: 42 });
      try {
        const out: number[] = [];
        for (let n = 0; n < 8; n++)
          out.push((await postOperation(e.url, 'issuer/reference', aapl, e.apiKey)).status);
        return out;
      } finally {
        await e.close();
      }
    };
    const a = await run();
    expect(await run()).toEqual(a);
    expect(a).toContain(503);
    expect(a).toContain(200);
  });

  it('latency delays every API response; X-Emulator-Fault-Ms alone delays one request', async () => {
    waits.length = 0;
    const e = await startTestEmulator({ latencyMs: 150, delay: recordingDelay });
    try {
      expect((await postOperation(e.url, 'issuer/reference', aapl, e.apiKey)).status).toBe(200);
      expect((await postOperation(e.url, 'issuer/reference', aapl, e.apiKey)).status).toBe(200);
      expect(waits).toEqual([150, 150]);
    } finally {
      await e.close();
    }
    waits.length = 0;
    expect(
      (await postOperation(emu.url, 'issuer/reference', aapl, emu.apiKey, { 'x-emulator-fault-ms': '120' }))
        .status,
    ).toBe(200);
    expect((await postOperation(emu.url, 'issuer/reference', aapl, emu.apiKey)).status).toBe(200);
    expect(waits).toEqual([120]);
  });
});
