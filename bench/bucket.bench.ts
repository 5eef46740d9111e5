/**
 * Publishing to a bucket against publishing to a local root (issue 11): the same staged facts_full
 * rows (BUCKET_BENCH_ROWS, default 1,000,000, in 8 parts) published to a local directory and to an
 * s3:// root on s3rver (its own process), alternating, BUCKET_BENCH_RUNS rounds (default 3),
 * medians. Each publish runs in a fresh child process so its peak RSS is the publisher's own, and
 * the bucket publisher's temp dir is sampled every 100 ms for its peak size.
 *
 * `npm run bench -- bucket`
 */
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openStorage } from '../src/output/index.js';
import { outputPorts } from '../src/pipeline/output-adapter.js';
import type { PartPointer } from '../src/types.js';
import { syntheticFactRow } from '../test/helpers/synthetic-rows.js';
import { runBenchChild } from './support/child-process.js';
import { startS3rverProcess } from './support/s3rver-process.js';
import { median } from './support/stats.js';
import type { BenchResult } from './support/types.js';

const CHILD_FLAG = '--bucket-bench-child';
const MARK = 'BUCKET_BENCH_RESULT ';
const PARTS = 8;
const MB = 1024 * 1024;
const CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

interface ChildArg {
  phase: 'stage' | 'publish';
  root: string;
  snapshotId: string;
  rows: number;
  endpoint: string;
  control: string;
  tmpDir: string;
}

interface ChildResult {
  ms: number;
  maxRssMb: number;
  peakTmpBytes: number;
  bytes: number;
}

function ports(arg: ChildArg): ReturnType<typeof outputPorts> {
  return outputPorts({
    openStorage: (root) =>
      openStorage(root, {
        settings: {
          endpoint: arg.endpoint,
          forcePathStyle: true,
          region: 'us-east-1',
          checksums: 'when_required',
        },
        credentials: CREDENTIALS,
      }),
    tmpDir: arg.tmpDir,
  });
}

/** Bytes under a directory now (files being written included). */
async function dirBytes(dir: string): Promise<number> {
  let n = 0;
  for (const e of await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => [])) {
    if (e.isFile()) n += (await stat(join(e.parentPath, e.name)).catch(() => ({ size: 0 }))).size;
  }
  return n;
}

async function childStage(arg: ChildArg): Promise<ChildResult> {
  const p = await ports(arg);
  const pointers: PartPointer[] = [];
  const per = Math.ceil(arg.rows / PARTS);
  const t0 = performance.now();
  for (let part = 0; part < PARTS; part++) {
    const ticker = `T${String(part).padStart(3, '0')}`;
    const company = { cik: String(1000 + part).padStart(10, '0'), ticker };
    const w = p.staged.createWriter({
      root: arg.root,
      snapshotId: arg.snapshotId,
      dataset: 'facts_full',
      ticker,
      fetchedAt: '2026-11-21T00:00:00Z',
    });
    for (let i = 0; i < Math.min(per, arg.rows - part * per); i++) {
      const wait = w.write(syntheticFactRow(part * per + i, company));
      if (wait) await wait;
    }
    pointers.push({ dataset: 'facts_full', ticker, status: 'done', ...(await w.finish()) });
  }
  await p.closeOutput();
  await writeFile(join(arg.control, `${arg.snapshotId}.json`), JSON.stringify(pointers));
  return {
    ms: performance.now() - t0,
    maxRssMb: process.resourceUsage().maxRSS / 1024,
    peakTmpBytes: 0,
    bytes: 0,
  };
}

async function childPublish(arg: ChildArg): Promise<ChildResult> {
  const parts = JSON.parse(
    await readFile(join(arg.control, `${arg.snapshotId}.json`), 'utf8'),
  ) as PartPointer[];
  const p = await ports(arg);
  let peakTmpBytes = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      peakTmpBytes = Math.max(peakTmpBytes, await dirBytes(arg.tmpDir));
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  const t0 = performance.now();
  const published = await p.publish({
    root: arg.root,
    snapshotId: arg.snapshotId,
    snapshotDate: '2026-11-21',
    formats: ['parquet'],
    datasets: ['facts_full'],
    parts,
    waits: [],
    startedAt: '2026-11-21T00:00:00Z',
    requests: PARTS,
    retries: 0,
    rateLimited429: 0,
  });
  const ms = performance.now() - t0;
  sampling = false;
  await sampler;
  await p.closeOutput();
  if (published.rows.facts_full !== arg.rows)
    throw new Error(`published ${published.rows.facts_full} rows of ${arg.rows}`);
  // The published files' size (local root only; the bucket's is the same bytes).
  const bytes = arg.root.startsWith('s3://')
    ? 0
    : await dirBytes(
        join(arg.root, 'facts_full', 'snapshot_date=2026-11-21', `snapshot_id=${arg.snapshotId}`),
      );
  return { ms, maxRssMb: process.resourceUsage().maxRSS / 1024, peakTmpBytes, bytes };
}

