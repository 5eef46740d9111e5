/**
 * Small reused files packed together (reuse-plan.ts packSmall, reused-files.ts packedUnit): nights
 * that each fetch one company leave files near the target instead of one small file per night, on
 * a local root and on the S3-compatible server (s3rver). A packed file is new bytes copied from its
 * sources (Parquet row groups whole, NDJSON.gz members end to end): its footer's row groups are its
 * sources', DuckDB reads the same rows as a full publish (DECIMAL(38,0) beyond a double included),
 * verify passes, and pruning the nights it came from breaks nothing. Footers that cannot be joined
 * fall back to reusing the files whole.
 */
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { inflateRawSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DuckSession } from '../../../src/output/convert/duckdb.js';
import type { Manifest, ManifestFile } from '../../../src/output/catalog/manifest.js';
import { copySnapshotToLocal, readStoredManifest } from '../../../src/output/catalog/stored-snapshots.js';
import {
  packSmall,
  PACK_BUDGET_SHARE,
  SMALL_FILE_SHARE,
  type ReuseSource,
  type WholeFile,
} from '../../../src/output/publish/reuse-plan.js';
import { packedUnits } from '../../../src/output/publish/reused-files.js';
import { applyPrune, listForPrune, planPrune } from '../../../src/output/readers/retention.js';
import { formatVerifyReport, verifySnapshot } from '../../../src/output/readers/verify.js';
import { hashFile } from '../../../src/output/storage/fs-util.js';
import { LocalStorage } from '../../../src/output/storage/local-storage.js';
import type { Storage } from '../../../src/output/storage/storage.js';
import { outputPorts } from '../../../src/pipeline/output-adapter.js';
import type { PartPointer } from '../../../src/types.js';
import { openTestStorage, type TestS3 } from '../../helpers/s3.js';
import {
  openPublishFixture,
  publishFactParts,
  type OutputPorts,
  type PublishFixture,
  stageFactParts,
  type SyntheticCompanyPart,
} from '../../helpers/synthetic-snapshot.js';

/**
 * 60 companies of 150 rows: a one-company file is well under half the target, a full file holds
 * about three, and 5 % of the bytes reused whole (the packing budget) takes two small files.
 */
const COMPANIES: SyntheticCompanyPart[] = Array.from({ length: 60 }, (_, i) => ({
  ticker: `C${String(i).padStart(2, '0')}`,
  cik: String(3000 + i),
  rows: 150,
}));
const TARGET = 48 * 1024;
const date = '2026-11-20';

let fixture: PublishFixture | undefined;
let s3: TestS3;
let duck: DuckSession;
let tmp: string;

beforeAll(async () => {
  fixture = await openPublishFixture('pack');
  ({ s3, duck, tmp } = fixture);
});
afterAll(() => fixture?.close());
type Latest = Map<string, SyntheticCompanyPart>;

/** One night fetching `ticker` anew (more rows, shifted); every other company reused from `from`. */
async function oneCompanyNight(
  ports: OutputPorts,
  root: string,
  id: string,
  from: string,
  ticker: string,
  latest: Latest,
  night: number,
): Promise<void> {
  const changed = { ...latest.get(ticker)!, rows: 150 + night, firstRow: 10 * night };
  latest.set(ticker, changed);
  const [fetched] = await stageFactParts(ports, { root, id, date }, [changed]);
  const parts = COMPANIES.map((c): PartPointer =>
    c.ticker === ticker
      ? fetched!
      : {
          dataset: 'facts_core',
          ticker: c.ticker,
          status: 'done',
          rows: latest.get(c.ticker)!.rows,
          bytes: 0,
          reusedFrom: from,
        },
  );
  await publishFactParts(ports, { root, id, date }, parts);
}

