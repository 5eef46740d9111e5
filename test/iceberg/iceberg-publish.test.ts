/**
 * The publisher commits each published snapshot to its Iceberg tables after `_SUCCESS`
 * (`output.iceberg`, on by default): the snapshot's record says where it stands and `status` shows
 * it; a failed commit leaves the snapshot published and pending, and the next snapshot's commit
 * lands it first, in order; a kill -9 of the control worker between `_SUCCESS` and the commit
 * (its first attempt failed, its retry waiting) leaves the snapshot published, and the retry
 * commits it. icebird reads every table version back against DuckDB's reading of the published
 * files. Real Redis, the emulator over HTTP, a real worker process.
 */
import { access, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDuck, type DuckSession } from '../../src/output/convert/duckdb.js';
import { LocalStorage } from '../../src/output/storage/local-storage.js';
import { readStoredManifest } from '../../src/output/catalog/index.js';
import { readTable, type TableMetadata } from '../../src/output/iceberg/index.js';
import { verifySnapshot } from '../../src/output/readers/verify.js';
import { formatStatus, statusReport } from '../../src/pipeline/status-view.js';
import type { SnapshotRecord } from '../../src/pipeline/record/snapshot-states.js';
import type { DatasetName } from '../../src/types.js';
import { startPipelineHarness, type PipelineHarness } from '../helpers/pipeline.js';
import { CLI_BIN, ended, spawnWorker, terminateAll, type SpawnedWorker } from '../helpers/processes.js';
import { localFileFetch } from './local-file-fetch.js';
import { icebergRows, publishedRows } from './iceberg-rows.js';

const DATASET: DatasetName = 'series_catalog';
const realFetch = globalThis.fetch;
let duck: DuckSession;

beforeAll(async () => {
  duck = await openDuck({ threads: 1 });
  globalThis.fetch = localFileFetch(realFetch);
});
afterAll(() => {
  globalThis.fetch = realFetch;
  duck?.close();
});

/** The record once `done` holds for it (the commit runs after the record says published). */
async function recordWhen(
  h: PipelineHarness,
  id: string,
  done: (r: SnapshotRecord) => boolean,
  tries = 1500,
): Promise<SnapshotRecord> {
  let last: SnapshotRecord | undefined;
  for (let i = 0; i < tries; i++) {
    last = await h.ctx.store.get(id);
    if (last !== undefined && done(last)) return last;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`snapshot ${id} never got there: ${JSON.stringify(last?.iceberg)} (${last?.state})`);
}

const statusText = (r: SnapshotRecord): string => formatStatus(statusReport(r, null));

/** Our snapshot ids in the table's Iceberg snapshots, oldest first, and its version. */
async function tableOf(h: PipelineHarness): Promise<{ version: number; ids: string[] }> {
  const t = await readTable(new LocalStorage(h.outDir), DATASET);
  return {
    version: t?.version ?? 0,
    ids: (t?.metadata.snapshots ?? []).map((s) => s.summary['filings_export.snapshot_id'] ?? ''),
  };
}

/** icebird's rows of table version `version` equal DuckDB's of snapshot `id`'s published files. */
async function expectTableRows(h: PipelineHarness, version: number, id: string): Promise<void> {
  const m = await readStoredManifest(new LocalStorage(h.outDir), id);
  const expected = await publishedRows(duck, h.outDir, m, DATASET);
  expect(expected.length).toBe(m.datasets[DATASET]!.rows);
  expect(await icebergRows(join(h.outDir, DATASET), m.datasets[DATASET]!.columns, version)).toEqual(expected);
}

