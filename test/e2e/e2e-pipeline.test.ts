/**
 * The CLI end to end: real Redis, the real emulator over HTTP, `node bin/filings-export.mjs`
 * processes. A snapshot of several companies publishes files whose row counts equal what the API
 * returns; running it again is a no-op; two worker processes share one snapshot; config errors
 * name the field.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Job } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StreamOperation } from '../../src/api/index.js';
import { datasetDefinition } from '../../src/datasets/index.js';
import { partJobId } from '../../src/pipeline/queue/ids.js';
import type { DatasetName } from '../../src/types.js';
import {
  runToExit,
  spawnWorker,
  terminateAll,
  type CliResult,
  type SpawnedWorker,
} from '../helpers/processes.js';
import { startPipelineHarness, type PipelineHarness } from '../helpers/pipeline.js';

const BIN = join(import.meta.dirname, '..', '..', 'bin', 'filings-export.mjs');

const cli = (args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> => runToExit(BIN, args, env);

function lastJsonLine(stdout: string): Record<string, unknown> {
  const lines = stdout.trim().split('\n');
  return JSON.parse(lines[lines.length - 1] ?? 'null') as Record<string, unknown>;
}

async function apiRows(h: PipelineHarness, dataset: DatasetName, tickers: string[]): Promise<number> {
  let n = 0;
  for (const ticker of tickers) {
    const res = await h.client.stream(
      datasetDefinition(dataset).operation as StreamOperation,
      { ticker } as never,
    );
    for await (const _row of res.rows) n++;
  }
  return n;
}

describe('filings-export end to end', () => {
  let h: PipelineHarness;
  beforeAll(async () => {
    h = await startPipelineHarness({
      emulator: { latencyMs: 100 },
      config: { 'output.formats': ['parquet', 'ndjson'] },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('run --local --wait publishes several companies with the API row counts; running it again is a no-op', async () => {
    const tickers = ['WMT', 'TSLA', 'ZZZZQ'];
    const args = [
      'run',
      '--local',
      '--wait',
      '--tickers',
      tickers.join(','),
      '--datasets',
      'facts_full,series_catalog',
      '--snapshot-id',
      'e2e-local',
      '--formats',
      'parquet,ndjson',
    ];
    const first = await cli(args, h.env);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toMatch(/plan: 6 requests \(3 companies x 2 datasets/);
    const result = lastJsonLine(first.stdout);
    expect(result).toMatchObject({ snapshot_id: 'e2e-local', status: 'published' });
    // The unknown company is named, with the API's answer, in the output and in the JSON line.
    expect(first.stderr).toMatch(/^not found: ZZZZQ: .*404 Unknown ticker: ZZZZQ/m);
    expect(result.not_found).toEqual([{ company: 'ZZZZQ', answer: expect.stringContaining('404') }]);
    const rows = result.rows as Record<string, number>;
    expect(rows.facts_full).toBe(await apiRows(h, 'facts_full', ['WMT', 'TSLA']));
    expect(rows.series_catalog).toBe(await apiRows(h, 'series_catalog', ['WMT', 'TSLA']));

    const manifestPath = String(result.manifest);
    expect(manifestPath).toBe(join(h.outDir, '_snapshots', 'e2e-local', 'manifest.json'));
    expect(existsSync(join(h.outDir, '_snapshots', 'e2e-local', '_SUCCESS'))).toBe(true);
    const manifest = JSON.parse(await readFile(manifestPath, 'utf8')) as {
      files: { dataset: string; format: string; rows: number; path: string }[];
    };
    for (const ds of ['facts_full', 'series_catalog'])
      for (const format of ['parquet', 'ndjson']) {
        const files = manifest.files.filter((f) => f.dataset === ds && f.format === format);
        expect(
          files.reduce((a, f) => a + f.rows, 0),
          `${ds} ${format}`,
        ).toBe(rows[ds]);
        for (const f of files)
          expect(f.path).toMatch(
            new RegExp(`^${ds}/snapshot_date=\\d{4}-\\d{2}-\\d{2}/snapshot_id=e2e-local/`),
          );
      }
    expect(JSON.stringify(manifest)).toContain('ZZZZQ');

    const before = (await h.stats()).total.requests;
    const again = await cli(args, h.env);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain('snapshot e2e-local already exists (published); nothing enqueued');
    expect(lastJsonLine(again.stdout)).toEqual(result);
    expect((await h.stats()).total.requests).toBe(before);
  });

  it('two worker processes share one snapshot, and stop gracefully on SIGTERM', async () => {
    const env = { ...h.env, FILINGS_EXPORT_CONCURRENCY: '1', LOG_LEVEL: 'info' };
    const workers: SpawnedWorker[] = [];
    const ready = (i: number): Promise<void> => {
      workers[i] = spawnWorker(BIN, ['worker'], { env });
      return workers[i].ready;
    };
    try {
      await Promise.all([ready(0), ready(1)]);
      const tickers = ['WMT', 'AAPL', 'TSLA', 'NVDA', 'GOOGL', 'META'];
      const spec = h.spec(tickers, ['series_catalog'], 'e2e-two-workers');
      const rec = await h.runToEnd(spec);
      expect(rec.state, rec.message ?? '').toBe('published');
      const names = new Set<string>();
      for (const t of tickers) {
        const job = await Job.fromId(h.ctx.partsQueue, partJobId(spec.id, 'series_catalog', t));
        if (job?.processedBy) names.add(job.processedBy);
      }
      expect(names.size).toBe(2);
    } finally {
      expect(await terminateAll(workers.map((w) => w.child))).toEqual([0, 0]);
      for (const w of workers) expect(w.log()).toContain('worker stopped');
    }
  });

  it('demo --tickers loads what it exported and queries the table (no Apple when Apple is left out)', async () => {
    const out = await mkdtemp(join(tmpdir(), 'fx-demo-'));
    try {
      const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'warn' };
      delete env.REDIS_URL;
      delete env.FILINGS_API_URL;
      delete env.FILINGS_EXPORT_CONFIG;
      const r = await cli(['demo', '--tickers', 'MSFT,NVDA,TSLA', '--out', out], env);
      expect(r.code, r.stderr).toBe(0);
      // The demo loads its snapshot into <out>/warehouse.duckdb and queries the table there.
      expect(r.stdout).toMatch(/^loaded demo-\S+ \(\S+\) into duckdb:\S+warehouse\.duckdb$/m);
      expect(r.stdout).toMatch(/^\s+facts_full\s+(full|changes)\s+\d+ rows; /m);
      const m = /DuckDB, table facts_full in \S*warehouse\.duckdb: (\w+)'s annual revenue/.exec(r.stdout);
      expect(['MSFT', 'NVDA', 'TSLA']).toContain(m?.[1]);
      expect(r.stdout).not.toContain('AAPL');
      // At least one fiscal year row with an accession number under the heading.
      expect(r.stdout).toMatch(/^\s+\S+\s+\d{4}-\d{2}-\d{2}\.\.\d{4}-\d{2}-\d{2}\s+[\d,]+\s+\S+$/m);
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  });

  it('config errors name the field, the value and the file', async () => {
    const bad = join(h.outDir, 'bad-config.yaml');
    await writeFile(bad, 'budget:\n  share: 1.5\n');
    const r = await cli(['status', '--config', bad], h.env);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`config.budget.share: must be between 0 and 1 (got 1.5) in ${bad}`);
  });
});
