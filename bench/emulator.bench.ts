/**
 * Emulator speed (issue 2): start-up on the bundled data, and facts/full of the largest bundled
 * company right after start (cold) and again (warm): time to first byte, total time, bytes.
 * The largest company is found with a separate store first, so the timed emulator starts cold.
 */
import { request } from 'node:http';
import { loadStore } from '../src/emulator/data/index.js';
import { DEMO_API_KEY } from '../src/emulator/demo-key.js';
import { BUNDLED_DATA_DIR, startEmulator } from '../src/emulator/index.js';
import { silentLogger } from '../src/log.js';
import { systemClock } from '../src/types.js';
import type { BenchResult } from './types.js';

interface Timed {
  status: number;
  firstByteMs: number;
  totalMs: number;
  bytes: number;
}

function timedPost(url: string, path: string, body: unknown): Promise<Timed> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let first = 0;
    let bytes = 0;
    const req = request(
      `${url}${path}`,
      { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': DEMO_API_KEY } },
      (res) => {
        res.on('data', (c: Buffer) => {
          if (first === 0) first = performance.now() - t0;
          bytes += c.length;
        });
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            firstByteMs: first,
            totalMs: performance.now() - t0,
            bytes,
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

async function largestCompany(): Promise<{ ticker: string; cik: string; rows: number }> {
  const store = await loadStore({
    dataDir: BUNDLED_DATA_DIR,
    synthetic: 0,
    clock: systemClock,
    logger: silentLogger(),
  });
  let best = { ticker: '', cik: '', rows: -1 };
  for (const c of store.companies()) {
    const rows = (await store.factsFull(c.cik)).length;
    if (rows > best.rows) best = { ticker: c.ticker ?? c.cik, cik: c.cik, rows };
  }
  return best;
}

export async function run(): Promise<BenchResult[]> {
  const largest = await largestCompany();
  const t0 = performance.now();
  const emu = await startEmulator({ port: 0, rateLimitPerMinute: null });
  const startupMs = performance.now() - t0;
  try {
    const body = { cik: largest.cik };
    const cold = await timedPost(emu.url, '/api/b2b/facts/full', body);
    const warm = await timedPost(emu.url, '/api/b2b/facts/full', body);
    if (cold.status !== 200 || warm.status !== 200)
      throw new Error(`facts/full answered ${cold.status}/${warm.status}`);
    const note = `${largest.ticker}, ${largest.rows} rows`;
    return [
      {
        group: 'emulator',
        name: 'start-up on bundled data',
        value: startupMs,
        unit: 'ms',
        target: '< 5000 ms',
        ok: startupMs < 5000,
      },
      {
        group: 'emulator',
        name: 'facts/full largest, first byte after start',
        value: cold.firstByteMs,
        unit: 'ms',
        target: '< 1000 ms',
        ok: cold.firstByteMs < 1000,
        note,
      },
      {
        group: 'emulator',
        name: 'facts/full largest, total after start',
        value: cold.totalMs,
        unit: 'ms',
        target: '< 1000 ms',
        ok: cold.totalMs < 1000,
        note,
      },
      { group: 'emulator', name: 'facts/full largest, total warm', value: warm.totalMs, unit: 'ms', note },
      { group: 'emulator', name: 'facts/full largest, body size', value: cold.bytes / 1e6, unit: 'MB', note },
    ];
  } finally {
    await emu.close();
  }
}
