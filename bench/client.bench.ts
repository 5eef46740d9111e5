/**
 * Client streaming (issues 3 and 15): facts/full of the largest bundled company through
 * `client.stream()`. The emulator runs in a child process (`filings-export emulator`), so heap, RSS
 * and CPU figures are the client's own. Prints rows/s (goal >= 150,000), CPU seconds per 1,000
 * rows of facts/full and evidence/enriched, peak and retained heap growth, peak RSS, against the
 * response size; the plain whole-body path for reference; and the parsers alone on an in-memory
 * body: the row splitter (chosen), stream-json's tokenizer (the previous path) and
 * @streamparser/json, the alternatives measured for docs/decisions.md "## Client".
 */
import { availableParallelism, loadavg } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import Tokenizer from '@streamparser/json/tokenizer.js';
import TokenParser from '@streamparser/json/tokenparser.js';
import { FilingsClient } from '../src/api/index.js';
import { createRowExtractor } from '../src/api/row-extractor.js';
import { DEMO_API_KEY } from '../src/emulator/demo-key.js';
import { startEmulatorProcess } from './support/emulator-process.js';
import { createTokenRowExtractor } from './support/stream-json-rows.js';
import { median } from './support/stats.js';
import type { BenchResult } from './support/types.js';

const MB = 1024 * 1024;
const RUNS = 3;
const TICKERS = ['AAPL', 'NVDA', 'GOOGL', 'TSLA', 'WMT', 'MSFT', 'AMZN', 'META'];
const STREAM_GOAL_ROWS_PER_S = 150_000;
const WARMUP_RUNS = 8;
const STREAM_RUNS = 5;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

async function bodyOf(url: string, ticker: string): Promise<Buffer> {
  const res = await fetch(`${url}/api/b2b/facts/full`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': DEMO_API_KEY },
    body: JSON.stringify({ ticker }),
  });
  return Buffer.from(await res.arrayBuffer());
}

interface MemSample {
  peakHeap: number;
  retained: number;
  peakRss: number;
  baseRss: number;
}

interface StreamRun {
  rowsPerSecond: number;
  /** CPU (user + system) of this process per 1,000 rows, in seconds. */
  cpuPer1000: number;
}

async function streamRun(
  client: FilingsClient,
  operation: 'facts/full' | 'evidence/enriched',
  ticker: string,
): Promise<StreamRun> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const s = await client.stream(operation, { ticker });
  let rows = 0;
  for await (const _row of s.rows) rows += 1;
  await s.envelope();
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  return { rowsPerSecond: (rows / ms) * 1000, cpuPer1000: (cpu.user + cpu.system) / 1e6 / (rows / 1000) };
}

/** Heap sampled every 250 rows (garbage included) and after a full GC every 2500 rows (retained). */
async function streamMemory(client: FilingsClient, ticker: string): Promise<MemSample> {
  gc();
  const { heapUsed: base, rss: baseRss } = process.memoryUsage();
  const m: MemSample = { peakHeap: 0, retained: 0, peakRss: 0, baseRss };
  const sample = (withGc: boolean): void => {
    if (withGc) gc();
    const u = process.memoryUsage();
    m.peakHeap = Math.max(m.peakHeap, u.heapUsed - base);
    m.peakRss = Math.max(m.peakRss, u.rss);
    if (withGc) m.retained = Math.max(m.retained, u.heapUsed - base);
  };
  const s = await client.stream('facts/full', { ticker });
  let rows = 0;
  for await (const _row of s.rows) if (++rows % 250 === 0) sample(rows % 2500 === 0);
  await s.envelope();
  sample(true);
  return m;
}

/** The alternative: @streamparser/json, rows only (`$.rows.*`, keepStack false). */
function streamparserRows(body: Buffer): number {
  let rows = 0;
  const tokenizer = new Tokenizer();
  const parser = new TokenParser({ paths: ['$.rows.*'], keepStack: false });
  tokenizer.onToken = parser.write.bind(parser);
  parser.onValue = () => {
    rows += 1;
  };
  for (let off = 0; off < body.length; off += 65536) tokenizer.write(body.subarray(off, off + 65536));
  tokenizer.end();
  return rows;
}

/** The chosen path: the row splitter, batches parsed by JSON.parse. */
function splitterRows(body: Buffer): number {
  const ex = createRowExtractor();
  let rows = 0;
  for (let off = 0; off < body.length; off += 65536) {
    ex.push(body.subarray(off, off + 65536));
    for (let batch = ex.take(); batch; batch = ex.take()) rows += batch.length;
  }
  ex.end();
  return rows;
}

/** The previous path: stream-json's tokenizer and an assembler. */
function streamJsonRows(body: Buffer): number {
  const ex = createTokenRowExtractor();
  let rows = 0;
  for (let off = 0; off < body.length; off += 65536) rows += ex.write(body.subarray(off, off + 65536)).length;
  ex.end();
  return rows;
}

function jsonParseRows(body: Buffer): number {
  return (JSON.parse(body.toString('utf8')) as { rows: unknown[] }).rows.length;
}

function rowsPerSecond(fn: (b: Buffer) => number, body: Buffer): number {
  const rates: number[] = [];
  for (let i = 0; i <= RUNS; i++) {
    const t0 = performance.now();
    const rows = fn(body);
    if (i > 0) rates.push((rows / (performance.now() - t0)) * 1000); // run 0 warms up
  }
  return median(rates);
}