async function rowsOf(dir: string, id: string, format: 'parquet' | 'ndjson'): Promise<string[]> {
  const glob = `${dir}/facts_core/*/snapshot_id=${id}/*.${format === 'parquet' ? 'parquet' : 'ndjson.gz'}`;
  const read =
    format === 'parquet'
      ? `read_parquet('${glob}', hive_partitioning = false)`
      : `read_json('${glob}', format = 'newline_delimited', hive_partitioning = false, columns = {_requested_ticker: 'VARCHAR', fact_key: 'VARCHAR', value_scaled_int: 'DECIMAL(38,0)', scale: 'INTEGER'})`;
  const rows = await duck.all(
    `SELECT _requested_ticker || '|' || fact_key || '|' || CAST(value_scaled_int AS VARCHAR) || 'e' || scale AS k FROM ${read} ORDER BY ALL`,
  );
  return rows.map((r) => String(r.k));
}

const parquetOf = (m: Manifest): ManifestFile[] => m.files.filter((f) => f.format === 'parquet');

/** Gzip members in a file: DuckDB can drop a later one, so a packed NDJSON file must hold one. */
function gzipMembers(buf: Buffer): number {
  let members = 0;
  for (let at = 0; at < buf.length; members++) {
    // Our writers (zlib, DuckDB) write the 10-byte header without optional fields.
    const { engine } = inflateRawSync(buf.subarray(at + 10), { info: true }) as unknown as {
      engine: { bytesWritten: number };
    };
    at += 10 + engine.bytesWritten + 8;
  }
  return members;
}
const tickers = (f: ManifestFile): string[] => f.companies!.map((c) => c.ticker);
const small = (f: ManifestFile): boolean => f.bytes < SMALL_FILE_SHARE * TARGET;

/**
 * The previous night's files a file was packed from: two or more whole files whose companies,
 * one after another, are exactly its own (a rebuilt or fetched file never matches that way).
 */
function packedSources(prev: Manifest, f: ManifestFile): ManifestFile[] | undefined {
  if (f.reused_from !== undefined) return undefined;
  const want = tickers(f);
  const out: ManifestFile[] = [];
  let at = 0;
  for (const g of parquetOf(prev)) {
    const t = tickers(g);
    if (t.join() === want.slice(at, at + t.length).join() && g.rows === sumRows(f, at, t.length)) {
      out.push(g);
      at += t.length;
    }
  }
  return at === want.length && out.length > 1 ? out : undefined;
}

function sumRows(f: ManifestFile, from: number, n: number): number {
  return f.companies!.slice(from, from + n).reduce((s, c) => s + c.rows, 0);
}

/** Per row group and column: rows, sizes, encodings and statistics (not the offsets). */
async function footerOf(path: string): Promise<string[]> {
  const rows = await duck.all(
    `SELECT row_group_num_rows AS n, column_id AS c, total_compressed_size AS size, encodings AS enc, stats_min_value AS lo, stats_max_value AS hi, stats_null_count AS nulls FROM parquet_metadata('${path}') ORDER BY row_group_id, column_id`,
  );
  return rows.map((r) => JSON.stringify(r, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v)));
}

/**
 * Runs the nights on `root` (local or bucket), reads each manifest, and returns them in order,
 * with the final state of every company.
 */
async function runNights(
  ports: OutputPorts,
  root: string,
  prefix: string,
  fetchOrder: readonly string[],
  read: (id: string) => Promise<Manifest>,
): Promise<{ manifests: Manifest[]; latest: Latest }> {
  const latest: Latest = new Map(COMPANIES.map((c) => [c.ticker, c]));
  const first = `${prefix}0`;
  await publishFactParts(
    ports,
    { root, id: first, date },
    await stageFactParts(ports, { root, id: first, date }, COMPANIES),
  );
  const manifests = [await read(first)];
  for (const [i, ticker] of fetchOrder.entries()) {
    const id = `${prefix}${i + 1}`;
    await oneCompanyNight(ports, root, id, `${prefix}${i}`, ticker, latest, i + 1);
    manifests.push(await read(id));
  }
  return { manifests, latest };
}

