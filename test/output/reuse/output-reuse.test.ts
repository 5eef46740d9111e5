/**
 * Publishing with reuse of an earlier snapshot's files, through the real output ports, on a local
 * root and on the S3-compatible server (s3rver): files holding only reused companies keep their
 * bytes (a hard link; a server-side copy), the file holding a fetched company is rebuilt from the
 * source Parquet plus the fetched rows, the rows equal a full publish of the same parts, verify
 * proves the reused files, pruning the source leaves the reuser whole, and a source file removed
 * or altered after its parts were decided fails the publish (retryable) instead of publishing short.
 */
import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FilingsExportError } from '../../../src/errors.js';
import type { DuckSession } from '../../../src/output/convert/duckdb.js';
import type { Manifest } from '../../../src/output/catalog/manifest.js';
import { applyPrune, listForPrune, planPrune } from '../../../src/output/readers/retention.js';
import { LocalStorage } from '../../../src/output/storage/local-storage.js';
import type { Storage } from '../../../src/output/storage/storage.js';
import { copySnapshotToLocal, readStoredManifest } from '../../../src/output/catalog/stored-snapshots.js';
import { formatVerifyReport, verifySnapshot } from '../../../src/output/readers/verify.js';
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

const COMPANIES: SyntheticCompanyPart[] = ['AAA', 'BBB', 'CCC', 'DDD', 'EEE', 'FFF'].map((t, i) => ({
  ticker: t,
  cik: String(1000 + i),
  rows: 600,
}));
/** Small files: several per snapshot, so some hold only unchanged companies. */
const TARGET = 24 * 1024;
const date = '2026-11-20';

let fixture: PublishFixture | undefined;
let s3: TestS3;
let duck: DuckSession;
let tmp: string;

beforeAll(async () => {
  fixture = await openPublishFixture('reuse');
  ({ s3, duck, tmp } = fixture);
});
afterAll(() => fixture?.close());

function publish(ports: OutputPorts, root: string, id: string, parts: PartPointer[]): Promise<void> {
  return publishFactParts(ports, { root, id, date }, parts);
}

/** CCC filed: its rows move; every other company is reused from `from`'s files. */
async function secondNight(
  ports: OutputPorts,
  root: string,
  id: string,
  from: string,
): Promise<PartPointer[]> {
  const changed = COMPANIES.find((c) => c.ticker === 'CCC')!;
  const [fetched] = await stageFactParts(ports, { root, id, date }, [
    { ...changed, rows: 650, firstRow: 40 },
  ]);
  return COMPANIES.map((c) =>
    c.ticker === 'CCC'
      ? fetched!
      : { dataset: 'facts_core', ticker: c.ticker, status: 'done', rows: c.rows, bytes: 0, reusedFrom: from },
  );
}

async function rowsOf(dir: string, id: string, format: 'parquet' | 'ndjson'): Promise<string[]> {
  const glob = `${dir}/facts_core/*/snapshot_id=${id}/*.${format === 'parquet' ? 'parquet' : 'ndjson.gz'}`;
  const read =
    format === 'parquet'
      ? `read_parquet('${glob}', hive_partitioning = false)`
      : `read_json('${glob}', format = 'newline_delimited', hive_partitioning = false)`;
  const rows = await duck.all(`SELECT _requested_ticker || '|' || fact_key AS k FROM ${read} ORDER BY ALL`);
  return rows.map((r) => String(r.k));
}

function expectReuse(first: Manifest, second: Manifest): void {
  const parquet = second.files.filter((f) => f.format === 'parquet');
  const whole = parquet.filter((f) => f.reused_from !== undefined);
  const rebuilt = parquet.filter((f) => f.reused_from === undefined);
  expect(whole.length).toBeGreaterThan(0);
  for (const f of whole) {
    expect(f.companies!.every((c) => c.ticker !== 'CCC')).toBe(true);
    const src = first.files.find((g) => g.path === f.reused_from!.path)!;
    expect(f.sha256).toBe(src.sha256);
    expect(f.companies).toEqual(src.companies);
  }
  // Only the files around CCC are written anew; the rest keep their bytes.
  expect(rebuilt.some((f) => f.companies!.some((c) => c.ticker === 'CCC'))).toBe(true);
  expect(whole.reduce((n, f) => n + f.rows, 0)).toBeGreaterThan(rebuilt.reduce((n, f) => n + f.rows, 0));
  // Within a file rows go company by company; files are named in the order of their first company.
  for (const f of parquet) {
    const t = f.companies!.map((c) => c.ticker);
    expect(t).toEqual([...t].sort());
  }
  const firsts = parquet.map((f) => f.companies![0]!.ticker);
  expect(firsts).toEqual([...firsts].sort());
  expect(second.parts.every((p) => p.archive === undefined)).toBe(true);
}