export async function run(): Promise<BenchResult[]> {
  // Limits far above what the bench spends.
  const emulator = await startEmulatorProcess([
    '--port',
    '0',
    '--rate-limit',
    '100000',
    '--daily-quota',
    '10000000',
    '--monthly-quota',
    '10000000',
  ]);
  const { url } = emulator;
  const client = new FilingsClient({ baseUrl: url, apiKey: DEMO_API_KEY });
  const results: BenchResult[] = [];
  try {
    // The largest bundled company by facts/full response size.
    let largest = { ticker: '', bytes: -1 };
    for (const t of TICKERS) {
      const n = (await bodyOf(url, t)).length;
      if (n > largest.bytes) largest = { ticker: t, bytes: n };
    }
    const body = await bodyOf(url, largest.ticker);
    const bodyMB = body.length / MB;
    const rowCount = jsonParseRows(body);
    const note = `${largest.ticker}: ${rowCount} rows, ${bodyMB.toFixed(1)} MB, median of ${STREAM_RUNS}`;

    // Warm-up: the JIT and the emulator's recorded chunks settle over the first few requests.
    for (let i = 0; i < WARMUP_RUNS; i++) await streamRun(client, 'facts/full', largest.ticker);
    const runs: StreamRun[] = [];
    for (let i = 0; i < STREAM_RUNS; i++) runs.push(await streamRun(client, 'facts/full', largest.ticker));
    const rates = runs.map((r) => r.rowsPerSecond);
    await streamRun(client, 'evidence/enriched', largest.ticker); // warm-up (the emulator builds evidence)
    const evidence: StreamRun[] = [];
    for (let i = 0; i < RUNS; i++)
      evidence.push(await streamRun(client, 'evidence/enriched', largest.ticker));
    const mem: MemSample[] = [];
    for (let i = 0; i < RUNS; i++) mem.push(await streamMemory(client, largest.ticker));
    const peakHeapMB = median(mem.map((m) => m.peakHeap)) / MB;
    const retainedMB = median(mem.map((m) => m.retained)) / MB;

    const plainRates: number[] = [];
    let plainRetainedMB = 0;
    for (let i = 0; i < RUNS; i++) {
      gc();
      const base = process.memoryUsage().heapUsed;
      const t0 = performance.now();
      const r = await client.factsFull({ ticker: largest.ticker });
      plainRates.push((r.data.rows.length / (performance.now() - t0)) * 1000);
      gc();
      plainRetainedMB = Math.max(plainRetainedMB, (process.memoryUsage().heapUsed - base) / MB);
    }

    results.push(
      {
        group: 'client',
        name: `facts/full ${largest.ticker} response body`,
        value: bodyMB,
        unit: 'MB',
        note: `${rowCount} rows`,
      },
      {
        group: 'client',
        name: 'stream() facts/full throughput',
        value: median(rates),
        unit: 'rows/s',
        target: `>= ${STREAM_GOAL_ROWS_PER_S.toLocaleString('en-US')} rows/s`,
        ok: median(rates) >= STREAM_GOAL_ROWS_PER_S,
        note: `${note} after ${WARMUP_RUNS} warm-up runs; load average ${loadavg()[0]?.toFixed(1)} on ${availableParallelism()} cores`,
      },
      {
        group: 'client',
        name: 'stream() CPU per 1,000 rows: facts_full',
        value: median(runs.map((r) => r.cpuPer1000)),
        unit: 's',
        note: `${largest.ticker} facts/full, client process user+system CPU, median of ${STREAM_RUNS}`,
      },
      {
        group: 'client',
        name: 'stream() CPU per 1,000 rows: evidence',
        value: median(evidence.map((r) => r.cpuPer1000)),
        unit: 's',
        note: `${largest.ticker} evidence/enriched at ${Math.round(median(evidence.map((r) => r.rowsPerSecond)))} rows/s, median of ${RUNS}`,
      },
      {
        group: 'client',
        name: 'stream() peak heap growth',
        value: peakHeapMB,
        unit: 'MB',
        note: 'sampled every 250 rows: mostly young-generation garbage awaiting a scavenge',
      },
      {
        group: 'client',
        name: 'stream() retained heap growth',
        value: retainedMB,
        unit: 'MB',
        target: `< ${(bodyMB / 10).toFixed(1)} MB (body/10)`,
        ok: retainedMB < bodyMB / 10,
        note: 'after a full GC every 2500 rows',
      },
      {
        group: 'client',
        name: 'stream() peak RSS (client process)',
        value: Math.max(...mem.map((m) => m.peakRss)) / MB,
        unit: 'MB',
        note: `emulator in a child process; ${(median(mem.map((m) => m.baseRss)) / MB).toFixed(0)} MB before the stream`,
      },
      {
        group: 'client',
        name: 'plain factsFull() throughput',
        value: median(plainRates),
        unit: 'rows/s',
        note: 'whole body, exact numbers (same scan + JSON.parse)',
      },
      {
        group: 'client',
        name: 'plain factsFull() retained heap',
        value: plainRetainedMB,
        unit: 'MB',
        note: 'the parsed response held',
      },
      {
        group: 'client',
        name: 'parser only: row splitter + JSON.parse (chosen)',
        value: rowsPerSecond(splitterRows, body),
        unit: 'rows/s',
        note: 'in-memory body, 64 KiB chunks',
      },
      {
        group: 'client',
        name: 'parser only: stream-json tokens (previous)',
        value: rowsPerSecond(streamJsonRows, body),
        unit: 'rows/s',
        note: 'in-memory body, 64 KiB chunks',
      },
      {
        group: 'client',
        name: 'parser only: @streamparser/json',
        value: rowsPerSecond(streamparserRows, body),
        unit: 'rows/s',
        note: 'in-memory body, 64 KiB chunks',
      },
      {
        group: 'client',
        name: 'parser only: JSON.parse whole body',
        value: rowsPerSecond(jsonParseRows, body),
        unit: 'rows/s',
        note: 'not streaming, numbers not lossless',
      },
    );
  } finally {
    await client.close();
    await emulator.close();
  }
  return results;
}
