/**
 * A DuckDB session spills where it is told even when that folder's parent does not exist yet.
 * Publish gives its lanes and its `changes` session folders inside the main session's, which
 * DuckDB creates only on its own first spill: at 1,000,000 facts the `changes` of an incremental
 * night spilled first and failed ("Failed to create directory"), so the night published without
 * its changes and the warehouse loaded it in full. Real DuckDB, a sort past its memory limit.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDuck } from '../../src/output/convert/duckdb.js';

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'fx-duck-spill-'));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe('a DuckDB session over its memory limit', () => {
  it('spills into a folder whose parents do not exist yet', async () => {
    const spill = join(tmp, '_duckdb_tmp', 'changes');
    const duck = await openDuck({ tempDirectory: spill, threads: 1, memoryLimit: '64MB' });
    let spilled: string[] = [];
    try {
      // ~130 MB of sort keys under a 64 MB limit: the sort must spill to finish.
      const sorted = duck.all(
        `SELECT count(*) AS n, count(DISTINCT s) AS d FROM (SELECT md5(i::VARCHAR) || md5((i + 1)::VARCHAR) AS s FROM range(2000000) t(i) ORDER BY s)`,
      );
      const watch = setInterval(() => {
        readdir(spill).then(
          (names) => (spilled = names.length > 0 ? names : spilled),
          () => undefined,
        );
      }, 20);
      try {
        expect(await sorted).toEqual([{ n: '2000000', d: '2000000' }]);
      } finally {
        clearInterval(watch);
      }
    } finally {
      duck.close();
    }
    // It did spill there (else the test proves nothing about the folder).
    expect(spilled.length).toBeGreaterThan(0);
  });
});