/** What the nights must show, whatever the root. */
function expectPacked(manifests: readonly Manifest[], fetchOrder: readonly string[]): void {
  let packedNights = 0;
  for (const [n, m] of manifests.entries()) {
    if (n === 0) continue;
    const prev = manifests[n - 1]!;
    const packed = parquetOf(m).filter((f) => packedSources(prev, f) !== undefined);
    if (packed.length > 0) packedNights++;
    for (const f of packed) {
      expect(f.reused_from).toBeUndefined();
      expect(tickers(f)).not.toContain(fetchOrder[n - 1]);
      expect(f.bytes).toBeLessThanOrEqual(TARGET * 1.05);
      for (const g of packedSources(prev, f)!) expect(small(g)).toBe(true);
    }
    // Bytes packing copied (both formats) stay within the night's budget.
    const packedPaths = new Set(packed.map((f) => f.path.replace(/\.parquet$/, '')));
    const copied = m.files
      .filter((f) => packedPaths.has(f.path.replace(/\.(parquet|ndjson\.gz)$/, '')))
      .reduce((s, f) => s + f.bytes, 0);
    const published = m.files.reduce((s, f) => s + f.bytes, 0);
    expect(copied).toBeLessThanOrEqual(PACK_BUDGET_SHARE * published);
  }
  expect(packedNights).toBeGreaterThan(1);
  // One small file per night without packing; with it, at most the packing tail and tonight's.
  const last = manifests[manifests.length - 1]!;
  const smallFiles = parquetOf(last).filter(small);
  expect(smallFiles.length).toBeLessThanOrEqual(2);
  expect(fetchOrder.length).toBeGreaterThan(smallFiles.length + 2);
}

async function fullPublishOf(ports: OutputPorts, root: string, id: string, latest: Latest): Promise<void> {
  const parts = await stageFactParts(ports, { root, id, date }, [...latest.values()]);
  await publishFactParts(ports, { root, id, date }, parts);
}

const FETCH = ['C05', 'C13', 'C21', 'C29', 'C37', 'C09', 'C17'];

