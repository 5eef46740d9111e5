/**
 * Memory of one process running every role (`run --local`): DuckDB's conversions there hand freed
 * memory back at once (DuckDbOptions.releaseFreedMemory), decided by sharesProcess, and the
 * published files are byte for byte those of a separate publishing worker. Real DuckDB, real files.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDuck, RELEASE_FREED_THRESHOLD } from '../../src/output/convert/duckdb.js';
import type { Manifest } from '../../src/output/catalog/manifest.js';
import { sharesProcess } from '../../src/pipeline/exporter.js';
import { outputPorts } from '../../src/pipeline/output-adapter.js';
import { publishFactParts, stageFactParts } from '../helpers/synthetic-snapshot.js';

const roots: string[] = [];
afterAll(async () => {
  await Promise.all(roots.map((r) => rm(r, { recursive: true, force: true })));
});

/** DuckDB's bulk-deallocation flush threshold of a session opened with `release`. */
async function flushThreshold(release: boolean | undefined): Promise<string> {
  const duck = await openDuck({
    threads: 1,
    ...(release !== undefined ? { releaseFreedMemory: release } : {}),
  });
  try {
    const rows = await duck.all("SELECT current_setting('allocator_bulk_deallocation_flush_threshold') AS v");
    return String(rows[0]?.v);
  } finally {
    duck.close();
  }
}

describe('one process, every role', () => {
  it("releaseFreedMemory lowers DuckDB's bulk-deallocation flush threshold; the default keeps DuckDB's own", async () => {
    expect(RELEASE_FREED_THRESHOLD).toBe('1MiB');
    expect(await flushThreshold(true)).toBe('1.0 MiB');
    expect(await flushThreshold(undefined)).toBe('512.0 MiB');
    expect(await flushThreshold(false)).toBe('512.0 MiB');
  });

  it('sharesProcess: both roles here (the default, run --local, a worker without --only), not one of them', () => {
    expect(sharesProcess(undefined)).toBe(true);
    expect(sharesProcess({})).toBe(true);
    expect(sharesProcess({ parts: true, control: true })).toBe(true);
    expect(sharesProcess({ parts: true, control: false })).toBe(false);
    expect(sharesProcess({ parts: false, control: true })).toBe(false);
    expect(sharesProcess({ control: false })).toBe(false);
  });

  it('publishes the same bytes with freed memory released at once as without', async () => {
    const shaOf = async (release: boolean): Promise<Record<string, string>> => {
      const root = await mkdtemp(join(tmpdir(), 'fx-one-process-'));
      roots.push(root);
      const ports = await outputPorts({ rowGroupRows: 2048, releaseFreedMemory: release });
      const at = { root, id: 'snap-1', date: '2026-11-26' };
      const parts = await stageFactParts(ports, at, [
        { ticker: 'AAA', cik: '0000000001', rows: 9000 },
        { ticker: 'BBB', cik: '0000000002', rows: 3000 },
      ]);
      await publishFactParts(ports, at, parts);
      await ports.closeOutput();
      const manifest = JSON.parse(
        await readFile(join(root, '_snapshots', at.id, 'manifest.json'), 'utf8'),
      ) as Manifest;
      expect(manifest.files.filter((f) => f.format === 'parquet').length).toBeGreaterThan(0);
      return Object.fromEntries(manifest.files.map((f) => [f.path, f.sha256]));
    };
    const released = await shaOf(true);
    expect(released).toEqual(await shaOf(false));
  });
});