describe('Iceberg commit at publish', () => {
  let h: PipelineHarness;
  beforeAll(async () => {
    h = await startPipelineHarness({ config: { 'output.formats': ['parquet'] } });
    await h.startWorkers();
  });
  afterAll(async () => {
    await h?.close();
  });

  const night = async (id: string): Promise<void> => {
    const rec = await h.runToEnd(h.spec(['AAPL'], [DATASET], id));
    expect(rec.state, rec.message ?? '').toBe('published');
  };

  it('commits each published snapshot, and status says so', async () => {
    await night('pub-1');
    const rec = await recordWhen(h, 'pub-1', (r) => r.iceberg?.state === 'committed');
    expect(rec.iceberg?.message).toBe(`${DATASET} v1`);
    expect(statusText(rec)).toMatch(new RegExp(`^iceberg: committed at \\S+Z: ${DATASET} v1$`, 'm'));
    expect(await tableOf(h)).toEqual({ version: 1, ids: ['pub-1'] });
    await expectTableRows(h, 1, 'pub-1');
  }, 180_000);

  it('a failed commit leaves the snapshot published and pending; the next one commits it first', async () => {
    // The table's version hint turned into a folder: every commit attempt fails until it is back.
    const hint = join(h.outDir, DATASET, 'metadata', 'version-hint.text');
    await rm(hint);
    await mkdir(hint);
    await night('pub-2');
    const pending = await recordWhen(h, 'pub-2', (r) => /retries it first\)$/.test(r.iceberg?.message ?? ''));
    expect(pending.state).toBe('published');
    await access(join(h.outDir, '_snapshots', 'pub-2', '_SUCCESS'));
    expect(pending.iceberg).toMatchObject({ state: 'pending' });
    expect(pending.iceberg?.message).toMatch(
      /^ICEBERG_COMMIT_FAILED: committing snapshot pub-2 to the Iceberg tables of \S+ failed: .+ \(the snapshot stays published; the next snapshot's commit retries it first\)$/,
    );
    expect(statusText(pending)).toMatch(
      /^iceberg: PENDING since \S+Z: published, not yet in its tables: ICEBERG_COMMIT_FAILED: /m,
    );

    await rm(hint, { recursive: true });
    await writeFile(hint, '1\n');
    await night('pub-3');
    await recordWhen(h, 'pub-3', (r) => r.iceberg?.state === 'committed');
    // The pending night landed before the newer one, and its record says so.
    expect(await tableOf(h)).toEqual({ version: 3, ids: ['pub-1', 'pub-2', 'pub-3'] });
    expect((await h.ctx.store.get('pub-2'))?.iceberg).toMatchObject({
      state: 'committed',
      message: `${DATASET} v2`,
    });
    await expectTableRows(h, 2, 'pub-2');
    await expectTableRows(h, 3, 'pub-3');
  }, 300_000);

  it('verify checks a snapshot’s commit against its manifest and names each mismatch', async () => {
    const sound = await verifySnapshot(h.outDir, 'pub-3', { checkValues: false });
    expect(sound.problems).toEqual([]);
    expect(sound.ok).toBe(true);
    // Tampered: pub-3's Iceberg snapshot points at pub-2's manifest list, so at pub-2's files.
    const file = join(h.outDir, DATASET, 'metadata', 'v3.metadata.json');
    const good = await readFile(file, 'utf8');
    const meta = JSON.parse(good) as TableMetadata;
    const [, second, third] = meta.snapshots;
    third!['manifest-list'] = second!['manifest-list'];
    await writeFile(file, JSON.stringify(meta));
    const m = await readStoredManifest(new LocalStorage(h.outDir), 'pub-3');
    const paths = m.files.filter((f) => f.dataset === DATASET).map((f) => f.path);
    const tampered = await verifySnapshot(h.outDir, 'pub-3', { checkValues: false });
    expect(tampered.ok).toBe(false);
    expect(tampered.problems).toEqual(
      expect.arrayContaining(
        paths.map((p) => `${DATASET}: the Iceberg snapshot of pub-3 lacks ${p}, which the manifest lists`),
      ),
    );
    expect(tampered.problems).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `^${DATASET}: the Iceberg snapshot of pub-3 lists ${DATASET}/\\S+snapshot_id=pub-2/\\S+, which the manifest does not$`,
        ),
      ),
    );
    // Tampered: the table no longer names pub-3 at all.
    third!.summary['filings_export.snapshot_id'] = 'someone-else';
    await writeFile(file, JSON.stringify(meta));
    expect((await verifySnapshot(h.outDir, 'pub-3', { checkValues: false })).problems).toEqual([
      `${DATASET}: the Iceberg table (${join(h.outDir, DATASET)}, v3) has no snapshot of pub-3: its commit is pending (status says why) or was lost; \`filings-export iceberg rebuild\` writes it`,
    ]);
    await writeFile(file, good);
    expect((await verifySnapshot(h.outDir, 'pub-3', { checkValues: false })).ok).toBe(true);
  }, 120_000);
});

describe('a crash between _SUCCESS and the commit', () => {
  let h: PipelineHarness;
  const workers: SpawnedWorker[] = [];
  beforeAll(async () => {
    h = await startPipelineHarness({ config: { 'output.formats': ['parquet'] } });
  });
  afterAll(async () => {
    await terminateAll(workers.map((w) => w.child));
    await h?.close();
  });

  it('leaves the snapshot published, and the publish job’s retry commits the table', async () => {
    // A short lock and a long backoff: the killed worker's failed attempt waits for its retry.
    const config = join(h.outDir, '..', `fx-crash-${process.pid}.yaml`);
    await writeFile(config, 'worker: { lock_duration_ms: 5000 }\nretry: { base_delay_ms: 15000 }\n');
    const env = { ...h.env, FILINGS_EXPORT_CONFIG: config, LOG_LEVEL: 'info' };
    const start = async (): Promise<SpawnedWorker> => {
      const w = spawnWorker(CLI_BIN, ['worker'], { env });
      workers.push(w);
      await w.ready;
      return w;
    };
    // The table's metadata folder is a file: the commit after _SUCCESS fails before it writes
    // anything, and the publish job waits for its retry when the worker is killed.
    const metadata = join(h.outDir, DATASET, 'metadata');
    await mkdir(join(h.outDir, DATASET), { recursive: true });
    await writeFile(metadata, 'in the way');
    const first = await start();
    await h.ctx.enqueue(h.spec(['AAPL'], [DATASET], 'crash-1'));
    const cut = await recordWhen(
      h,
      'crash-1',
      (r) =>
        r.state === 'published' &&
        /\(the snapshot stays published; will retry\)$/.test(r.iceberg?.message ?? ''),
    );
    first.child.kill('SIGKILL');
    expect(await ended(first.child)).toBe('SIGKILL');

    await access(join(h.outDir, '_snapshots', 'crash-1', '_SUCCESS'));
    expect(cut.iceberg?.state).toBe('pending');
    expect(statusText(cut)).toMatch(
      /^iceberg: PENDING since \S+Z: published, not yet in its tables: ICEBERG_COMMIT_FAILED: committing snapshot crash-1 /m,
    );

    await rm(metadata);
    await start();
    const after = await recordWhen(h, 'crash-1', (r) => r.iceberg?.state === 'committed', 2400);
    expect(after.state).toBe('published');
    expect(after.iceberg?.message).toBe(`${DATASET} v1`);
    expect(await tableOf(h)).toEqual({ version: 1, ids: ['crash-1'] });
    expect((await readdir(metadata)).filter((n) => n.endsWith('.metadata.json'))).toEqual([
      'v1.metadata.json',
    ]);
    await expectTableRows(h, 1, 'crash-1');
    await rm(config, { force: true });
  }, 400_000);
});