describe('packing small reused files, local root', () => {
  it('packs the nights’ one-company files into files near the target, rows equal a full publish, prune-safe', async () => {
    const root = join(tmp, 'local');
    const ports = await outputPorts({ targetFileBytes: TARGET, rowGroupRows: 64 });
    const readLocal = async (id: string): Promise<Manifest> =>
      JSON.parse(await readFile(join(root, '_snapshots', id, 'manifest.json'), 'utf8')) as Manifest;
    const { manifests, latest } = await runNights(ports, root, 'n', FETCH, readLocal);
    expectPacked(manifests, FETCH);

    // A packed file's footer lists its sources' row groups, unchanged but for their offsets.
    let checked = 0;
    for (const [n, m] of manifests.entries())
      for (const f of n === 0 ? [] : parquetOf(m)) {
        const sources = packedSources(manifests[n - 1]!, f);
        if (sources === undefined) continue;
        const want: string[] = [];
        for (const g of sources) want.push(...(await footerOf(join(root, g.path))));
        expect(await footerOf(join(root, f.path))).toEqual(want);
        checked++;
      }
    expect(checked).toBeGreaterThan(0);

    const lastId = `n${FETCH.length}`;
    await fullPublishOf(ports, root, 'full', latest);
    const want = await rowsOf(root, 'full', 'parquet');
    expect(want.length).toBe([...latest.values()].reduce((s, c) => s + c.rows, 0));
    expect(await rowsOf(root, lastId, 'parquet')).toEqual(want);
    expect(await rowsOf(root, lastId, 'ndjson')).toEqual(want);
    let packedNdjson = 0;
    for (const [n, m] of manifests.entries())
      for (const f of n === 0 ? [] : parquetOf(m))
        if (packedSources(manifests[n - 1]!, f) !== undefined) {
          packedNdjson++;
          expect(gzipMembers(await readFile(join(root, f.path.replace(/\.parquet$/, '.ndjson.gz'))))).toBe(1);
        }
    expect(packedNdjson).toBeGreaterThan(0);
    // Beyond a double: the identity value_num = value_scaled_int x 10^scale is checked by verify.
    expect(want.some((k) => /\|\d{17,}e/.test(k))).toBe(true);
    const report = await verifySnapshot(root, lastId);
    expect(report.ok, formatVerifyReport(report)).toBe(true);

    // Pruning every earlier night leaves the last one whole.
    const storage = new LocalStorage(root);
    const plan = planPrune(await listForPrune(storage), { keep: 1 } as Parameters<typeof planPrune>[1]);
    const earlier = plan.remove.filter((a) => a.snapshotId !== lastId && a.snapshotId !== 'full');
    expect(earlier.length).toBe(FETCH.length);
    await applyPrune(storage, { ...plan, remove: earlier });
    expect(await stat(join(root, '_snapshots/n0')).catch(() => null)).toBeNull();
    const after = await verifySnapshot(root, lastId);
    expect(after.ok, formatVerifyReport(after)).toBe(true);
    expect(await rowsOf(root, lastId, 'parquet')).toEqual(want);

    // verify proves each file's companies: a manifest moving rows between two companies is caught.
    const manifestPath = join(root, '_snapshots', lastId, 'manifest.json');
    const text = await readFile(manifestPath, 'utf8');
    const bent = JSON.parse(text) as Manifest;
    const two = bent.files.find((f) => f.format === 'parquet' && f.companies!.length > 1)!;
    const [a, b] = two.companies!;
    a!.rows -= 1;
    b!.first_row -= 1;
    b!.rows += 1;
    await writeFile(manifestPath, JSON.stringify(bent));
    const caught = await verifySnapshot(root, lastId);
    expect(caught.files.find((f) => f.path === two.path)?.problems).toEqual([
      `${a!.ticker} holds ${a!.rows + 1} rows, its companies entry says ${a!.rows}`,
      `${b!.ticker} holds ${b!.rows - 1} rows, its companies entry says ${b!.rows}`,
    ]);
    await writeFile(manifestPath, text);
    await ports.closeOutput();
  });

  it('reuses small files whole when their Parquet footers cannot be concatenated', async () => {
    const dir = join(tmp, 'footers');
    await mkdir(dir, { recursive: true });
    const write = async (name: string, from: number, kv: string): Promise<ManifestFile[]> => {
      const path = join(dir, `${name}.parquet`);
      await duck.run(
        `COPY (SELECT CAST(i AS BIGINT) AS n, 'T${from}' AS _requested_ticker FROM range(${from}, ${from + 10}) t(i)) TO '${path}' (FORMAT parquet${kv})`,
      );
      // The packing hashes what it reads against these (checkedSources).
      const { bytes, sha256 } = await hashFile(path);
      return [{ path: `${name}.parquet`, dataset: 'facts_core', format: 'parquet', rows: 10, bytes, sha256 }];
    };
    const w = (files: ManifestFile[], t: string): WholeFile => ({
      files,
      companies: [{ ticker: t, first_row: 0, rows: 10 }],
    });
    const placed: string[] = [];
    const source: ReuseSource = {
      manifest: { snapshot_id: 's1' } as Manifest,
      placeWhole: (f) => (placed.push(f.path), Promise.resolve(false)),
      readable: (f) => Promise.resolve(join(dir, f.path)),
    };
    const same = [w(await write('a', 0, ''), 'A'), w(await write('b', 10, ''), 'B')];
    const other = [
      w(await write('c', 20, ''), 'C'),
      w(await write('d', 30, ", KV_METADATA {writer: 'older'}"), 'D'),
    ];
    const out = join(dir, 'build');
    const units = await packedUnits(source, { whole: [], packed: [same, other] }, ['parquet'], out);
    // The compatible pair is one new file; the other two are placed whole, as before packing.
    expect(units).toHaveLength(3);
    expect(units[0]!.files[0]).toMatchObject({
      name: 'packed-0.parquet',
      rows: 20,
      companies: [
        { ticker: 'A', first_row: 0, rows: 10 },
        { ticker: 'B', first_row: 10, rows: 10 },
      ],
    });
    expect(units[0]!.files[0]!.reused_from).toBeUndefined();
    const got = await duck.all(`SELECT n FROM read_parquet('${join(out, 'packed-0.parquet')}') ORDER BY ALL`);
    expect(got.map((r) => Number(r.n))).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(units.slice(1).map((u) => u.files[0]!.reused_from?.path)).toEqual(['c.parquet', 'd.parquet']);
    expect(placed).toEqual(['c.parquet', 'd.parquet']);
    expect(await stat(join(out, 'packed-1.parquet')).catch(() => null)).toBeNull();
  });

  it('packs only small files, within the target and the night’s byte budget', () => {
    const file = (name: string, bytes: number): WholeFile => ({
      files: [
        { path: `${name}.parquet`, dataset: 'facts_core', format: 'parquet', rows: 1, bytes, sha256: '' },
      ],
      companies: [{ ticker: name, first_row: 0, rows: 1 }],
    });
    const names = (ws: readonly WholeFile[]): string[] => ws.map((x) => x.companies[0]!.ticker);
    // Big files (half the target or more) stay whole and do not split a run of small ones.
    const mixed = [file('a', 100), file('B', 5000), file('c', 100), file('d', 100), file('E', 900)];
    const p = packSmall(mixed, 1000);
    expect(p.packed.map(names)).toEqual([['a', 'c', 'd']]);
    expect(names(p.whole)).toEqual(['B', 'E']);
    // Groups close before passing the target; a group of one stays whole.
    const run = Array.from({ length: 7 }, (_, i) => file(`s${i}`, 300));
    const q = packSmall([...run, file('BIG', 100_000)], 1000);
    expect(q.packed.map(names)).toEqual([
      ['s0', 's1', 's2'],
      ['s3', 's4', 's5'],
    ]);
    expect(names(q.whole)).toEqual(['BIG', 's6']);
    // Without big files around, the budget (a share of the bytes reused whole) bounds the copying.
    const r = packSmall(run, 1000);
    const copied = r.packed.flat().reduce((s, x) => s + x.files[0]!.bytes, 0);
    expect(copied).toBeLessThanOrEqual(PACK_BUDGET_SHARE * 7 * 300);
    expect(r.packed).toEqual([]);
    expect(r.whole).toHaveLength(7);
  });
});