function runChild(arg: ChildArg): Promise<ChildResult> {
  return runBenchChild<ChildResult>({
    file: fileURLToPath(import.meta.url),
    flag: CHILD_FLAG,
    mark: MARK,
    arg,
  });
}

export async function run(): Promise<BenchResult[]> {
  const rows = Number(process.env.BUCKET_BENCH_ROWS ?? 1_000_000);
  const runs = Number(process.env.BUCKET_BENCH_RUNS ?? 3);
  const dir = await mkdtemp(join(tmpdir(), 'fx-bucket-bench-'));
  const server = await startS3rverProcess(join(dir, 's3rver'));
  const control = join(dir, 'control');
  const tmp = join(dir, 'tmp');
  await mkdir(control);
  await mkdir(tmp);
  try {
    const local: ChildResult[] = [];
    const bucket: ChildResult[] = [];
    for (let i = 0; i < runs; i++) {
      const base = { rows, endpoint: server.endpoint, control, tmpDir: tmp };
      const l = { ...base, root: join(dir, 'local'), snapshotId: `local-${i}` };
      const b = { ...base, root: 's3://bench/exports', snapshotId: `bucket-${i}` };
      await runChild({ ...l, phase: 'stage' });
      await runChild({ ...b, phase: 'stage' });
      // Alternate which goes first: the box is shared and noisy.
      if (i % 2 === 0) {
        local.push(await runChild({ ...l, phase: 'publish' }));
        bucket.push(await runChild({ ...b, phase: 'publish' }));
      } else {
        bucket.push(await runChild({ ...b, phase: 'publish' }));
        local.push(await runChild({ ...l, phase: 'publish' }));
      }
    }
    const localMs = median(local.map((r) => r.ms));
    const bucketMs = median(bucket.map((r) => r.ms));
    const ratio = localMs / bucketMs;
    const note = `${rows.toLocaleString('en-US')} facts_full rows, ${PARTS} parts, median of ${runs}`;
    return [
      { group: 'bucket', name: 'publish to a local root', value: localMs, unit: 'ms', note },
      {
        group: 'bucket',
        name: 'publish to an s3:// root (s3rver)',
        value: bucketMs,
        unit: 'ms',
        note: `${note}; download staged parts + DuckDB + ordered upload`,
      },
      {
        group: 'bucket',
        name: 'publish throughput: bucket / local',
        value: ratio,
        unit: 'ratio',
        target: '>= 0.7',
        ok: ratio >= 0.7,
        note: `runs (ms) local ${local.map((r) => r.ms.toFixed(0)).join(', ')}; bucket ${bucket.map((r) => r.ms.toFixed(0)).join(', ')}`,
      },
      {
        group: 'bucket',
        name: 'bucket publisher peak RSS',
        value: Math.max(...bucket.map((r) => r.maxRssMb)),
        unit: 'MB',
        note: `local publisher ${Math.max(...local.map((r) => r.maxRssMb)).toFixed(0)} MB; max over runs`,
      },
      {
        group: 'bucket',
        name: 'bucket publisher peak temp dir',
        value: Math.max(...bucket.map((r) => r.peakTmpBytes)) / MB,
        unit: 'MB',
        note: `published Parquet ${(median(local.map((r) => r.bytes)) / MB).toFixed(0)} MB; sampled every 100 ms`,
      },
    ];
  } finally {
    server.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv.includes(CHILD_FLAG)) {
  const arg = JSON.parse(process.argv[process.argv.indexOf(CHILD_FLAG) + 1] ?? '{}') as ChildArg;
  const result = arg.phase === 'stage' ? await childStage(arg) : await childPublish(arg);
  process.stdout.write(`${MARK}${JSON.stringify(result)}\n`);
}