describe('publishing with reuse, local root', () => {
  it('hard-links whole files, rebuilds the changed one, equals a full publish, survives pruning the source', async () => {
    const root = join(tmp, 'local');
    const ports = await outputPorts({ targetFileBytes: TARGET, rowGroupRows: 128 });
    await publish(ports, root, 'r1', await stageFactParts(ports, { root, id: 'r1', date }, COMPANIES));
    const first = JSON.parse(await readFile(join(root, '_snapshots/r1/manifest.json'), 'utf8')) as Manifest;
    expect(first.files.filter((f) => f.format === 'parquet').length).toBeGreaterThan(2);
    expect(await stat(join(root, '_snapshots/r1/parts')).catch(() => null)).toBeNull();

    await publish(ports, root, 'r2', await secondNight(ports, root, 'r2', 'r1'));
    const second = JSON.parse(await readFile(join(root, '_snapshots/r2/manifest.json'), 'utf8')) as Manifest;
    expectReuse(first, second);
    for (const f of second.files.filter((g) => g.reused_from !== undefined))
      expect((await stat(join(root, f.path))).ino).toBe((await stat(join(root, f.reused_from!.path))).ino);

    // The same night published in full from staged rows: the same rows, in Parquet and NDJSON.
    const full = await stageFactParts(
      ports,
      { root, id: 'r2-full', date },
      COMPANIES.filter((c) => c.ticker !== 'CCC'),
    );
    const ccc = (await secondNight(ports, root, 'r2-full', 'r1')).find((p) => p.ticker === 'CCC')!;
    await publish(ports, root, 'r2-full', [...full, ccc]);
    const want = await rowsOf(root, 'r2-full', 'parquet');
    expect(want.length).toBe(5 * 600 + 650);
    expect(await rowsOf(root, 'r2', 'parquet')).toEqual(want);
    expect(await rowsOf(root, 'r2', 'ndjson')).toEqual(want);

    const sound = await verifySnapshot(root, 'r2');
    expect(sound.ok, formatVerifyReport(sound)).toBe(true);
    // A reused file altered in place (same size) is caught against its source's manifest.
    const victim = second.files.find((f) => f.reused_from !== undefined && f.format === 'parquet')!;
    const bytes = await readFile(join(root, victim.path));
    const flipped = Buffer.from(bytes);
    flipped[100] = flipped[100]! ^ 0xff;
    await rm(join(root, victim.path)); // a new inode: r1's file keeps its bytes
    await writeFile(join(root, victim.path), flipped);
    const caught = await verifySnapshot(root, 'r2');
    expect(caught.ok).toBe(false);
    expect(caught.files.find((f) => f.path === victim.path)?.problems.join('; ')).toMatch(
      /hashes [0-9a-f]{64}, not this file's/,
    );
    await writeFile(join(root, victim.path), bytes);

    // Pruning r1 (and r2-full) leaves r2 whole: its files are its own links, not references.
    const storage = new LocalStorage(root);
    const plan = planPrune(await listForPrune(storage), { keep: 1 } as Parameters<typeof planPrune>[1]);
    expect(plan.remove.map((a) => a.snapshotId).sort()).toContain('r1');
    await applyPrune(storage, { ...plan, remove: plan.remove.filter((a) => a.snapshotId === 'r1') });
    expect(await stat(join(root, '_snapshots/r1')).catch(() => null)).toBeNull();
    const after = await verifySnapshot(root, 'r2');
    expect(after.ok, formatVerifyReport(after)).toBe(true);
    expect(await rowsOf(root, 'r2', 'parquet')).toEqual(want);
  });

  it('copies the untouched row groups of a file whose middle company changed mid row group', async () => {
    const root = join(tmp, 'row-groups');
    const ports = await outputPorts({ targetFileBytes: 64 * 1024 * 1024, rowGroupRows: 2048 });
    // One file: AAA rows [0, 3000), BBB [3000, 5000), CCC [5000, 9000); BBB starts and ends mid group.
    const big: SyntheticCompanyPart[] = [
      { ticker: 'AAA', cik: '2001', rows: 3000 },
      { ticker: 'BBB', cik: '2002', rows: 2000 },
      { ticker: 'CCC', cik: '2003', rows: 4000 },
    ];
    await publish(ports, root, 'm1', await stageFactParts(ports, { root, id: 'm1', date }, big));
    const first = JSON.parse(await readFile(join(root, '_snapshots/m1/manifest.json'), 'utf8')) as Manifest;
    const source = first.files.filter((f) => f.format === 'parquet');
    expect(source).toHaveLength(1);
    const [fetched] = await stageFactParts(ports, { root, id: 'm2', date }, [
      { ...big[1]!, rows: 2100, firstRow: 40 },
    ]);
    const parts = big.map((c): PartPointer =>
      c.ticker === 'BBB'
        ? fetched!
        : {
            dataset: 'facts_core',
            ticker: c.ticker,
            status: 'done',
            rows: c.rows,
            bytes: 0,
            reusedFrom: 'm1',
          },
    );
    await publish(ports, root, 'm2', parts);
    const second = JSON.parse(await readFile(join(root, '_snapshots/m2/manifest.json'), 'utf8')) as Manifest;
    const rebuilt = second.files.find(
      (f) => f.format === 'parquet' && f.companies!.some((c) => c.ticker === 'AAA'),
    )!;
    expect(rebuilt.companies).toEqual([
      { ticker: 'AAA', first_row: 0, rows: 3000 },
      { ticker: 'CCC', first_row: 3000, rows: 4000 },
    ]);
    // The source's row groups inside AAA's and CCC's rows keep their rows (and bytes); only the two
    // BBB cuts are re-encoded, to their kept rows.
    const groups = async (path: string) =>
      (
        await duck.all(
          `SELECT DISTINCT row_group_id AS g, row_group_num_rows AS n, total_compressed_size AS size FROM parquet_metadata('${join(root, path)}') WHERE column_id = 0 ORDER BY g`,
        )
      ).map((r) => ({ n: Number(r.n), size: Number(r.size) }));
    const before = await groups(source[0]!.path);
    const starts = before.map((_, i) => before.slice(0, i).reduce((a, g) => a + g.n, 0));
    const expected = before.flatMap((g, i) => {
      const lo = Math.max(starts[i]!, 0);
      const hi = starts[i]! + g.n;
      const keep = (a: number, b: number) => Math.max(0, Math.min(hi, b) - Math.max(lo, a));
      const kept = [keep(0, 3000), keep(5000, 9000)].filter((n) => n > 0);
      // A group wholly kept stays as it was; a cut group gives one piece per kept side.
      return kept.length === 1 && kept[0] === g.n ? [g] : kept.map((n) => ({ n }));
    });
    const after = await groups(rebuilt.path);
    expect(after.map((g) => g.n)).toEqual(expected.map((g) => g.n));
    expect(after.length).toBeGreaterThan(Math.ceil(7000 / 2048)); // not re-encoded as one range
    for (const [i, g] of expected.entries()) if ('size' in g) expect(after[i]!.size).toBe(g.size);

    const full = await stageFactParts(
      ports,
      { root, id: 'm2-full', date },
      big.filter((c) => c.ticker !== 'BBB'),
    );
    const [bbb] = await stageFactParts(ports, { root, id: 'm2-full', date }, [
      { ...big[1]!, rows: 2100, firstRow: 40 },
    ]);
    await publish(ports, root, 'm2-full', [...full, bbb!]);
    expect(await rowsOf(root, 'm2', 'parquet')).toEqual(await rowsOf(root, 'm2-full', 'parquet'));
    expect(await rowsOf(root, 'm2', 'ndjson')).toEqual(await rowsOf(root, 'm2-full', 'parquet'));
    const sound = await verifySnapshot(root, 'm2');
    expect(sound.ok, formatVerifyReport(sound)).toBe(true);
  });

  it('fails, retryable, without publishing, when a source file is removed or altered after the parts were decided', async () => {
    const root = join(tmp, 'gone');
    const ports = await outputPorts({ targetFileBytes: TARGET, rowGroupRows: 128 });
    await publish(ports, root, 'g1', await stageFactParts(ports, { root, id: 'g1', date }, COMPANIES));
    const first = JSON.parse(await readFile(join(root, '_snapshots/g1/manifest.json'), 'utf8')) as Manifest;
    const holdingCcc = first.files.find(
      (f) => f.format === 'parquet' && f.companies!.some((c) => c.ticker === 'CCC'),
    )!;
    const other = first.files.find(
      (f) => f.format === 'parquet' && f.companies!.every((c) => c.ticker !== 'CCC'),
    )!;

    // Removed: a file that would be reused whole.
    await rm(join(root, other.path));
    const err = await publish(ports, root, 'g2', await secondNight(ports, root, 'g2', 'g1')).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(FilingsExportError);
    expect(err).toMatchObject({ code: 'REUSE_SOURCE_CHANGED', retryable: true });
    expect((err as Error).message).toMatch(/is missing; nothing was published: retry the snapshot/);
    expect(await stat(join(root, '_snapshots/g2/_SUCCESS')).catch(() => null)).toBeNull();

    // Altered in place, same size: the rebuilt file's source fails its checksum.
    const bytes = await readFile(join(root, holdingCcc.path));
    bytes[bytes.length - 20] = bytes[bytes.length - 20]! ^ 0xff;
    await writeFile(join(root, holdingCcc.path), bytes);
    await writeFile(join(root, other.path), 'x'); // back, but the wrong size
    const again = await publish(ports, root, 'g3', await secondNight(ports, root, 'g3', 'g1')).catch(
      (e: unknown) => e,
    );
    expect(again).toMatchObject({ code: 'REUSE_SOURCE_CHANGED' });
    expect(await stat(join(root, '_snapshots/g3/_SUCCESS')).catch(() => null)).toBeNull();
  });
});

