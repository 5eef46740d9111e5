/**
 * Emulator speed (issue 2): start-up on the bundled data, and facts/full of the largest bundled
 * company right after start (cold: nothing built, nothing compiled), then again: the second serve
 * (serialised again, its chunks recorded) and later serves (written from the recorded chunks).
 * Each run is a fresh Node process (this file re-run with FFX_EMULATOR_BENCH_CHILD=1), so "cold"
 * is what a user sees after `filings-export emulator` prints `listening on`: no JIT warmed by other
 * benchmarks. Medians of RUNS processes.
 */
import { execFile } from 'node:child_process';
import { request } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { loadStore } from '../src/emulator/data/index.js';
import { DEMO_API_KEY } from '../src/emulator/demo-key.js';
import { startEmulator } from '../src/emulator/index.js';
import { median } from './support/stats.js';
import type { BenchResult } from './support/types.js';

const RUNS = 5;
const CHILD_ENV = 'FFX_EMULATOR_BENCH_CHILD';

interface Timed {
  status: number;
  firstByteMs: number;
  totalMs: number;
  bytes: number;
}

interface ChildResult {
  startupMs: number;
  cold: Timed;
  second: Timed;
  warm: Timed;
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

/** One fresh process: start, then facts/full of `cik` cold, a second time, and twice more. */
async function child(cik: string): Promise<ChildResult> {
  const t0 = performance.now();
  const emu = await startEmulator({ port: 0, rateLimitPerMinute: null });
  const startupMs = performance.now() - t0;
  try {
    const body = { cik };
    const cold = await timedPost(emu.url, '/api/b2b/facts/full', body);
    const second = await timedPost(emu.url, '/api/b2b/facts/full', body);
    await timedPost(emu.url, '/api/b2b/facts/full', body);
    const warm = await timedPost(emu.url, '/api/b2b/facts/full', body);
    for (const t of [cold, second, warm])
      if (t.status !== 200) throw new Error(`facts/full answered ${t.status}`);
    return { startupMs, cold, second, warm };
  } finally {
    await emu.close();
  }
}

if (process.env[CHILD_ENV] !== undefined) {
  process.stdout.write(`${JSON.stringify(await child(process.env[CHILD_ENV]))}\n`);
}

/** The bundled company with the most facts/full rows, found in this (parent) process. */
async function largestCompany(): Promise<{ ticker: string; cik: string; rows: number }> {
  const store = await loadStore({});
  try {
    let best = { ticker: '', cik: '', rows: -1 };
    for (const c of store.companies()) {
      const rows = (await store.factsFull(c.cik)).length;
      if (rows > best.rows) best = { ticker: c.ticker ?? c.cik, cik: c.cik, rows };
    }
    return best;
  } finally {
    await store.close();
  }
}

export async function run(): Promise<BenchResult[]> {
  const largest = await largestCompany();
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  const runs: ChildResult[] = [];
  for (let i = 0; i < RUNS; i += 1) {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [join(root, 'bin', 'run-ts.mjs'), fileURLToPath(import.meta.url)],
      { cwd: root, env: { ...process.env, [CHILD_ENV]: largest.cik }, maxBuffer: 1 << 20 },
    );
    runs.push(JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as ChildResult);
  }
  /** A timing in ms: median over the runs, with its target and every run's value in the note. */
  const timing = (
    name: string,
    pick: (r: ChildResult) => number,
    maxMs: number,
    note: string,
  ): BenchResult => {
    const value = median(runs.map(pick));
    const all = runs.map((r) => Math.round(pick(r))).join(', ');
    return {
      group: 'emulator',
      name,
      value,
      unit: 'ms',
      target: `< ${maxMs} ms`,
      ok: value < maxMs,
      note: `${note}${all}`,
    };
  };
  const what = `${largest.ticker}, ${largest.rows} rows; fresh process, median of ${RUNS}: `;
  return [
    timing('start-up on bundled data', (r) => r.startupMs, 5000, ''),
    timing('facts/full largest, first byte after start', (r) => r.cold.firstByteMs, 500, what),
    timing('facts/full largest, total after start', (r) => r.cold.totalMs, 500, what),
    timing(
      'facts/full largest, total 2nd request',
      (r) => r.second.totalMs,
      250,
      'serialised again, chunks recorded: ',
    ),
    timing(
      'facts/full largest, total warm',
      (r) => r.warm.totalMs,
      250,
      '4th request, from recorded chunks: ',
    ),
    {
      group: 'emulator',
      name: 'facts/full largest, body size',
      value: (runs[0]?.cold.bytes ?? NaN) / 1e6,
      unit: 'MB',
      note: largest.ticker,
    },
  ];
}
