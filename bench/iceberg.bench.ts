/**
 * The Iceberg tables' cost (issue 38). One night of ICEBERG_BENCH_COMPANIES (default 109, the demo's
 * count) companies × ICEBERG_BENCH_ROWS facts each (default 5,000) in facts_full is written and published for real (Parquet); 29 quiet nights follow, each the same files hard-linked under its
 * own snapshot (what a night without a new filing publishes), so 30 snapshots are retained.
 * (b) `iceberg rebuild` over the 30: its time and the metadata files it leaves. (a) A 31st quiet
 * night's commit against the first night's publish: its time (≤ 2 %) and the bytes it writes for
 * the table against the night's data bytes (≤ 1 %). The publish measured is a full conversion of the
 * night, not the reuse path a quiet night takes in the pipeline (bench/nights.bench.ts has that).
 *
 * `npm run bench -- iceberg`
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPartWriter, publishSnapshot, type Manifest } from '../src/output/index.js';
import { commitSnapshot, rebuildTables } from '../src/output/iceberg/index.js';
import { LocalStorage } from '../src/output/storage/local-storage.js';
import type { PartPointer } from '../src/types.js';
import { syntheticFactRow } from '../test/helpers/synthetic-rows.js';
import { benchCompany } from './support/fact-snapshot.js';
import type { BenchResult } from './support/types.js';

const COMPANIES = Number(process.env.ICEBERG_BENCH_COMPANIES ?? 109);
const ROWS = Number(process.env.ICEBERG_BENCH_ROWS ?? 5000);
const RETAINED = 30;

/** The first night, written and published for real; its publish time. */
async function publishFirst(root: string): Promise<{ manifest: Manifest; ms: number }> {
  const t0 = performance.now();
  const parts: PartPointer[] = [];
  for (let p = 0; p < COMPANIES; p++) {
    const company = benchCompany(p);
    const w = createPartWriter({
      root,
      snapshotId: 'ice-00',
      dataset: 'facts_full',
      ticker: company.ticker,
      lineage: {
        snapshotId: 'ice-00',
        fetchedAt: '2025-10-01T00:00:00.000Z',
        requestedTicker: company.ticker,
      },
    });
    for (let i = 0; i < ROWS; i++) {
      const wait = w.write(syntheticFactRow(p * ROWS + i, company));
      if (wait) await wait;
    }
    parts.push({ dataset: 'facts_full', ticker: company.ticker, status: 'done', ...(await w.finish()) });
  }
  const manifest = await publishSnapshot({
    root,
    snapshotId: 'ice-00',
    snapshotDate: '2025-10-01',
    formats: ['parquet'],
    parts,
  });
  return { manifest, ms: performance.now() - t0 };
}

/** A quiet night `n`: the first night's files linked under its own id and date, then published. */
async function quietNight(storage: LocalStorage, first: Manifest, n: number): Promise<Manifest> {
  const id = `ice-${String(n).padStart(2, '0')}`;
  const day = new Date(Date.parse('2025-10-01T00:00:00Z') + n * 86_400_000);
  const date = day.toISOString().slice(0, 10);
  const path = (p: string): string =>
    p.replace(
      `snapshot_date=${first.snapshot_date}/snapshot_id=${first.snapshot_id}/`,
      `snapshot_date=${date}/snapshot_id=${id}/`,
    );
  for (const f of first.files) await storage.copy(f.path, path(f.path));
  const m: Manifest = {
    ...first,
    snapshot_id: id,
    snapshot_date: date,
    // After the first night's real publish (now), in night order.
    published_at: new Date(Date.parse(first.published_at) + n * 60_000).toISOString(),
    files: first.files.map((f) => ({ ...f, path: path(f.path) })),
  };
  await storage.putBytes(`_snapshots/${id}/manifest.json`, `${JSON.stringify(m)}\n`);
  await storage.putBytes(`_snapshots/${id}/_SUCCESS`, '');
  return m;
}

const bytesUnder = async (storage: LocalStorage, prefix: string): Promise<Map<string, number>> =>
  new Map((await storage.list(prefix)).map((o) => [o.key, o.bytes]));

export async function run(): Promise<BenchResult[]> {
  const root = await mkdtemp(join(tmpdir(), 'fx-bench-iceberg-'));
  const storage = new LocalStorage(root);
  try {
    const { manifest: first, ms: publishMs } = await publishFirst(root);
    for (let n = 1; n < RETAINED; n++) await quietNight(storage, first, n);

    const t0 = performance.now();
    const rebuilt = await rebuildTables(storage);
    const rebuildMs = performance.now() - t0;
    const metadataFiles = (await storage.list('facts_full/metadata/')).length;

    const quiet = await quietNight(storage, first, RETAINED);
    const before = await bytesUnder(storage, 'facts_full/metadata/');
    const t1 = performance.now();
    const outcome = await commitSnapshot(storage, quiet);
    const commitMs = performance.now() - t1;
    if (outcome.some((c) => c.outcome !== 'committed'))
      throw new Error(`the quiet night was not committed: ${JSON.stringify(outcome)}`);
    const after = await bytesUnder(storage, 'facts_full/metadata/');
    const written = [...after].filter(([k, b]) => before.get(k) !== b).reduce((s, [, b]) => s + b, 0);
    const dataBytes = quiet.files.reduce((s, f) => s + f.bytes, 0);
    const note = `${COMPANIES} companies × ${ROWS} facts, ${quiet.files.length} Parquet files, ${dataBytes.toLocaleString('en-US')} bytes`;
    const timeRatio = commitMs / publishMs;
    const byteRatio = written / dataBytes;
    return [
      {
        group: 'iceberg',
        name: 'quiet night: commit time / publish time',
        value: Number(timeRatio.toFixed(4)),
        unit: 'ratio',
        target: '<= 0.02',
        ok: timeRatio <= 0.02,
        note: `commit ${commitMs.toFixed(0)} ms on a table of ${RETAINED} snapshots, publish ${publishMs.toFixed(0)} ms (a full conversion); ${note}`,
      },
      {
        group: 'iceberg',
        name: 'quiet night: bytes written for the table / data bytes',
        value: Number(byteRatio.toFixed(4)),
        unit: 'ratio',
        target: '<= 0.01',
        ok: byteRatio <= 0.01,
        note: `${written.toLocaleString('en-US')} bytes of metadata; ${note}`,
      },
      {
        group: 'iceberg',
        name: `iceberg rebuild over ${rebuilt.snapshots.length} retained snapshots`,
        value: Math.round(rebuildMs),
        unit: 'ms',
        note: `${metadataFiles} metadata files left in facts_full/metadata/; ${note}`,
      },
    ];
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
