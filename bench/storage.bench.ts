/**
 * Storage groundwork for issue 11: upload of a ~100 MB file to s3rver (multipart, 8 MiB parts,
 * 4 in flight) against a local copy through the same port, with the uploader's peak RSS. s3rver
 * runs in its own process so its memory is not counted. Phase 2 measures a whole publish.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStorage, PART_SIZE, QUEUE_SIZE, type Storage } from '../src/output/storage/index.js';
import { startS3rverProcess } from './support/s3rver-process.js';
import { median } from './support/stats.js';
import type { BenchResult } from './support/types.js';

const MB = 1024 * 1024;
const FILE_MB = 100;
const RUNS = 3;

async function timeUpload(st: Storage, file: string, key: string): Promise<{ ms: number; peakRss: number }> {
  let peakRss = process.memoryUsage().rss;
  const timer = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 20);
  const t0 = performance.now();
  await st.putFile(key, file);
  const ms = performance.now() - t0;
  clearInterval(timer);
  return { ms, peakRss: Math.max(peakRss, process.memoryUsage().rss) };
}

export async function run(): Promise<BenchResult[]> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-storage-'));
  const server = await startS3rverProcess(join(dir, 's3rver'));
  try {
    const file = join(dir, 'src.bin');
    const fh = await open(file, 'w');
    for (let i = 0; i < FILE_MB; i++) await fh.write(randomBytes(MB));
    await fh.close();

    const local = openStorage(join(dir, 'local'));
    const s3 = openStorage('s3://bench/p', {
      settings: { endpoint: server.endpoint, forcePathStyle: true },
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    });
    const baseRss = process.memoryUsage().rss;
    const localRuns: number[] = [];
    const s3Runs: number[] = [];
    let peakRss = baseRss;
    for (let i = 0; i < RUNS; i++) {
      localRuns.push((await timeUpload(local, file, `f${i}.bin`)).ms);
      const r = await timeUpload(s3, file, `f${i}.bin`);
      s3Runs.push(r.ms);
      peakRss = Math.max(peakRss, r.peakRss);
    }
    await local.close();
    await s3.close();
    const localMs = median(localRuns);
    const s3Ms = median(s3Runs);
    const note = `${FILE_MB} MB, median of ${RUNS}; parts ${PART_SIZE / MB} MiB × ${QUEUE_SIZE} in flight`;
    return [
      {
        group: 'storage',
        name: `local copy ${FILE_MB} MB`,
        value: (FILE_MB / localMs) * 1000,
        unit: 'MB/s',
        note,
      },
      {
        group: 'storage',
        name: `upload to s3rver ${FILE_MB} MB`,
        value: (FILE_MB / s3Ms) * 1000,
        unit: 'MB/s',
        note,
      },
      {
        group: 'storage',
        name: 'upload/local throughput ratio (file only)',
        value: localMs / s3Ms,
        unit: 'ratio',
        note: "groundwork; the issue's >= 0.7 is for a whole publish (phase 2)",
      },
      {
        group: 'storage',
        name: 'uploader peak RSS over baseline',
        value: (peakRss - baseRss) / MB,
        unit: 'MB',
        note: `baseline ${(baseRss / MB).toFixed(0)} MB; bound queueSize × partSize = ${(QUEUE_SIZE * PART_SIZE) / MB} MiB`,
      },
    ];
  } finally {
    server.stop();
    await rm(dir, { recursive: true, force: true });
  }
}