describe('packing small reused files, S3-compatible bucket', () => {
  it('packs the one-company files into new objects, rows equal a full publish, verify passes', async () => {
    const root = `s3://${s3.bucket}/out`;
    const storageFor = (r: string): Storage => openTestStorage(s3.endpoint, r);
    const ports = await outputPorts({
      openStorage: storageFor,
      tmpDir: tmp,
      targetFileBytes: TARGET,
      rowGroupRows: 64,
    });
    const storage = storageFor(root);
    const fetch = FETCH.slice(0, 5);
    try {
      const { manifests, latest } = await runNights(ports, root, 'b', fetch, (id) =>
        readStoredManifest(storage, id),
      );
      expectPacked(manifests, fetch);
      const lastId = `b${fetch.length}`;
      const local = join(tmp, 'from-bucket');
      await copySnapshotToLocal(storage, lastId, local, { data: true });
      const report = await verifySnapshot(local, lastId);
      expect(report.ok, formatVerifyReport(report)).toBe(true);
      const fullRoot = join(tmp, 'bucket-full');
      const localPorts = await outputPorts({ targetFileBytes: TARGET, rowGroupRows: 64 });
      await fullPublishOf(localPorts, fullRoot, 'f', latest);
      const want = await rowsOf(fullRoot, 'f', 'parquet');
      expect(await rowsOf(local, lastId, 'parquet')).toEqual(want);
      expect(await rowsOf(local, lastId, 'ndjson')).toEqual(want);
      await localPorts.closeOutput();
    } finally {
      await storage.close();
      await ports.closeOutput();
    }
  });
});
