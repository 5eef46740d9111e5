/**
 * `changes` against the previous snapshot keeps "absent" apart from "could not read" (issue 24):
 * on an s3:// root (real s3rver) a read that fails once is retried and changes are written; one
 * that keeps failing publishes the snapshot without changes and its manifest says why; a previous
 * snapshot that is gone says so too, and `status` of a pipeline run shows it.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishToStorage } from '../../src/output/publish/remote-root.js';
import type { Storage } from '../../src/output/storage/storage.js';
import { outputPorts } from '../../src/pipeline/output-adapter.js';
import { formatStatus, statusReport } from '../../src/pipeline/status-view.js';
import type { PartPointer } from '../../src/types.js';
import { flakyReads } from '../helpers/flaky-storage.js';
import { startPipelineHarness } from '../helpers/pipeline.js';
import { openTestStorage, startS3, type TestS3 } from '../helpers/s3.js';
import { stageFactParts } from '../helpers/synthetic-snapshot.js';

let s3: TestS3;
let tmp: string;
let root: string;
let storage: Storage;
const open = (r: string): Storage => openTestStorage(s3.endpoint, r);

beforeAll(async () => {
  s3 = await startS3();
  tmp = await mkdtemp(join(tmpdir(), 'changes-read-errors-'));
  root = `s3://${s3.bucket}/exports`;
  storage = open(root);
});
afterAll(async () => {
  await storage.close();
  await s3.close();
  await rm(tmp, { recursive: true, force: true });
});

/** Stages one snapshot's facts_core parts on the bucket. */
async function stage(id: string, date: string): Promise<PartPointer[]> {
  const ports = await outputPorts({ openStorage: open, tmpDir: tmp });
  // The second snapshot's rows are shifted by 3, so changes against the first are not empty.
  const firstRow = id === 'c-1' ? 0 : 3;
  const companies = ['AAA', 'BBB'].map((ticker) => ({ ticker, cik: '9', rows: 25, firstRow }));
  const parts = await stageFactParts(ports, { root, id, date }, companies);
  await ports.closeOutput();
  return parts;
}

async function publishWith(st: Storage, id: string, date: string, changesAgainst?: string) {
  return publishToStorage(st, {
    snapshotId: id,
    snapshotDate: date,
    formats: ['parquet'],
    parts: await stage(id, date),
    stats: { waits: [], startedAt: `${date}T01:00:00Z`, requests: 2, retries: 0, rateLimited429: 0 },
    tmpDir: tmp,
    ...(changesAgainst !== undefined ? { changesAgainst } : {}),
    readRetry: { sleep: async () => undefined },
  });
}

describe('changes against the previous snapshot on a bucket', () => {
  it('retries a read that fails once, and writes changes', async () => {
    await publishWith(storage, 'c-1', '2026-11-20');
    let failures = 1;
    const flaky = flakyReads(storage, (k) => k === '_snapshots/c-1/manifest.json' && failures-- > 0);
    const m = await publishWith(flaky, 'c-2', '2026-11-21', 'c-1');
    expect(flaky.state.failures).toBe(1);
    expect(m.changes?.against).toBe('c-1');
    expect(m.changes_missing).toBeUndefined();
  });

  it('a read that keeps failing: published without changes, and the manifest says why', async () => {
    const flaky = flakyReads(storage, (k) => k.startsWith('_snapshots/c-1/'));
    const m = await publishWith(flaky, 'c-3', '2026-11-22', 'c-1');
    expect(m.changes).toBeUndefined();
    expect(m.changes_missing?.against).toBe('c-1');
    expect(m.changes_missing?.reason).toMatch(
      /^previous snapshot c-1: could not read s3:\/\/.*\/_snapshots\/c-1\/manifest\.json \(3 attempts\): read ECONNRESET/,
    );
    expect(flaky.state.failures).toBe(3);
    // What readers see is the stored manifest: the same field, and the snapshot is published.
    expect(await storage.head('_snapshots/c-3/_SUCCESS')).not.toBeNull();
    const stored = JSON.parse(
      await new Promise<string>((resolve, reject) => {
        const chunks: Buffer[] = [];
        void storage.getStream('_snapshots/c-3/manifest.json').then((s) =>
          s
            .on('data', (c: Buffer) => chunks.push(c))
            .on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
            .on('error', reject),
        );
      }),
    ) as { changes_missing?: unknown };
    expect(stored.changes_missing).toEqual(m.changes_missing);
  });

  it('a previous snapshot that is gone is an answer, not a read error: no retries, the reason says so', async () => {
    const flaky = flakyReads(storage, () => false);
    const m = await publishWith(flaky, 'c-4', '2026-11-23', 'c-gone');
    expect(m.changes).toBeUndefined();
    expect(m.changes_missing).toEqual({
      against: 'c-gone',
      reason: expect.stringMatching(
        /^previous snapshot c-gone: .* has no manifest at .*: it is not published$/,
      ),
    });
  });
});

describe('a previous snapshot partly downloaded', () => {
  it('waits for every download to end before it drops what came, and publishes without changes', async () => {
    const dataKey = (k: string): boolean => k.startsWith('facts_core/') && k.includes('/snapshot_id=c-1/');
    const flaky = flakyReads(storage, dataKey);
    let dataFailed!: () => void;
    const failedOnce = new Promise<void>((resolve) => (dataFailed = resolve));
    const manifestDownload: string[] = [];
    // The previous manifest's download is still running when a data file's read has failed for good.
    const slow: Storage = {
      ...flaky,
      download: async (key, path) => {
        if (dataKey(key))
          return flaky.download(key, path).catch((err: unknown) => {
            dataFailed();
            throw err;
          });
        if (key !== '_snapshots/c-1/manifest.json') return flaky.download(key, path);
        await failedOnce;
        await new Promise((resolve) => setTimeout(resolve, 100));
        manifestDownload.push(existsSync(dirname(path)) ? 'into its folder' : 'after its folder was removed');
        return flaky.download(key, path);
      },
    };
    const m = await publishWith(slow, 'c-6', '2026-11-25', 'c-1');
    // Its folder is removed only once it ended, not from under it (nor is a file landed after).
    expect(manifestDownload).toEqual(['into its folder']);
    expect(m.changes).toBeUndefined();
    expect(m.changes_missing?.reason).toMatch(/^previous snapshot c-1: could not read .*ECONNRESET/);
  });
});

describe('staged parts on a bucket', () => {
  it('a read of a staged part that fails once is retried, and the snapshot publishes whole', async () => {
    let failures = 1;
    const flaky = flakyReads(
      storage,
      (k) => k.startsWith('_staging/c-5/') && k.endsWith('.ndjson.gz') && failures-- > 0,
    );
    const m = await publishWith(flaky, 'c-5', '2026-11-24');
    expect(flaky.state.failures).toBe(1);
    expect(m.totals.rows).toBe(50);
  });
});

describe('status of a snapshot published without its changes', () => {
  it('shows why changes is missing', async () => {
    const h = await startPipelineHarness();
    try {
      await h.startWorkers();
      const spec = {
        ...h.spec(['AAPL'], ['facts_core'], 'changes-gone-2'),
        changesAgainst: 'changes-gone-1',
      };
      const rec = await h.runToEnd(spec);
      expect(rec.state).toBe('published');
      expect(rec.changesMissing).toMatch(/changes-gone-1/);
      const text = formatStatus(statusReport(rec, null));
      expect(text).toContain(`changes: not written: ${rec.changesMissing}`);
    } finally {
      await h.close();
    }
  });
});