describe('publishing with reuse, S3-compatible bucket', () => {
  it('copies whole files server-side, rebuilds the changed one, and refuses a removed source', async () => {
    const root = `s3://${s3.bucket}/out`;
    const storageFor = (r: string): Storage => openTestStorage(s3.endpoint, r);
    const ports = await outputPorts({
      openStorage: storageFor,
      tmpDir: tmp,
      targetFileBytes: TARGET,
      rowGroupRows: 128,
    });
    const storage = storageFor(root);
    try {
      await publish(ports, root, 'b1', await stageFactParts(ports, { root, id: 'b1', date }, COMPANIES));
      const first = await readStoredManifest(storage, 'b1');
      await publish(ports, root, 'b2', await secondNight(ports, root, 'b2', 'b1'));
      const second = await readStoredManifest(storage, 'b2');
      expectReuse(first, second);

      const local = join(tmp, 'from-bucket');
      await copySnapshotToLocal(storage, 'b2', local, { data: true });
      const report = await verifySnapshot(local, 'b2');
      expect(report.ok, formatVerifyReport(report)).toBe(true);
      const fullRoot = join(tmp, 'bucket-full');
      const localPorts = await outputPorts({ targetFileBytes: TARGET, rowGroupRows: 128 });
      const full = await stageFactParts(
        localPorts,
        { root: fullRoot, id: 'f', date },
        COMPANIES.filter((c) => c.ticker !== 'CCC'),
      );
      const ccc = (await secondNight(localPorts, fullRoot, 'f', 'x')).find((p) => p.ticker === 'CCC')!;
      await publish(localPorts, fullRoot, 'f', [...full, ccc]);
      expect(await rowsOf(local, 'b2', 'parquet')).toEqual(await rowsOf(fullRoot, 'f', 'parquet'));

      // A source object removed behind the exporter's back: never published short.
      const whole = second.files.find((f) => f.reused_from !== undefined)!;
      await storage.delete([whole.path]);
      const err = await publish(ports, root, 'b3', await secondNight(ports, root, 'b3', 'b2')).catch(
        (e: unknown) => e,
      );
      expect(err).toMatchObject({ code: 'REUSE_SOURCE_CHANGED', retryable: true });
      expect(await storage.head('_snapshots/b3/_SUCCESS')).toBeNull();
    } finally {
      await storage.close();
      await ports.closeOutput();
    }
  });
});
